// Softmax -> oneDNN softmax on the plain tensor, as [outer, len, inner]; along an axis
// other than the innermost, vinfer's strided kernel.
#include <algorithm>
#include <cmath>

#include "cpu/cpu_op.hpp"
#include "graph/op_params.hpp"

namespace vinfer::cpu {

namespace {

// Softmax along an axis that is not the innermost (YOLO's box distribution:
// 16 bins along axis 1 of [1, 16, 4, 8400]), for which oneDNN has only its
// reference kernel: each run of contiguous positions past the axis is taken
// as a vector, the axis walked with a stride.
class StridedSoftmaxOp : public CpuOp {
 public:
  explicit StridedSoftmaxOp(const detail::SoftmaxExtent& e) : e_(e) {}
  void execute(dnnl::stream&) override {
    const auto* x = static_cast<const float*>(args.at(DNNL_ARG_SRC).get_data_handle());
    auto* y = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
    constexpr std::int64_t kRun = 256;
    const std::int64_t runs = (e_.inner + kRun - 1) / kRun, len = e_.len, inner = e_.inner;
#pragma omp parallel for schedule(static)
    for (std::int64_t t = 0; t < e_.outer * runs; ++t) {
      const std::int64_t at = t / runs * len * inner + t % runs * kRun, n = std::min(kRun, inner - t % runs * kRun);
      const float* xr = x + at;
      float* yr = y + at;
      float top[kRun], sum[kRun];
      for (std::int64_t j = 0; j < n; ++j) top[j] = xr[j], sum[j] = 0.f;
      for (std::int64_t l = 1; l < len; ++l)
        for (std::int64_t j = 0; j < n; ++j) top[j] = std::max(top[j], xr[l * inner + j]);
      for (std::int64_t l = 0; l < len; ++l)
        for (std::int64_t j = 0; j < n; ++j) sum[j] += (yr[l * inner + j] = std::exp(xr[l * inner + j] - top[j]));
      for (std::int64_t l = 0; l < len; ++l)
        for (std::int64_t j = 0; j < n; ++j) yr[l * inner + j] /= sum[j];
    }
  }

 private:
  detail::SoftmaxExtent e_;
};

}  // namespace

void build_softmax(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& s = g.value(n.inputs[0]).shape;
  const detail::SoftmaxExtent e = detail::softmax_extent(n, s);
  if (e.inner > 1) {
    auto op = std::make_unique<StridedSoftmaxOp>(e);
    op->acts[DNNL_ARG_SRC] = ctx.input(n.inputs[0], Form::Plain);
    op->acts[DNNL_ARG_DST] = ctx.output(n.outputs[0], Form::Plain);
    op->acts[DNNL_ARG_SRC].md = op->acts[DNNL_ARG_DST].md = plain_md({e.outer, e.len, e.inner});
    op->name = n.label();
    op->impl = "vinfer:softmax_strided";
    ctx.add(std::move(op));
    return;
  }
  const memory::desc md = plain_md({e.outer, e.len, e.inner});
  TensorRef src = ctx.input(n.inputs[0], Form::Plain);
  TensorRef dst = ctx.output(n.outputs[0], Form::Plain);
  src.md = dst.md = md;
  auto op = std::make_unique<PrimitiveOp>();
  dnnl::softmax_forward::desc d(dnnl::prop_kind::forward_inference, md, 1);
  dnnl::softmax_forward::primitive_desc pd(d, default_attr(), ctx.engine());
  op->prim = dnnl::softmax_forward(pd);
  op->name = n.label();
  op->acts[DNNL_ARG_SRC] = src;
  op->acts[DNNL_ARG_DST] = dst;
  finish(*op, pd);
  ctx.add(std::move(op));
}

// Flatten, Reshape, Squeeze, Unsqueeze, and Identity and Dropout (inference:
// the input itself): the same bytes, read as another shape.
void build_reshape(BuildContext& ctx, const Node& n) { ctx.alias_plain(n.outputs[0], n.inputs[0]); }

}  // namespace vinfer::cpu
