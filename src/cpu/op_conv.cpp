// Conv -> oneDNN convolution, weights packed once into the layout the
// implementation chose, bias and post-ops (activations, residual add) fused.
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "cpu/conv1x1.hpp"
#include "cpu/cpu_op.hpp"
#include "cpu/winograd.hpp"
#include "graph/op_params.hpp"

namespace vinfer::cpu {
namespace {

// An op run by one of vinfer's own convolution kernels (WinogradF43,
// Conv1x1Pre): its scratch is the program's shared scratchpad, warm from the
// layers before.
template <class Kernel>
class OwnConvOp : public CpuOp {
 public:
  OwnConvOp(std::unique_ptr<Kernel> k, int threads) : kernel(std::move(k)), threads(threads) {
    scratch_md = memory::desc({static_cast<memory::dim>(kernel->scratch_bytes(threads) / sizeof(float))},
                              memory::data_type::f32, Tag::a);
  }
  std::unique_ptr<Kernel> kernel;
  int threads;
  const float* src = nullptr;
  float* dst = nullptr;
  void* scratch = nullptr;
  void bind(const dnnl::engine& eng, const std::function<void*(int)>& address, void* shared_scratch) override {
    CpuOp::bind(eng, address, shared_scratch);
    src = static_cast<const float*>(args.at(DNNL_ARG_SRC).get_data_handle());
    dst = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
    scratch = shared_scratch;
  }
  void execute(dnnl::stream&) override { kernel->run(src, dst, scratch, threads); }
};

// Clamp bounds for a node's post-ops if they are at most one Relu or Clip.
bool clamp_of(const Node& n, float& lo, float& hi) {
  lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  if (n.post_ops.size() > 1) return false;
  for (const PostOp& po : n.post_ops) {
    if (po.kind == PostOp::Relu) lo = 0.f;
    else if (po.kind == PostOp::Clip) lo = po.alpha, hi = po.beta;
    else return false;
  }
  return true;
}

// Where oneDNN has no Winograd for the shape (it has none for AVX2 in 2.6),
// vinfer's F(4,3) runs instead on maps of 14x14 and more (DenseNet121's 14x14
// layers on AVX2, in the network: 2.45 vs 3.19 ms direct); and over oneDNN's
// AVX-512 F(2,3) on maps of 28x28 and more (per layer, in the networks:
// DenseNet121's 56x56 layers 0.66 vs 1.05 ms, its 28x28 ones 0.20 vs 0.24,
// ResNet50's 56x56 ones 0.47 vs 0.74; at 14x14 oneDNN's stays faster).
// Measured with `vinfer profile MODEL` under each VINFER_WINOGRAD and with
// bench/bench_conv. oneDNN's F(4,3) (wide layers, VGG) stays. onednn_impl:
// the implementation oneDNN offered ("" for none). VINFER_WINOGRAD=vinfer
// prefers vinfer's wherever it applies (to compare), =onednn never uses it.
bool try_own_winograd(BuildContext& ctx, const Node& n, const detail::WindowParams& p, const Shape& xs,
                      const Shape& ys, const TensorData& w, const TensorData* b, const std::string& onednn_impl) {
  const char* env = std::getenv("VINFER_WINOGRAD");
  const bool prefer = env && std::strcmp(env, "vinfer") == 0;
  const std::int64_t map = ys[2] * ys[3];
  const bool beats_onednn = (onednn_impl.empty() && map >= 14 * 14) ||
                            (onednn_impl.find("wino_2x3") != std::string::npos && map >= 28 * 28);
  if ((env && std::strcmp(env, "onednn") == 0) || (!beats_onednn && !prefer)) return false;
  float lo, hi;
  if (!clamp_of(n, lo, hi)) return false;
  WinogradGeometry geo;
  geo.ic = static_cast<int>(xs[1]);
  geo.oc = static_cast<int>(ys[1]);
  geo.h = static_cast<int>(xs[2]);
  geo.w = static_cast<int>(xs[3]);
  geo.oh = static_cast<int>(ys[2]);
  geo.ow = static_cast<int>(ys[3]);
  geo.pad_t = static_cast<int>(p.pads_begin[0]);
  geo.pad_l = static_cast<int>(p.pads_begin[1]);
  geo.block = channel_block();
  // Split by tiles, each chunk of tiles streams all transformed weights (36 x
  // ic x oc floats): too little work per weight on small maps when those are
  // large (VGG19's 512-channel 28x28 layers had run 2.4x slower than direct).
  // Those (U over 1 MiB, at most 64 tiles) are split by positions instead,
  // which reads U once: with AVX2, VGG19's 28x28 layers 9-11 vs 27-29 ms
  // direct, its 14x14 ones 4.2-4.8 vs 5.9-6.2, ResNet50's 14x14 ones 1.3 vs
  // 2.1; with AVX-512, ResNet50's 28x28 ones 0.57 vs 0.70 split by tiles (at
  // 14x14 oneDNN's F(2,3) stays: 0.80 vs 0.95, as its weights are 2.25x
  // smaller and come from memory). On 7x7 maps the transforms cost more than
  // they save.
  const double weight_mib = 36.0 * geo.ic * geo.oc * 4 / (1 << 20);
  const int tiles = ((geo.oh + 3) / 4) * ((geo.ow + 3) / 4);
  const bool by_tiles = WinogradF43::choose_split(geo) == WinogradF43::Split::Tiles;
  if (xs[0] != 1 || map < 14 * 14 || (by_tiles && tiles < 96 && weight_mib > 4) || !WinogradF43::supports(geo)) return false;
  auto op = std::make_unique<OwnConvOp<WinogradF43>>(
      std::make_unique<WinogradF43>(geo, w.f.data(), b ? b->f.data() : nullptr, lo, hi), omp_get_max_threads());
  op->acts[DNNL_ARG_SRC] = ctx.input(n.inputs[0], Form::Blocked);
  op->acts[DNNL_ARG_DST] = ctx.output(n.outputs[0], Form::Blocked);
  op->name = n.label();
  op->impl = std::string("vinfer:wino_f43") + (by_tiles ? "" : "_pos") + (channel_block() == 16 ? "_avx512" : "_avx2");
  op->flops = 2.0 * static_cast<double>(numel(ys)) * static_cast<double>(w.numel() / w.shape[0]);
  ctx.add(std::move(op));
  return true;
}

// The vinfer.ScaleShift (+ ReLU) whose output only this 1x1 convolution
// reads, if the fused kernel takes the pair; else null. Used with AVX-512
// (DenseNet121's dense layers' 1x1 convolutions with their normalization, in
// the network: 11.7 vs 12.8 ms); with AVX2 oneDNN's 1x1 plus the separate
// pass measured faster (on an AVX-512 machine limited to AVX2, blocks and
// first two transitions: 29.8 vs 25.3 ms), so there it stays. VINFER_CONV1X1=vinfer fuses wherever the kernel runs (to compare),
// =onednn never.
const Node* absorbable_scale_shift(const BuildContext& ctx, const Node& conv) {
  const char* env = std::getenv("VINFER_CONV1X1");
  const bool wanted = env ? std::strcmp(env, "vinfer") == 0 : channel_block() == 16;
  if (!wanted || conv.op != "Conv" || conv.inputs.size() < 2) return nullptr;
  const Graph& g = ctx.graph();
  const Node* s = sole_reader_pre_activation(ctx, conv.inputs[0]);
  if (!s) return nullptr;
  const Shape& xs = g.value(conv.inputs[0]).shape;
  const TensorData* w = g.constant(conv.inputs[1]);
  if (!w || xs.size() != 4 || xs[0] != 1 || w->shape.size() != 4) return nullptr;
  if (conv.inputs.size() > 2 && conv.inputs[2] >= 0 && !g.constant(conv.inputs[2])) return nullptr;
  float lo, hi;
  if (!detail::is_pointwise(detail::conv_params(conv, xs, w->shape), w->shape) || !clamp_of(conv, lo, hi)) return nullptr;
  Conv1x1Geometry geo;
  geo.ic = static_cast<int>(xs[1]), geo.oc = static_cast<int>(w->shape[0]), geo.hw = static_cast<int>(xs[2] * xs[3]);
  geo.block = channel_block();
  // Each block of pixels streams all weights: past 1 MiB (DenseNet's last
  // transition, 1024 -> 512) oneDNN's 1x1 plus a separate pass was faster.
  const bool small_weights = static_cast<double>(geo.ic) * geo.oc * sizeof(float) <= (1 << 20);
  return small_weights && Conv1x1Pre::supports(geo) ? s : nullptr;
}

// DenseNet's BatchNorm -> ReLU -> 1x1 convolution as one op (conv1x1.hpp):
// the normalization is applied while the convolution packs its input.
void build_preact_conv1x1(BuildContext& ctx, const Node& n, const Node& s) {
  const Graph& g = ctx.graph();
  const Shape& xs = g.value(n.inputs[0]).shape;
  const TensorData& w = *g.constant(n.inputs[1]);
  const TensorData* b = n.inputs.size() > 2 && n.inputs[2] >= 0 ? g.constant(n.inputs[2]) : nullptr;
  Conv1x1Geometry geo;
  geo.ic = static_cast<int>(xs[1]), geo.oc = static_cast<int>(w.shape[0]), geo.hw = static_cast<int>(xs[2] * xs[3]);
  geo.block = channel_block();
  PreActivation pre;
  pre.scale = g.constant(s.inputs[1])->f.data();
  pre.shift = g.constant(s.inputs[2])->f.data();
  if (!s.post_ops.empty()) pre.lo = 0.f;
  float lo, hi;
  clamp_of(n, lo, hi);
  auto op = std::make_unique<OwnConvOp<Conv1x1Pre>>(
      std::make_unique<Conv1x1Pre>(geo, w.f.data(), b ? b->f.data() : nullptr, pre, lo, hi), omp_get_max_threads());
  op->acts[DNNL_ARG_SRC] = ctx.input(s.inputs[0], Form::Blocked);
  op->acts[DNNL_ARG_DST] = ctx.output(n.outputs[0], Form::Blocked);
  op->name = n.label();
  op->impl = channel_block() == 16 ? "vinfer:conv1x1_preact_avx512" : "vinfer:conv1x1_preact_avx2";
  op->flops = 2.0 * geo.ic * geo.oc * geo.hw;
  ctx.add(std::move(op));
}

}  // namespace

bool scale_shift_absorbed(const BuildContext& ctx, const Node& scale_shift) {
  const std::vector<int>& readers = ctx.consumers(scale_shift.outputs[0]);
  if (readers.size() != 1) return false;
  const Node& reader = ctx.graph().nodes[static_cast<std::size_t>(readers[0])];
  return absorbable_scale_shift(ctx, reader) == &scale_shift || pool_absorbable_scale_shift(ctx, reader) == &scale_shift;
}

void build_conv(BuildContext& ctx, const Node& n) {
  if (const Node* s = absorbable_scale_shift(ctx, n)) return build_preact_conv1x1(ctx, n, *s);
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
  const memory::desc src_md = md_for(xs, in_form), dst_md = blocked_md(ys);

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
    return b ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, src_md, any_w, bias_md, dst_md, strides, dil, pl, pr)
             : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, src_md, any_w, dst_md, strides, dil, pl, pr);
  };
  // Winograd does fewer multiplications for a 3x3 stride-1 convolution (oneDNN's
  // F(2,3) 2.25x, AVX-512 only in 2.6; vinfer's F(4,3) 4x, AVX2). On small maps
  // (7x7) the transforms cost more than they save (measured on DenseNet121's
  // last block), so: 14x14 and up.
  const bool wino_shape = ctx.winograd() && G == 1 && p.kernel == std::vector<std::int64_t>{3, 3} &&
                          p.strides == std::vector<std::int64_t>{1, 1} && p.dilations == std::vector<std::int64_t>{1, 1} &&
                          ys[2] * ys[3] >= 14 * 14 && xs[1] >= 16;
  dnnl::convolution_forward::primitive_desc pd;
  if (wino_shape) {
    try {
      pd = dnnl::convolution_forward::primitive_desc(desc(dnnl::algorithm::convolution_winograd), attr, ctx.engine());
    } catch (const dnnl::error&) {
      // not implemented for this ISA or shape: vinfer's own, or direct below
    }
    if (in_form == Form::Blocked && extra.empty() &&
        try_own_winograd(ctx, n, p, xs, ys, *w, b, pd ? std::string(pd.impl_info_str()) : std::string()))
      return;
  }
  TensorRef src = ctx.input(n.inputs[0], in_form);
  TensorRef dst = ctx.output(n.outputs[0], Form::Blocked);
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
