// ConvTranspose on oneDNN's deconvolution (2-D, constant weights), in the
// blocked layout the convolutions around it use.
#include "cpu/cpu_op.hpp"
#include "graph/op_params.hpp"

namespace vinfer::cpu {

void build_conv_transpose(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const bool has_bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  const TensorData* w = g.constant(n.inputs[1]);
  const TensorData* b = has_bias ? g.constant(n.inputs[2]) : nullptr;
  if (!w || (has_bias && !b)) unsupported(n, "a ConvTranspose whose weights or bias are computed at run time");
  if (!n.post_ops.empty()) unsupported(n, "a ConvTranspose with a fused activation");
  const Shape& xs = g.value(n.inputs[0]).shape;
  const Shape& ys = g.value(n.outputs[0]).shape;
  if (xs.size() != 4) unsupported(n, "a ConvTranspose other than 2-D");
  const detail::TransposedWindow p = detail::conv_transpose_params(n, xs, w->shape);
  // oneDNN's output size: (in - 1) x stride + dilated kernel - left - right;
  // output_padding and an output_shape cut at the end make the right pad.
  memory::dims strides, dil, pl, pr;
  for (std::size_t i = 0; i < 2; ++i) {
    const std::int64_t dk = (p.kernel[i] - 1) * p.dilations[i] + 1;
    const std::int64_t right = (xs[2 + i] - 1) * p.strides[i] + dk - p.pads_begin[i] - p.out[i];
    if (p.pads_begin[i] < 0 || right < 0) unsupported(n, "an output_shape beyond the transposed window");
    strides.push_back(p.strides[i]), dil.push_back(p.dilations[i] - 1), pl.push_back(p.pads_begin[i]), pr.push_back(right);
  }
  const std::int64_t groups = p.group, oc = ys[1], ic = xs[1];
  // ONNX's weights are [in, out / group, kh, kw]: in oneDNN's logical
  // (g)oihw order, the physical layout iohw (giohw by groups).
  const memory::dims w_dims = groups == 1 ? memory::dims{oc, ic, w->shape[2], w->shape[3]}
                                          : memory::dims{groups, oc / groups, ic / groups, w->shape[2], w->shape[3]};
  const memory::desc user_w(w_dims, memory::data_type::f32, groups == 1 ? Tag::iohw : Tag::giohw);
  const memory::desc any_w(w_dims, memory::data_type::f32, Tag::any);
  const memory::desc bias_md({oc}, memory::data_type::f32, Tag::a);
  const memory::desc src_md = md_for(xs, Form::Blocked), dst_md = md_for(ys, Form::Blocked);
  const auto desc = has_bias ? dnnl::deconvolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                                                 src_md, any_w, bias_md, dst_md, strides, dil, pl, pr)
                             : dnnl::deconvolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                                                 src_md, any_w, dst_md, strides, dil, pl, pr);
  const dnnl::deconvolution_forward::primitive_desc pd(desc, default_attr(), ctx.engine());
  auto op = std::make_unique<PrimitiveOp>();
  op->prim = dnnl::deconvolution_forward(pd);
  op->args[DNNL_ARG_WEIGHTS] = pack_weights(ctx.engine(), *w, user_w, pd.weights_desc(), op->buffers);
  if (has_bias) op->args[DNNL_ARG_BIAS] = pack_weights(ctx.engine(), *b, bias_md, pd.bias_desc(), op->buffers);
  op->acts[DNNL_ARG_SRC] = ctx.input(n.inputs[0], Form::Blocked);
  op->acts[DNNL_ARG_DST] = ctx.output(n.outputs[0], Form::Blocked);
  op->name = n.label();
  op->flops = 2.0 * static_cast<double>(numel(xs)) * static_cast<double>(w->numel() / ic);
  finish(*op, pd);
  ctx.add(std::move(op));
}

}  // namespace vinfer::cpu
