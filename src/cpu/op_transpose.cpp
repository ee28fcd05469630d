// Transpose, Slice, Split, Pad and Gather of one index: copies as oneDNN reorders.
//
// Transpose -> one oneDNN reorder: the source's plain layout described with
// permuted axes, written straight into the destination's layout (Keras's
// NHWC input becomes the blocked NCHW the convolutions read, in one pass).
#include <algorithm>

#include "cpu/cpu_op.hpp"
#include "graph/op_params.hpp"
#include "graph/shape.hpp"

namespace vinfer::cpu {

void build_transpose(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& xs = g.value(n.inputs[0]).shape;
  const Shape& ys = g.value(n.outputs[0]).shape;
  if (g.value(n.outputs[0]).dtype != DType::F32) unsupported(n, "transposing integer runtime values");
  const std::vector<std::int64_t> perm = detail::transpose_perm(n, xs.size());
  // NCHW <-> NHWC where the bytes are already in place (ConvNeXt's permutes
  // around its LayerNorm and MLP): the channels-last storage of a 4-D value
  // is its NHWC transpose's plain storage, and the reverse. No copy.
  const int x = n.inputs[0], y = n.outputs[0];
  const bool input = std::find(g.inputs.begin(), g.inputs.end(), x) != g.inputs.end();
  if (xs.size() == 4 && !g.value(x).is_constant() && !input && !g.is_output(y)) {
    if (perm == std::vector<std::int64_t>{0, 2, 3, 1} && ctx.has_form(x, Form::ChannelsLast))
      return ctx.alias_form(y, Form::Plain, x, Form::ChannelsLast);
    if (perm == std::vector<std::int64_t>{0, 3, 1, 2}) return ctx.alias_form(y, Form::ChannelsLast, x, Form::Plain);
  }
  std::vector<int> inverse(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) inverse[static_cast<std::size_t>(perm[i])] = static_cast<int>(i);
  TensorRef src = ctx.input(n.inputs[0], Form::Plain);
  src.md = plain_md(xs).permute_axes(inverse);  // x's bytes, y's axes
  // Blocked only for whole channel blocks (an image's 3 channels stay plain for the first convolution).
  const bool blocked = ys.size() == 4 && ys[1] % channel_block() == 0;
  TensorRef dst = ctx.output(n.outputs[0], blocked ? Form::Blocked : Form::Plain);
  ctx.add(make_reorder(ctx.engine(), src, dst, n.label()));
}

namespace {

// One oneDNN reorder from a window of the source (a strided view of its
// plain layout) into the destination's layout, which holds the window's values
// (its shape may drop the window's unit dimensions).
void add_window_copy(BuildContext& ctx, const Node& n, const detail::SliceWindow& w, std::size_t output = 0) {
  const Graph& g = ctx.graph();
  const Shape& ys = g.value(n.outputs[output]).shape;
  if (g.value(n.outputs[output]).dtype != DType::F32) unsupported(n, "copying integer runtime values");
  if (numel(ys) == 0) unsupported(n, "an empty result");
  const Shape& xs = g.value(n.inputs[0]).shape;
  const bool blocked = ys.size() == 4 && ys[1] % channel_block() == 0 && ys.size() == w.size.size();
  const bool unit_steps = std::all_of(w.step.begin(), w.step.end(), [](std::int64_t s) { return s == 1; });
  if (!blocked && unit_steps && build_window_runs(ctx, n, xs, w.begin, w.size, output)) return;
  // The window as a strided view of x's plain layout (oneDNN takes no negative strides).
  memory::dims strides(xs.size(), 1);
  memory::dim offset = 0;
  for (std::size_t d = xs.size(); d-- > 0;) {
    if (d + 1 < xs.size()) strides[d] = strides[d + 1] * xs[d + 1];
    offset += w.begin[d] * strides[d];
  }
  for (std::size_t d = 0; d < xs.size(); ++d) {
    if (w.step[d] < 0) unsupported(n, "a negative step");
    strides[d] *= w.step[d];
  }
  TensorRef src = ctx.input(n.inputs[0], Form::Plain);
  src.md = memory::desc(to_dims(w.size), memory::data_type::f32, strides);
  src.md.data.offset0 = offset;
  TensorRef dst = ctx.output(n.outputs[output], blocked ? Form::Blocked : Form::Plain);
  if (!blocked) dst.md = plain_md(w.size);  // the output's bytes, the window's dimensions
  ctx.add(make_reorder(ctx.engine(), src, dst, n.label()));
}

const std::vector<std::int64_t>& constant_ints(const Graph& g, const Node& n, std::size_t i) {
  static const std::vector<std::int64_t> none;
  const TensorData* c = i < n.inputs.size() && n.inputs[i] >= 0 ? g.constant(n.inputs[i]) : nullptr;
  return c ? c->i : none;
}

}  // namespace

void build_slice(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& xs = g.value(n.inputs[0]).shape;
  add_window_copy(ctx, n, detail::slice_window(n, xs, constant_ints(g, n, 1), constant_ints(g, n, 2), constant_ints(g, n, 3),
                                               constant_ints(g, n, 4)));
}

namespace {

// The output filled with the pad value, then the input reordered into its
// window (a strided view of the output's plain layout).
class PadOp : public PrimitiveOp {
 public:
  float value = 0;
  std::size_t count = 0;
  void execute(dnnl::stream& s) override {
    float* y = static_cast<float*>(args.at(DNNL_ARG_TO).get_data_handle());
    std::fill(y, y + count, value);  // (the window is written again: simpler than filling the borders alone)
    PrimitiveOp::execute(s);
  }
};

}  // namespace

// Split: a window copy per output.
void build_split(BuildContext& ctx, const Node& n) {
  const Shape& xs = ctx.graph().value(n.inputs[0]).shape;
  const detail::SplitParams p = detail::split_params(ctx.graph(), n, xs);
  detail::SliceWindow w{Shape(xs.size(), 0), xs, Shape(xs.size(), 1)};
  const auto axis = static_cast<std::size_t>(p.axis);
  for (std::size_t o = 0; o < n.outputs.size(); ++o) {
    w.size[axis] = p.lengths[o];
    if (n.outputs[o] >= 0) add_window_copy(ctx, n, w, o);
    w.begin[axis] += p.lengths[o];
  }
}

// Pad (constant mode) on runtime values.
void build_pad(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& xs = g.value(n.inputs[0]).shape;
  const Shape& ys = g.value(n.outputs[0]).shape;
  if (g.value(n.outputs[0]).dtype != DType::F32 || numel(ys) == 0) unsupported(n, "an integer or empty Pad");
  const std::vector<std::int64_t> pads = detail::pad_amounts(g, n);
  memory::dims strides(ys.size(), 1);
  memory::dim offset = 0;
  for (std::size_t d = ys.size(); d-- > 0;) {
    if (d + 1 < ys.size()) strides[d] = strides[d + 1] * ys[d + 1];
    if (pads[d] < 0 || pads[d + ys.size()] < 0) unsupported(n, "negative pads (cropping)");
    offset += pads[d] * strides[d];
  }
  auto op = std::make_unique<PadOp>();
  if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
    const TensorData* v = g.constant(n.inputs[2]);
    if (!v || v->dtype != DType::F32 || v->numel() != 1) unsupported(n, "a pad value that is not a constant float");
    op->value = v->f[0];
  }
  op->count = static_cast<std::size_t>(numel(ys));
  TensorRef src = ctx.input(n.inputs[0], Form::Plain);
  const TensorRef dst = ctx.output(n.outputs[0], Form::Plain);
  TensorRef window = dst;
  window.md = memory::desc(to_dims(xs), memory::data_type::f32, strides);
  window.md.data.offset0 = offset;
  dnnl::reorder::primitive_desc pd(ctx.engine(), src.md, ctx.engine(), window.md, default_attr());
  op->prim = dnnl::reorder(pd);
  op->name = n.label();
  finish(*op, pd);
  op->acts[DNNL_ARG_FROM] = src;
  op->acts[DNNL_ARG_TO] = window;
  ctx.add(std::move(op));
}

// Gather of one constant index (attention's q, k, v from a packed tensor;
// the class token): the window at that index.
void build_gather(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& xs = g.value(n.inputs[0]).shape;
  const TensorData* idx = g.constant(n.inputs[1]);
  if (idx && idx->dtype == DType::I64 && idx->numel() != 1) return build_gather_rows(ctx, n);
  if (!idx || idx->dtype != DType::I64) unsupported(n, "a Gather of runtime or non-integer indices");
  const auto axis = static_cast<std::size_t>(detail::normalize_axis(n, n.get_int("axis", 0), xs.size()));
  std::int64_t i = idx->i[0] < 0 ? idx->i[0] + xs[axis] : idx->i[0];
  if (i < 0 || i >= xs[axis]) unsupported(n, "an index out of range");
  detail::SliceWindow w{Shape(xs.size(), 0), xs, Shape(xs.size(), 1)};
  w.begin[axis] = i;
  w.size[axis] = 1;
  add_window_copy(ctx, n, w);
}

}  // namespace vinfer::cpu
