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

// Any other mode, one pass per resized axis with the reference's taps, each
// output's taps summed in double: the taps flattened to a fixed count per
// axis with their clamped input positions (zero weights pad the count).
class SeparableResizeOp : public CpuOp {
 public:
  SeparableResizeOp(const Shape& x, const detail::SeparableResize& r) : x_(x), extrapolation_(r.extrapolation) {
    Shape s = x_;
    std::size_t most = 0;  // the largest tensor between passes (the last writes the output)
    // The innermost axis first: its pass gathers along rows, the others
    // blend whole rows (vectorized), and an upsampling's gather then runs
    // on the smaller tensor. (The passes commute; only float rounding
    // between them differs from the reference's order.)
    std::vector<const detail::ResizeAxis*> order;
    for (const detail::ResizeAxis& a : r.axes) order.push_back(&a);
    std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->axis > b->axis; });
    for (std::size_t p = 0; p < order.size(); ++p) {
      const detail::ResizeAxis& a = *order[p];
      Pass& f = passes_.emplace_back();
      f.axis = a.axis, f.in = a.in, f.out = a.out, f.outside = a.outside;
      for (const auto& t : a.taps) f.count = std::max(f.count, static_cast<std::int64_t>(t.size()));
      f.at.assign(static_cast<std::size_t>(a.out * f.count), 0);
      f.w.assign(f.at.size(), 0.0);
      for (std::int64_t q = 0; q < a.out; ++q)
        for (std::size_t k = 0; k < a.taps[static_cast<std::size_t>(q)].size(); ++k) {
          const auto j = static_cast<std::size_t>(q * f.count) + k;
          f.at[j] = std::clamp<std::int64_t>(a.first[static_cast<std::size_t>(q)] + static_cast<std::int64_t>(k), 0, a.in - 1);
          f.w[j] = a.taps[static_cast<std::size_t>(q)][k];
        }
      s[a.axis] = a.out;
      if (p + 1 < order.size()) most = std::max(most, static_cast<std::size_t>(numel(s)));
    }
    buf_[0].resize(most);
    if (r.axes.size() > 2) buf_[1].resize(most);
  }
  void execute(dnnl::stream&) override {
    const auto* x = static_cast<const float*>(args.at(DNNL_ARG_SRC).get_data_handle());
    auto* y = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
    Shape s = x_;
    const float* from = x;
    for (std::size_t p = 0; p < passes_.size(); ++p) {
      const Pass& f = passes_[p];
      float* to = p + 1 == passes_.size() ? y : buf_[p % 2].data();
      std::int64_t outer = 1, inner = 1;
      for (std::size_t d = 0; d < f.axis; ++d) outer *= s[d];
      for (std::size_t d = f.axis + 1; d < s.size(); ++d) inner *= s[d];
      if (inner == 1) {
        // The last axis: each output reads count values of its row.
#pragma omp parallel for schedule(static)
        for (std::int64_t o = 0; o < outer; ++o) {
          const float* row = from + o * f.in;
          float* dst = to + o * f.out;
          for (std::int64_t q = 0; q < f.out; ++q) {
            double acc = 0;
            for (std::int64_t k = 0; k < f.count; ++k) acc += f.w[static_cast<std::size_t>(q * f.count + k)] * row[f.at[static_cast<std::size_t>(q * f.count + k)]];
            dst[q] = f.outside[static_cast<std::size_t>(q)] ? extrapolation_ : static_cast<float>(acc);
          }
        }
      } else {
        // An outer axis: each output row a weighted sum of count input rows.
#pragma omp parallel for collapse(2) schedule(static)
        for (std::int64_t o = 0; o < outer; ++o)
          for (std::int64_t q = 0; q < f.out; ++q) {
            float* dst = to + (o * f.out + q) * inner;
            if (f.outside[static_cast<std::size_t>(q)]) {
              std::fill(dst, dst + inner, extrapolation_);
              continue;
            }
            const double* w = f.w.data() + q * f.count;
            const std::int64_t* at = f.at.data() + q * f.count;
            const float* rows = from + o * f.in * inner;
            if (f.count == 2) {  // linear: two rows blended in float (within an ulp of the double sum)
              const float w0 = static_cast<float>(w[0]), w1 = static_cast<float>(w[1]);
              const float *r0 = rows + at[0] * inner, *r1 = rows + at[1] * inner;
#pragma omp simd
              for (std::int64_t i = 0; i < inner; ++i) dst[i] = w0 * r0[i] + w1 * r1[i];
              continue;
            }
#pragma omp simd
            for (std::int64_t i = 0; i < inner; ++i) {
              double acc = 0;
              for (std::int64_t k = 0; k < f.count; ++k) acc += w[k] * rows[at[k] * inner + i];
              dst[i] = static_cast<float>(acc);
            }
          }
      }
      s[f.axis] = f.out;
      from = to;
    }
    if (passes_.empty()) std::copy(x, x + numel(x_), y);
  }

 private:
  struct Pass {
    std::size_t axis = 0;
    std::int64_t in = 0, out = 0, count = 0;
    std::vector<std::int64_t> at;  // [out][count] clamped input positions
    std::vector<double> w;         // [out][count] weights
    std::vector<char> outside;
  };
  Shape x_;
  float extrapolation_;
  std::vector<Pass> passes_;
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
    const detail::SeparableResize sr = detail::separable_resize(n, xs, roi, scales, sizes);
    if (sr.out != ys) unsupported(n, "this Resize's shapes");
    op = std::make_unique<SeparableResizeOp>(xs, sr);
    op->impl = "vinfer:resize_separable";
  }
  op->acts[DNNL_ARG_SRC] = ctx.input(n.inputs[0], Form::Plain);
  op->acts[DNNL_ARG_DST] = ctx.output(n.outputs[0], Form::Plain);
  op->name = n.label();
  ctx.add(std::move(op));
}

}  // namespace vinfer::cpu
