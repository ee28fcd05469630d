// Softmax -> oneDNN softmax on the plain tensor. Before opset 13 ONNX's
// Softmax normalizes over all dimensions from `axis` on, as one.
#include "cpu/cpu_op.hpp"
#include "graph/op_params.hpp"

namespace vinfer::cpu {

void build_softmax(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& s = g.value(n.inputs[0]).shape;
  const int axis = detail::normalize_axis(n, n.get_int("axis", -1), s.size());
  std::int64_t outer = 1, len = s[static_cast<std::size_t>(axis)], inner = 1;
  for (int d = 0; d < axis; ++d) outer *= s[static_cast<std::size_t>(d)];
  for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < s.size(); ++d) inner *= s[d];
  if (n.get_int("vinfer.opset", 13) < 13) {
    len *= inner;
    inner = 1;
  }
  const memory::desc md = plain_md({outer, len, inner});
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

// Flatten, Reshape, Squeeze, Unsqueeze: the same bytes, read as another shape.
void build_reshape(BuildContext& ctx, const Node& n) { ctx.alias_plain(n.outputs[0], n.inputs[0]); }

}  // namespace vinfer::cpu
