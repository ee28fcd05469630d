// Transpose and Slice: layout changes as oneDNN reorders.
//
// Transpose -> one oneDNN reorder: the source's plain layout described with
// permuted axes, written straight into the destination's layout (Keras's
// NHWC input becomes the blocked NCHW the convolutions read, in one pass).
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
  std::vector<int> inverse(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) inverse[static_cast<std::size_t>(perm[i])] = static_cast<int>(i);
  TensorRef src = ctx.input(n.inputs[0], Form::Plain);
  src.md = plain_md(xs).permute_axes(inverse);  // x's bytes, y's axes
  // Blocked only for whole channel blocks (an image's 3 channels stay plain for the first convolution).
  const bool blocked = ys.size() == 4 && ys[1] % channel_block() == 0;
  TensorRef dst = ctx.output(n.outputs[0], blocked ? Form::Blocked : Form::Plain);
  ctx.add(make_reorder(ctx.engine(), src, dst, n.label()));
}

// Slice -> one oneDNN reorder from the window of the source (a sub-memory
// of its plain layout) into the destination's layout.
void build_slice(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& xs = g.value(n.inputs[0]).shape;
  const Shape& ys = g.value(n.outputs[0]).shape;
  if (g.value(n.outputs[0]).dtype != DType::F32) unsupported(n, "slicing integer runtime values");
  auto list = [&](std::size_t i) {
    const TensorData* c = i < n.inputs.size() && n.inputs[i] >= 0 ? g.constant(n.inputs[i]) : nullptr;
    return c ? c->i : std::vector<std::int64_t>{};
  };
  const detail::SliceWindow w = detail::slice_window(n, xs, list(1), list(2), list(3), list(4));
  if (numel(ys) == 0) unsupported(n, "an empty slice");
  TensorRef src = ctx.input(n.inputs[0], Form::Plain);
  src.md = plain_md(xs).submemory_desc(to_dims(w.size), to_dims(w.begin));
  const bool blocked = ys.size() == 4 && ys[1] % channel_block() == 0;
  TensorRef dst = ctx.output(n.outputs[0], blocked ? Form::Blocked : Form::Plain);
  ctx.add(make_reorder(ctx.engine(), src, dst, n.label()));
}

}  // namespace vinfer::cpu
