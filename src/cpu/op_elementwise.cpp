// Standalone activations (oneDNN eltwise) and Add/Mul/Sub/Div with
// broadcasting (oneDNN binary). Most activations never get here: the passes
// fuse them into the producing convolution.
#include <limits>
#include <utility>

#include "cpu/cpu_op.hpp"
#include "graph/activation.hpp"

namespace vinfer::cpu {
namespace {

// 4-D float tensors live blocked, or channels-last where the full-size
// input already is only so (after a grouped convolution that runs so);
// everything else plain.
Form form_of(const BuildContext& ctx, const Node& n, const Shape& s) {
  if (s.size() != 4) return Form::Plain;
  for (int v : n.inputs)
    if (v >= 0 && !ctx.graph().value(v).is_constant() && ctx.graph().value(v).shape == s)
      return ctx.has_form(v, Form::ChannelsLast) && !ctx.has_form(v, Form::Blocked) ? Form::ChannelsLast : Form::Blocked;
  return Form::Blocked;
}

}  // namespace

void build_eltwise(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Form form = form_of(ctx, n, g.value(n.inputs[0]).shape);
  TensorRef src = ctx.input(n.inputs[0], form);
  const TensorRef dst = ctx.output(n.outputs[0], form);
  for (const EltwiseStep& e : eltwise_steps(detail::activation_of(g, n))) {  // later steps in place
    auto op = std::make_unique<PrimitiveOp>();
    dnnl::eltwise_forward::desc d(dnnl::prop_kind::forward_inference, e.alg, src.md, e.alpha, e.beta);
    dnnl::eltwise_forward::primitive_desc pd(d, default_attr(), ctx.engine());
    op->prim = dnnl::eltwise_forward(pd);
    op->name = n.label();
    op->acts[DNNL_ARG_SRC] = src;
    op->acts[DNNL_ARG_DST] = dst;
    finish(*op, pd);
    ctx.add(std::move(op));
    src = dst;
  }
}

void build_binary(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& ys = g.value(n.outputs[0]).shape;
  if (g.value(n.outputs[0]).dtype != DType::F32) unsupported(n, "integer arithmetic on runtime values");
  const Form form = form_of(ctx, n, ys);
  auto op = std::make_unique<PrimitiveOp>();
  // oneDNN broadcasts its second operand only (else its reference kernel
  // runs): Add and Mul take the full-size operand first (squeeze-and-excite
  // blocks write Mul(scale, x)).
  int in[2] = {n.inputs[0], n.inputs[1]};
  if ((n.op == "Add" || n.op == "Mul") && g.value(in[0]).shape != ys && g.value(in[1]).shape == ys) std::swap(in[0], in[1]);
  memory::desc mds[2];
  for (int i = 0; i < 2; ++i) {
    const int v = in[i];
    // oneDNN wants equal ranks: prepend 1s (same bytes).
    Shape s = g.value(v).shape;
    s.insert(s.begin(), ys.size() - s.size(), 1);
    const memory::desc md = md_for(s, form);
    mds[i] = md;
    const int arg = i == 0 ? DNNL_ARG_SRC_0 : DNNL_ARG_SRC_1;
    if (const TensorData* c = g.constant(v)) {
      op->args[arg] = pack_weights(ctx.engine(), *c, plain_md(s), md, op->buffers);
    } else {
      TensorRef t = ctx.input(v, form);
      t.md = md;
      op->acts[arg] = t;
    }
  }
  const dnnl::algorithm alg = n.op == "Add"   ? dnnl::algorithm::binary_add
                              : n.op == "Mul" ? dnnl::algorithm::binary_mul
                              : n.op == "Sub" ? dnnl::algorithm::binary_sub
                                              : dnnl::algorithm::binary_div;
  TensorRef dst = ctx.output(n.outputs[0], form);
  dnnl::binary::desc d(alg, mds[0], mds[1], dst.md);
  dnnl::binary::primitive_desc pd(d, default_attr(), ctx.engine());
  op->prim = dnnl::binary(pd);
  op->name = n.label();
  op->acts[DNNL_ARG_DST] = dst;
  finish(*op, pd);
  ctx.add(std::move(op));
}

}  // namespace vinfer::cpu
