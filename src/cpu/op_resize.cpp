// Resize in mode nearest (YOLO's and FPNs' 2x upsampling): a gather of rows
// by the input index each output position reads, as the reference computes
// them (graph/op_params.hpp nearest_resize). Other modes run on the reference.
#include <numeric>

#include "cpu/cpu_op.hpp"
#include "graph/op_params.hpp"

namespace vinfer::cpu {
namespace {

class NearestResizeOp : public CpuOp {
 public:
  NearestResizeOp(const Shape& x, detail::NearestResize r) : x_(x), r_(std::move(r)) {}
  void execute(dnnl::stream&) override {
    const auto* x = static_cast<const float*>(args.at(DNNL_ARG_SRC).get_data_handle());
    auto* y = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
    const std::size_t rank = x_.size();
    const std::int64_t row = r_.out[rank - 1], rows = numel(r_.out) / std::max<std::int64_t>(row, 1);
    const std::vector<std::int64_t>& last = r_.source[rank - 1];
#pragma omp parallel for schedule(static)
    for (std::int64_t o = 0; o < rows; ++o) {
      // The input row that output row o reads: each leading index mapped.
      std::int64_t rest = o, from = 0, stride = x_[rank - 1];
      for (std::size_t d = rank - 1; d-- > 0;) {
        from += r_.source[d][static_cast<std::size_t>(rest % r_.out[d])] * stride;
        rest /= r_.out[d];
        stride *= x_[d];
      }
      const float* src = x + from;
      float* dst = y + o * row;
      for (std::int64_t j = 0; j < row; ++j) dst[j] = src[last[static_cast<std::size_t>(j)]];
    }
  }

 private:
  Shape x_;
  detail::NearestResize r_;
};

const TensorData* constant_input(const Graph& g, const Node& n, std::size_t i) {
  if (i >= n.inputs.size() || n.inputs[i] < 0) return nullptr;
  const TensorData* c = g.constant(n.inputs[i]);
  if (!c) unsupported(n, "a Resize whose roi, scales or sizes are computed at run time");
  return c;
}

}  // namespace

void build_resize(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& xs = g.value(n.inputs[0]).shape;
  std::optional<detail::NearestResize> r =
      detail::nearest_resize(n, xs, constant_input(g, n, 1), constant_input(g, n, 2), constant_input(g, n, 3));
  if (!r) unsupported(n, "a Resize in mode " + n.get_string("mode", "nearest") + " (vinfer's CPU kernel: nearest)");
  if (xs.empty() || r->out != g.value(n.outputs[0]).shape) unsupported(n, "this Resize's shapes");
  auto op = std::make_unique<NearestResizeOp>(xs, std::move(*r));
  op->acts[DNNL_ARG_SRC] = ctx.input(n.inputs[0], Form::Plain);
  op->acts[DNNL_ARG_DST] = ctx.output(n.outputs[0], Form::Plain);
  op->name = n.label();
  op->impl = "vinfer:resize_nearest";
  ctx.add(std::move(op));
}

}  // namespace vinfer::cpu
