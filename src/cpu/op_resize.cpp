// Resize on the CPU: mode nearest (YOLO's and FPNs' 2x upsampling) as a
// gather of rows by the input index each output position reads, any other
// mode (the segmenters' bilinear) as one pass per resized axis; both with the
// positions and weights the reference computes (graph/op_params.hpp).
#include <algorithm>
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

// Any other mode, one pass per resized axis as the reference makes them,
// in float with each output's taps summed in double.
class SeparableResizeOp : public CpuOp {
 public:
  SeparableResizeOp(const Shape& x, detail::SeparableResize r) : x_(x), r_(std::move(r)) {
    Shape s = x_;
    std::size_t most = 0;  // the largest tensor between passes (the last writes the output)
    for (std::size_t p = 0; p + 1 < r_.axes.size(); ++p)
      s[r_.axes[p].axis] = r_.axes[p].out, most = std::max(most, static_cast<std::size_t>(numel(s)));
    buf_[0].resize(most);
    if (r_.axes.size() > 2) buf_[1].resize(most);
  }
  void execute(dnnl::stream&) override {
    const auto* x = static_cast<const float*>(args.at(DNNL_ARG_SRC).get_data_handle());
    auto* y = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
    Shape s = x_;
    const float* from = x;
    for (std::size_t p = 0; p < r_.axes.size(); ++p) {
      const detail::ResizeAxis& a = r_.axes[p];
      float* to = p + 1 == r_.axes.size() ? y : buf_[p % 2].data();
      std::int64_t outer = 1, inner = 1;
      for (std::size_t d = 0; d < a.axis; ++d) outer *= s[d];
      for (std::size_t d = a.axis + 1; d < s.size(); ++d) inner *= s[d];
#pragma omp parallel for collapse(2) schedule(static)
      for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t q = 0; q < a.out; ++q) {
          const std::vector<double>& taps = a.taps[static_cast<std::size_t>(q)];
          const std::int64_t first = a.first[static_cast<std::size_t>(q)];
          float* dst = to + (o * a.out + q) * inner;
          if (a.outside[static_cast<std::size_t>(q)]) {
            std::fill(dst, dst + inner, r_.extrapolation);
            continue;
          }
          for (std::int64_t i = 0; i < inner; ++i) {
            double acc = 0;
            for (std::size_t k = 0; k < taps.size(); ++k) {
              const std::int64_t at = std::clamp<std::int64_t>(first + static_cast<std::int64_t>(k), 0, a.in - 1);
              acc += taps[k] * from[(o * a.in + at) * inner + i];
            }
            dst[i] = static_cast<float>(acc);
          }
        }
      s[a.axis] = a.out;
      from = to;
    }
    if (r_.axes.empty()) std::copy(x, x + numel(x_), y);
  }

 private:
  Shape x_;
  detail::SeparableResize r_;
  std::vector<float> buf_[2];  // between passes
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
  const TensorData *roi = constant_input(g, n, 1), *scales = constant_input(g, n, 2), *sizes = constant_input(g, n, 3);
  const Shape& ys = g.value(n.outputs[0]).shape;
  if (xs.empty()) unsupported(n, "a Resize of a scalar");
  std::unique_ptr<CpuOp> op;
  if (std::optional<detail::NearestResize> r = detail::nearest_resize(n, xs, roi, scales, sizes)) {
    if (r->out != ys) unsupported(n, "this Resize's shapes");
    op = std::make_unique<NearestResizeOp>(xs, std::move(*r));
    op->impl = "vinfer:resize_nearest";
  } else {
    detail::SeparableResize sr = detail::separable_resize(n, xs, roi, scales, sizes);
    if (sr.out != ys) unsupported(n, "this Resize's shapes");
    op = std::make_unique<SeparableResizeOp>(xs, std::move(sr));
    op->impl = "vinfer:resize_separable";
  }
  op->acts[DNNL_ARG_SRC] = ctx.input(n.inputs[0], Form::Plain);
  op->acts[DNNL_ARG_DST] = ctx.output(n.outputs[0], Form::Plain);
  op->name = n.label();
  ctx.add(std::move(op));
}

}  // namespace vinfer::cpu
