// Transpose -> one oneDNN reorder: the source's plain layout described with
// permuted axes, written straight into the destination's layout (Keras's
// NHWC input becomes the blocked NCHW the convolutions read, in one pass).
#include "cpu/cpu_op.hpp"
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

}  // namespace vinfer::cpu
