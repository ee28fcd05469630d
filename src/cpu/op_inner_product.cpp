// Gemm and MatMul with a constant right operand -> oneDNN inner product
// (weights packed once; alpha and beta folded into weights and bias at load).
#include "cpu/cpu_op.hpp"

namespace vinfer::cpu {

void build_inner_product(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& as = g.value(n.inputs[0]).shape;
  const TensorData* b = g.constant(n.inputs[1]);
  if (!b) unsupported(n, "a non-constant right operand");
  const bool gemm = n.op == "Gemm";
  const bool ta = gemm && n.get_int("transA", 0) != 0, tb = gemm && n.get_int("transB", 0) != 0;
  // A transposed [K, 1] has the bytes of [1, K].
  if (ta && as[1] != 1) unsupported(n, "transA with more than one row");
  const std::int64_t K = ta ? as[0] : as.back();
  const std::int64_t M = numel(as) / K;
  const std::int64_t N = tb ? b->shape[0] : b->shape[1];
  const float alpha = gemm ? n.get_float("alpha", 1.f) : 1.f, beta = gemm ? n.get_float("beta", 1.f) : 1.f;

  // Weights as oneDNN's [N, K] ("oi"), scaled by alpha.
  std::vector<float> w(static_cast<std::size_t>(N * K));
  for (std::int64_t j = 0; j < N; ++j)
    for (std::int64_t k = 0; k < K; ++k)
      w[static_cast<std::size_t>(j * K + k)] = alpha * (tb ? b->f[static_cast<std::size_t>(j * K + k)] : b->f[static_cast<std::size_t>(k * N + j)]);
  TensorData wt = TensorData::f32({N, K}, std::move(w));
  TensorData bias;
  const bool has_bias = gemm && n.inputs.size() > 2 && n.inputs[2] >= 0;
  if (has_bias) {
    const TensorData* c = g.constant(n.inputs[2]);
    if (!c) unsupported(n, "a non-constant C");
    if (c->numel() != N || (c->shape.size() == 2 && c->shape[0] != 1)) unsupported(n, "C that is not one row of " + std::to_string(N));
    std::vector<float> bv(c->f);
    for (float& v : bv) v *= beta;
    bias = TensorData::f32({N}, std::move(bv));
  }

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
  op->args[DNNL_ARG_WEIGHTS] = pack_weights(ctx.engine(), wt, user_w, pd.weights_desc());
  if (has_bias) op->args[DNNL_ARG_BIAS] = pack_weights(ctx.engine(), bias, bias_md, pd.bias_desc());
  op->acts[DNNL_ARG_SRC] = src;
  op->acts[DNNL_ARG_DST] = dst;
  for (auto& [arg, t] : extra) op->acts[arg] = t;
  op->name = n.label();
  op->flops = 2.0 * static_cast<double>(M * N * K);
  finish(*op, pd);
  ctx.add(std::move(op));
}

}  // namespace vinfer::cpu
