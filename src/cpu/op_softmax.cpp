// Softmax -> oneDNN softmax on the plain tensor, as [outer, len, inner].
#include "cpu/cpu_op.hpp"
#include "graph/op_params.hpp"

namespace vinfer::cpu {

void build_softmax(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& s = g.value(n.inputs[0]).shape;
  const detail::SoftmaxExtent e = detail::softmax_extent(n, s);
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
