// Standalone activations, Sqrt and Pow by a constant (oneDNN eltwise) and Add/Mul/Sub/Div with
// broadcasting (oneDNN binary). Most activations never get here: the passes
// fuse them into the producing convolution.
#include <omp.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "cpu/cpu_op.hpp"
#include "cpu/kernels.hpp"
#include "graph/activation.hpp"

namespace vinfer::cpu {
namespace {

// 4-D float tensors live blocked, or in the form the full-size input
// already has where that is channels-last (after a grouped convolution
// that runs so) or plain with channels that are not whole blocks (oneDNN's
// element-wise kernels take no padded blocks; a concatenation written in
// place, whole blocks only, needs its parts blocked); everything else plain.
Form form_of(const BuildContext& ctx, const Node& n, const Shape& s) {
  if (s.size() != 4) return Form::Plain;
  for (int v : n.inputs)
    if (v >= 0 && !ctx.graph().value(v).is_constant() && ctx.graph().value(v).shape == s) {
      if (ctx.has_form(v, Form::Blocked)) return Form::Blocked;
      if (ctx.has_form(v, Form::ChannelsLast)) return Form::ChannelsLast;
      if (ctx.has_form(v, Form::Plain) && s[1] % channel_block() != 0) return Form::Plain;
      return Form::Blocked;
    }
  return Form::Blocked;
}

// The oneDNN steps of an activation, or of Sqrt, or of Pow with a constant
// scalar exponent (older exporters' decomposed LayerNormalization squares
// and takes roots: on the reference evaluator they had cost ConvNeXt-T
// 138 ms a pass).
std::vector<EltwiseStep> unary_steps(const Graph& g, const Node& n) {
  if (detail::is_activation(n.op)) return eltwise_steps(detail::activation_of(g, n));
  if (n.op == "Sqrt") return {{dnnl::algorithm::eltwise_sqrt}};
  if (n.op == "Pow") {
    const TensorData* e = n.inputs.size() == 2 ? g.constant(n.inputs[1]) : nullptr;
    if (!e || e->dtype != DType::F32 || e->numel() != 1) unsupported(n, "a Pow whose exponent is not a constant float scalar");
    if (e->f[0] == 2.f) return {{dnnl::algorithm::eltwise_square}};  // (x * x, as the reference's pow(x, 2) is exactly)
    return {{dnnl::algorithm::eltwise_pow, 1.f, e->f[0]}};
  }
  unsupported(n, "the operator");
}

}  // namespace

namespace {

class InPlaceOp : public CpuOp {
 public:
  void (*fn)(const float*, float*, std::int64_t) = nullptr;

  void execute(dnnl::stream&) override {
    auto* x = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
    const auto n = static_cast<std::int64_t>(acts.at(DNNL_ARG_DST).md.get_size() / sizeof(float));
    constexpr std::int64_t kChunk = 16 << 10;  // floats, a multiple of either vector
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < (n + kChunk - 1) / kChunk; ++c)
      fn(x + c * kChunk, x + c * kChunk, std::min(kChunk, n - c * kChunk));
  }
};

}  // namespace

std::unique_ptr<CpuOp> make_in_place(const TensorRef& t, InPlaceFn f, const std::string& name) {
  auto op = std::make_unique<InPlaceOp>();
  const bool wide = channel_block() == 16;
  op->fn = f == InPlaceFn::Silu ? (wide ? silu_avx512 : silu_avx2) : (wide ? gelu_avx512 : gelu_avx2);
  op->acts[DNNL_ARG_DST] = t;
  op->name = name;
  op->impl = std::string(f == InPlaceFn::Silu ? "vinfer:silu" : "vinfer:gelu") + (wide ? "_avx512" : "_avx2");
  return op;
}

void build_eltwise(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& s = g.value(n.inputs[0]).shape;
  if (g.value(n.inputs[0]).dtype != DType::F32) unsupported(n, "a non-float input");
  const std::vector<EltwiseStep> steps = unary_steps(g, n);
  auto desc = [&](const EltwiseStep& e, const memory::desc& md) {
    return dnnl::eltwise_forward::primitive_desc(
        dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, e.alg, md, e.alpha, e.beta), default_attr(), ctx.engine());
  };
  // oneDNN keeps a blocked tensor's padded lanes zero, so it runs a step
  // that does not map 0 to 0 (HardSigmoid's linear step) on padded blocks
  // only with its reference kernel: such a tensor goes plain.
  Form form = form_of(ctx, n, s);
  for (const EltwiseStep& e : steps)
    if (form == Form::Blocked && std::string(desc(e, md_for(s, form)).impl_info_str()).rfind("ref", 0) == 0) form = Form::Plain;
  TensorRef src = ctx.input(n.inputs[0], form);
  const TensorRef dst = ctx.output(n.outputs[0], form);
  for (const EltwiseStep& e : steps) {  // later steps in place
    auto op = std::make_unique<PrimitiveOp>();
    const auto pd = desc(e, src.md);
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
    // oneDNN wants equal ranks: prepend 1s (same bytes).
    Shape s = g.value(in[i]).shape;
    s.insert(s.begin(), ys.size() - s.size(), 1);
    mds[i] = md_for(s, form);
  }
  const dnnl::algorithm alg = n.op == "Add"   ? dnnl::algorithm::binary_add
                              : n.op == "Mul" ? dnnl::algorithm::binary_mul
                              : n.op == "Sub" ? dnnl::algorithm::binary_sub
                                              : dnnl::algorithm::binary_div;
  dnnl::binary::desc d(alg, mds[0], mds[1], md_for(ys, form));
  dnnl::binary::primitive_desc pd(d, default_attr(), ctx.engine());
  if (std::string(pd.impl_info_str()).rfind("ref", 0) == 0) return build_broadcast_binary(ctx, n, in);
  for (int i = 0; i < 2; ++i) {
    const int arg = i == 0 ? DNNL_ARG_SRC_0 : DNNL_ARG_SRC_1;
    if (const TensorData* c = g.constant(in[i])) {
      Shape s = c->shape;
      s.insert(s.begin(), ys.size() - s.size(), 1);
      op->args[arg] = pack_weights(ctx.engine(), *c, plain_md(s), mds[i], op->buffers);
    } else {
      TensorRef t = ctx.input(in[i], form);
      t.md = mds[i];
      op->acts[arg] = t;
    }
  }
  op->prim = dnnl::binary(pd);
  op->name = n.label();
  op->acts[DNNL_ARG_DST] = ctx.output(n.outputs[0], form);
  finish(*op, pd);
  ctx.add(std::move(op));
}

}  // namespace vinfer::cpu
