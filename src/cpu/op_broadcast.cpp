// vinfer's own kernels for what oneDNN 2.6 runs only on its reference
// implementation (100x slower) or not at all: a binary operation whose
// broadcast is not per tensor or per channel (Swin's attention mask,
// F.normalize's division by a norm per row), reductions over the last axes,
// and Gather by constant indices.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cpu/cpu_op.hpp"
#include "graph/op_params.hpp"
#include "graph/shape.hpp"

namespace vinfer::cpu {
namespace {

// y[r, 0..L) = a[ra + i * sa] op b[rb + i * sb], rows r over the outer dims.
class BroadcastBinaryOp : public CpuOp {
 public:
  char alg = 'A';
  std::int64_t rows = 0, len = 0;
  Shape outer;                                 // the output's dims but the last
  std::vector<std::int64_t> a_step, b_step;    // per outer dim: element stride in a, b (0: broadcast)
  std::int64_t a_inner = 1, b_inner = 1;       // along the last dim
  std::vector<float> constant[2];              // a constant operand (else bound from the arena)

  void execute(dnnl::stream&) override {
    const float* a = constant[0].empty() ? static_cast<const float*>(args.at(DNNL_ARG_SRC_0).get_data_handle()) : constant[0].data();
    const float* b = constant[1].empty() ? static_cast<const float*>(args.at(DNNL_ARG_SRC_1).get_data_handle()) : constant[1].data();
    float* y = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      std::int64_t ra = 0, rb = 0, rest = r;
      for (std::size_t d = outer.size(); d-- > 0;) {
        const std::int64_t i = rest % outer[d];
        rest /= outer[d];
        ra += i * a_step[d], rb += i * b_step[d];
      }
      const float* ar = a + ra;
      const float* br = b + rb;
      float* yr = y + r * len;
      switch (alg) {
        case 'A': for (std::int64_t i = 0; i < len; ++i) yr[i] = ar[i * a_inner] + br[i * b_inner]; break;
        case 'S': for (std::int64_t i = 0; i < len; ++i) yr[i] = ar[i * a_inner] - br[i * b_inner]; break;
        case 'M': for (std::int64_t i = 0; i < len; ++i) yr[i] = ar[i * a_inner] * br[i * b_inner]; break;
        default: for (std::int64_t i = 0; i < len; ++i) yr[i] = ar[i * a_inner] / br[i * b_inner]; break;
      }
    }
  }
  std::vector<ByteSpan> weights() const override { return {}; }
};

// Element strides of s read as the output shape ys (0 where s broadcasts).
std::vector<std::int64_t> broadcast_steps(Shape s, const Shape& ys) {
  s.insert(s.begin(), ys.size() - s.size(), 1);
  std::vector<std::int64_t> step(ys.size(), 0);
  std::int64_t acc = 1;
  for (std::size_t d = s.size(); d-- > 0;) {
    step[d] = s[d] == 1 && ys[d] != 1 ? 0 : acc;
    acc *= s[d];
  }
  return step;
}

// The outer rows reduced over the last `len` values: y[r] = f(x[r, 0..len)).
class RowReduceOp : public CpuOp {
 public:
  char alg = 'S';  // Sum, Max, L2, mean ('A')
  std::int64_t rows = 0, len = 0;
  void execute(dnnl::stream&) override {
    const float* x = static_cast<const float*>(args.at(DNNL_ARG_SRC).get_data_handle());
    float* y = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* xr = x + r * len;
      float acc = alg == 'M' ? -INFINITY : 0.f;
      for (std::int64_t i = 0; i < len; ++i) acc = alg == 'M' ? std::max(acc, xr[i]) : alg == 'L' ? acc + xr[i] * xr[i] : acc + xr[i];
      y[r] = alg == 'L' ? std::sqrt(acc) : alg == 'A' ? acc / static_cast<float>(len) : acc;
    }
  }
  std::vector<ByteSpan> weights() const override { return {}; }
};

// y[o, k, :] = x[o, index[k], :] (Gather along one axis by constant indices).
class GatherOp : public CpuOp {
 public:
  std::int64_t outer = 1, axis_len = 1, inner = 1;
  std::vector<std::int64_t> index;
  void execute(dnnl::stream&) override {
    const float* x = static_cast<const float*>(args.at(DNNL_ARG_SRC).get_data_handle());
    float* y = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
    const auto count = static_cast<std::int64_t>(index.size());
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t k = 0; k < count; ++k)
        std::memcpy(y + (o * count + k) * inner, x + (o * axis_len + index[static_cast<std::size_t>(k)]) * inner,
                    static_cast<std::size_t>(inner) * sizeof(float));
  }
  std::vector<ByteSpan> weights() const override { return {}; }
};

// Contiguous runs copied from the sources into the destination (plain
// concatenations and windows that are whole rows: ShuffleNet's channel
// split and shuffle), planned once.
class CopyRunsOp : public CpuOp {
 public:
  struct Run {
    int source;  // acts key
    std::int64_t from, to, count;  // floats
  };
  std::vector<Run> runs;
  void execute(dnnl::stream&) override {
#pragma omp parallel for schedule(static) if (runs.size() > 1)
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const Run& c = runs[r];
      const float* src = static_cast<const float*>(args.at(c.source).get_data_handle());
      float* dst = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
      std::memcpy(dst + c.to, src + c.from, static_cast<std::size_t>(c.count) * sizeof(float));
    }
  }
  std::vector<ByteSpan> weights() const override { return {}; }
};

}  // namespace

bool build_plain_concat(BuildContext& ctx, const Node& n, int axis) {
  const Graph& g = ctx.graph();
  const Shape& ys = g.value(n.outputs[0]).shape;
  std::int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= ys[static_cast<std::size_t>(d)];
  for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < ys.size(); ++d) inner *= ys[d];
  auto op = std::make_unique<CopyRunsOp>();
  std::int64_t offset = 0;  // along the axis
  const std::int64_t row = ys[static_cast<std::size_t>(axis)] * inner;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    if (g.constant(n.inputs[i])) return false;
    const std::int64_t len = g.value(n.inputs[i]).shape[static_cast<std::size_t>(axis)] * inner;
    const int key = DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i);
    for (std::int64_t o = 0; o < outer && len > 0; ++o) op->runs.push_back({key, o * len, o * row + offset, len});
    offset += len;
  }
  for (std::size_t i = 0; i < n.inputs.size(); ++i) op->acts[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = ctx.input(n.inputs[i], Form::Plain);
  op->acts[DNNL_ARG_DST] = ctx.output(n.outputs[0], Form::Plain);
  op->name = n.label();
  op->impl = "vinfer:copy_runs";
  ctx.add(std::move(op));
  return true;
}

bool build_window_runs(BuildContext& ctx, const Node& n, const Shape& xs, const Shape& begin, const Shape& size, std::size_t output) {
  // The window must be whole below one axis d (and a single index above it
  // where it is not the whole extent... kept simple: whole in every axis but d).
  std::size_t d = 0, cut = 0;
  for (std::size_t k = 0; k < xs.size(); ++k)
    if (begin[k] != 0 || size[k] != xs[k]) ++cut, d = k;
  if (cut > 1) return false;
  std::int64_t outer = 1, inner = 1;
  for (std::size_t k = 0; k < d; ++k) outer *= xs[k];
  for (std::size_t k = d + 1; k < xs.size(); ++k) inner *= xs[k];
  auto op = std::make_unique<CopyRunsOp>();
  const std::int64_t len = size[d] * inner;
  for (std::int64_t o = 0; o < outer && len > 0; ++o) op->runs.push_back({DNNL_ARG_SRC, (o * xs[d] + begin[d]) * inner, o * len, len});
  op->acts[DNNL_ARG_SRC] = ctx.input(n.inputs[0], Form::Plain);
  op->acts[DNNL_ARG_DST] = ctx.output(n.outputs[output], Form::Plain);
  op->name = n.label();
  op->impl = "vinfer:copy_runs";
  ctx.add(std::move(op));
  return true;
}

void build_gather_rows(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& xs = g.value(n.inputs[0]).shape;
  const TensorData* idx = g.constant(n.inputs[1]);
  if (!idx || idx->dtype != DType::I64 || g.value(n.outputs[0]).dtype != DType::F32)
    unsupported(n, "a Gather of runtime or non-integer indices");
  const auto axis = static_cast<std::size_t>(detail::normalize_axis(n, n.get_int("axis", 0), xs.size()));
  auto op = std::make_unique<GatherOp>();
  op->axis_len = xs[axis];
  for (std::size_t d = 0; d < axis; ++d) op->outer *= xs[d];
  for (std::size_t d = axis + 1; d < xs.size(); ++d) op->inner *= xs[d];
  for (std::int64_t i : idx->i) {
    const std::int64_t k = i < 0 ? i + op->axis_len : i;
    if (k < 0 || k >= op->axis_len) unsupported(n, "an index out of range");
    op->index.push_back(k);
  }
  op->acts[DNNL_ARG_SRC] = ctx.input(n.inputs[0], Form::Plain);
  op->acts[DNNL_ARG_DST] = ctx.output(n.outputs[0], Form::Plain);
  op->name = n.label();
  op->impl = "vinfer:gather";
  ctx.add(std::move(op));
}

void build_broadcast_binary(BuildContext& ctx, const Node& n, const int (&in)[2]) {
  const Graph& g = ctx.graph();
  const Shape& ys = g.value(n.outputs[0]).shape;
  if (ys.empty() || numel(ys) == 0) unsupported(n, "an empty or scalar result");
  auto op = std::make_unique<BroadcastBinaryOp>();
  op->alg = n.op[0];
  op->len = ys.back();
  op->outer.assign(ys.begin(), ys.end() - 1);
  op->rows = numel(ys) / op->len;
  for (int i = 0; i < 2; ++i) {
    std::vector<std::int64_t> step = broadcast_steps(g.value(in[i]).shape, ys);
    (i == 0 ? op->a_inner : op->b_inner) = step.back();
    step.pop_back();
    (i == 0 ? op->a_step : op->b_step) = step;
    if (const TensorData* c = g.constant(in[i])) op->constant[i] = c->f;
    else op->acts[i == 0 ? DNNL_ARG_SRC_0 : DNNL_ARG_SRC_1] = ctx.input(in[i], Form::Plain);
  }
  op->acts[DNNL_ARG_DST] = ctx.output(n.outputs[0], Form::Plain);
  op->name = n.label();
  op->impl = "vinfer:broadcast_binary";
  ctx.add(std::move(op));
}

bool build_row_reduce(BuildContext& ctx, const Node& n, const std::vector<bool>& reduced) {
  const Shape& xs = ctx.graph().value(n.inputs[0]).shape;
  std::size_t first = xs.size();
  while (first > 0 && reduced[first - 1]) --first;
  for (std::size_t d = 0; d < first; ++d)
    if (reduced[d]) return false;  // not the last axes alone
  if (first == xs.size() || numel(xs) == 0) return false;
  auto op = std::make_unique<RowReduceOp>();
  op->alg = n.op == "ReduceSum" ? 'S' : n.op == "ReduceMax" ? 'M' : n.op == "ReduceL2" ? 'L' : 'A';
  op->len = 1;
  for (std::size_t d = first; d < xs.size(); ++d) op->len *= xs[d];
  op->rows = numel(xs) / op->len;
  op->acts[DNNL_ARG_SRC] = ctx.input(n.inputs[0], Form::Plain);
  op->acts[DNNL_ARG_DST] = ctx.output(n.outputs[0], Form::Plain);
  op->name = n.label();
  op->impl = "vinfer:row_reduce";
  ctx.add(std::move(op));
  return true;
}

}  // namespace vinfer::cpu
