// Gemm and MatMul with a constant right operand -> oneDNN inner product
// (weights packed once; alpha and beta folded into weights and bias at load).
#include "cpu/cpu_op.hpp"
#include "graph/op_params.hpp"

namespace vinfer::cpu {

void build_inner_product(BuildContext& ctx, const Node& n) {
  const detail::DenseParams dp = detail::dense_params(ctx.graph(), n);
  const std::int64_t M = dp.M, N = dp.N, K = dp.K;
  const bool has_bias = !dp.bias.f.empty();
  const TensorData& wt = dp.weights();
  const TensorData& bias = dp.bias;

  TensorRef src = ctx.input(n.inputs[0], Form::Plain);
  src.md = plain_md({M, K});
  TensorRef dst = ctx.output(n.outputs[0], Form::Plain);
  dst.md = plain_md({M, N});
  const memory::desc user_w = plain_md({N, K});
  const memory::desc any_w({N, K}, memory::data_type::f32, Tag::any);
  const memory::desc bias_md = plain_md({N});
  auto op = std::make_unique<PrimitiveOp>();
  std::vector<std::pair<int, TensorRef>> extra;
  dnnl::primitive_attr attr = default_attr();
  attr.set_post_ops(make_post_ops(ctx, n, Form::Plain, extra));
  auto d = has_bias ? dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_inference, src.md, any_w, bias_md, dst.md)
                    : dnnl::inner_product_forward::desc(dnnl::prop_kind::forward_inference, src.md, any_w, dst.md);
  dnnl::inner_product_forward::primitive_desc pd(d, attr, ctx.engine());
  op->prim = dnnl::inner_product_forward(pd);
  op->args[DNNL_ARG_WEIGHTS] = pack_weights(ctx.engine(), wt, user_w, pd.weights_desc(), op->buffers);
  if (has_bias) op->args[DNNL_ARG_BIAS] = pack_weights(ctx.engine(), bias, bias_md, pd.bias_desc(), op->buffers);
  op->acts[DNNL_ARG_SRC] = src;
  op->acts[DNNL_ARG_DST] = dst;
  for (auto& [arg, t] : extra) op->acts[arg] = t;
  op->name = n.label();
  op->flops = 2.0 * static_cast<double>(M * N * K);
  finish(*op, pd);
  ctx.add(std::move(op));
}

}  // namespace vinfer::cpu
