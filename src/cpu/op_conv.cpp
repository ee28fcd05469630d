// Conv -> oneDNN convolution, weights packed once into the layout the
// implementation chose, bias and post-ops (activations, residual add) fused.
#include "cpu/cpu_op.hpp"
#include "graph/op_params.hpp"

namespace vinfer::cpu {

void build_conv(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& xs = g.value(n.inputs[0]).shape;
  const TensorData* w = g.constant(n.inputs[1]);
  if (!w) unsupported(n, "a non-constant weight");
  const TensorData* b = n.inputs.size() > 2 && n.inputs[2] >= 0 ? g.constant(n.inputs[2]) : nullptr;
  if (n.inputs.size() > 2 && n.inputs[2] >= 0 && !b) unsupported(n, "a non-constant bias");
  const detail::WindowParams p = detail::conv_params(n, xs, w->shape);
  const Shape& ys = g.value(n.outputs[0]).shape;

  // The first convolution of a network reads the plain 3-channel image directly:
  // oneDNN has fast kernels for plain src with few channels, and only its
  // reference one for a blocked src padded from 3 channels to a whole block.
  const Form in_form = xs[1] % channel_block() == 0 ? Form::Blocked : Form::Plain;
  TensorRef src = ctx.input(n.inputs[0], in_form);
  TensorRef dst = ctx.output(n.outputs[0], Form::Blocked);

  const std::int64_t G = p.group;
  memory::desc user_w;
  if (G == 1) {
    user_w = memory::desc(to_dims(w->shape), memory::data_type::f32, Tag::oihw);
  } else {
    user_w = memory::desc({G, w->shape[0] / G, w->shape[1], w->shape[2], w->shape[3]}, memory::data_type::f32, Tag::goihw);
  }
  memory::desc any_w(user_w.dims(), memory::data_type::f32, Tag::any);
  memory::desc bias_md = memory::desc({w->shape[0]}, memory::data_type::f32, Tag::a);
  memory::dims strides(p.strides.begin(), p.strides.end()), dil, pl(p.pads_begin.begin(), p.pads_begin.end()),
      pr(p.pads_end.begin(), p.pads_end.end());
  for (std::int64_t d : p.dilations) dil.push_back(d - 1);  // oneDNN counts dilation from 0

  auto op = std::make_unique<PrimitiveOp>();
  std::vector<std::pair<int, TensorRef>> extra;
  dnnl::primitive_attr attr = default_attr();
  attr.set_post_ops(make_post_ops(ctx, n, Form::Blocked, extra));
  auto desc = [&](dnnl::algorithm alg) {
    return b ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, src.md, any_w, bias_md, dst.md, strides, dil, pl, pr)
             : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, src.md, any_w, dst.md, strides, dil, pl, pr);
  };
  // Winograd F(4,3) does 2.25x fewer multiplications for a 3x3 stride-1 convolution;
  // oneDNN 2.6 has it for AVX-512 only. On small maps (7x7) its transforms cost more
  // than they save (measured on DenseNet121's last block), so: 14x14 and up.
  const bool wino_shape = ctx.winograd() && G == 1 && p.kernel == std::vector<std::int64_t>{3, 3} &&
                          p.strides == std::vector<std::int64_t>{1, 1} && p.dilations == std::vector<std::int64_t>{1, 1} &&
                          ys[2] * ys[3] >= 14 * 14 && xs[1] >= 16;
  dnnl::convolution_forward::primitive_desc pd;
  if (wino_shape) {
    try {
      pd = dnnl::convolution_forward::primitive_desc(desc(dnnl::algorithm::convolution_winograd), attr, ctx.engine());
    } catch (const dnnl::error&) {
      // not implemented for this ISA or shape: direct below
    }
  }
  if (!pd) pd = dnnl::convolution_forward::primitive_desc(desc(dnnl::algorithm::convolution_direct), attr, ctx.engine());
  op->prim = dnnl::convolution_forward(pd);
  op->args[DNNL_ARG_WEIGHTS] = pack_weights(ctx.engine(), *w, user_w, pd.weights_desc());
  if (b) op->args[DNNL_ARG_BIAS] = pack_weights(ctx.engine(), *b, bias_md, pd.bias_desc());
  op->acts[DNNL_ARG_SRC] = src;
  op->acts[DNNL_ARG_DST] = dst;
  for (auto& [arg, t] : extra) op->acts[arg] = t;
  op->name = n.label();
  op->flops = 2.0 * static_cast<double>(numel(ys)) * static_cast<double>(w->numel() / w->shape[0]);
  finish(*op, pd);
  ctx.add(std::move(op));
}

}  // namespace vinfer::cpu
