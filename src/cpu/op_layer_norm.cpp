// LayerNormalization -> oneDNN layer normalization on the plain tensor as
// [outer, len], with the node's scale and bias.
#include "cpu/cpu_op.hpp"
#include "graph/op_params.hpp"

namespace vinfer::cpu {

void build_layer_norm(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const detail::LayerNormExtent e = detail::layer_norm_extent(n, g.value(n.inputs[0]).shape);
  const TensorData* scale = g.constant(n.inputs[1]);
  const TensorData* bias = n.inputs.size() > 2 && n.inputs[2] >= 0 ? g.constant(n.inputs[2]) : nullptr;
  if (!scale || (n.inputs.size() > 2 && n.inputs[2] >= 0 && !bias)) unsupported(n, "a runtime scale or bias");
  const std::vector<std::vector<int>> readers = g.consumers();
  for (std::size_t o = 1; o < n.outputs.size(); ++o)
    if (n.outputs[o] >= 0 && (g.is_output(n.outputs[o]) || !readers[static_cast<std::size_t>(n.outputs[o])].empty()))
      unsupported(n, "its Mean and InvStdDev outputs");
  const memory::desc md = plain_md({e.outer, e.len});
  TensorRef src = ctx.input(n.inputs[0], Form::Plain);
  TensorRef dst = ctx.output(n.outputs[0], Form::Plain);
  src.md = dst.md = md;
  auto flags = dnnl::normalization_flags::use_scale;
  if (bias) flags |= dnnl::normalization_flags::use_shift;
  dnnl::layer_normalization_forward::desc d(dnnl::prop_kind::forward_inference, md, e.epsilon, flags);
  dnnl::layer_normalization_forward::primitive_desc pd(d, default_attr(), ctx.engine());
  auto op = std::make_unique<PrimitiveOp>();
  op->prim = dnnl::layer_normalization_forward(pd);
  const memory::desc vec = plain_md({e.len});
  op->args[DNNL_ARG_SCALE] = pack_weights(ctx.engine(), *scale, vec, vec, op->buffers);
  if (bias) op->args[DNNL_ARG_SHIFT] = pack_weights(ctx.engine(), *bias, vec, vec, op->buffers);
  // The statistics it computes on the way, in memory of its own (not read).
  for (const int arg : {DNNL_ARG_MEAN, DNNL_ARG_VARIANCE})
    if (pd.query_md(dnnl::query::exec_arg_md, arg).get_size() > 0)
      op->args[arg] = memory(pd.query_md(dnnl::query::exec_arg_md, arg), ctx.engine());
  op->name = n.label();
  op->acts[DNNL_ARG_SRC] = src;
  op->acts[DNNL_ARG_DST] = dst;
  op->flops = 8.0 * static_cast<double>(e.outer * e.len);
  finish(*op, pd);
  ctx.add(std::move(op));
}

}  // namespace vinfer::cpu
