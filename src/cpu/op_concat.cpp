// Concat that could not be made a view (see backend/concat_views): a oneDNN concat.
#include "cpu/cpu_op.hpp"
#include "graph/op_params.hpp"

namespace vinfer::cpu {

void build_concat(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& ys = g.value(n.outputs[0]).shape;
  if (g.value(n.outputs[0]).dtype != DType::F32) unsupported(n, "concatenating integer runtime values");
  const int axis = detail::normalize_axis(n, n.get_int("axis", 1), ys.size());
  // Blocked only when every channel slice starts on a block boundary.
  bool blocked = ys.size() == 4;
  for (int v : n.inputs) blocked &= axis != 1 || g.value(v).shape[1] % channel_block() == 0;
  const Form form = blocked ? Form::Blocked : Form::Plain;
  // oneDNN concatenates plain tensors with its generic copy; vinfer copies runs.
  if (!blocked && build_plain_concat(ctx, n, axis)) return;
  auto op = std::make_unique<PrimitiveOp>();
  std::vector<memory::desc> srcs;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    const int arg = DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i);
    if (const TensorData* c = g.constant(n.inputs[i])) {  // (ViT's class token) copied once into the op
      if (c->dtype != DType::F32) unsupported(n, "an integer constant input");
      const memory::desc md = md_for(c->shape, form);
      op->args[arg] = pack_weights(ctx.engine(), *c, plain_md(c->shape), md, op->buffers);
      srcs.push_back(md);
      continue;
    }
    TensorRef t = ctx.input(n.inputs[i], form);
    srcs.push_back(t.md);
    op->acts[arg] = t;
  }
  TensorRef dst = ctx.output(n.outputs[0], form);
  dnnl::concat::primitive_desc pd(dst.md, axis, srcs, ctx.engine(), default_attr());
  op->prim = dnnl::concat(pd);
  op->name = n.label();
  op->acts[DNNL_ARG_DST] = dst;
  finish(*op, pd);
  ctx.add(std::move(op));
}

}  // namespace vinfer::cpu
