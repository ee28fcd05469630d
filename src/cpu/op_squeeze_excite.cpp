// Squeeze-and-excite's gate, GlobalAveragePool -> 1x1 Conv -> 1x1 Conv on
// the pooled 1x1 map (each with at most one function after it), as one op
// (squeeze_excite.hpp): built for the pool, the two convolutions then not,
// nor the Mul(x, s) after them unless a 1x1 convolution applies it.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "cpu/cpu_op.hpp"
#include "cpu/squeeze_excite.hpp"
#include "util/debug_env.hpp"

namespace vinfer::cpu {

bool SqueezeExcite::supports(int block) { return simd_block_runs(block); }

SqueezeExcite::SqueezeExcite(int c, int r, int block, const float* w1, const float* b1, SeAct act1, const float* w2,
                             const float* b2, SeAct act2)
    : c_(c), r_(r), block_(block), cpad_((c + block - 1) / block * block), rpad_((r + block - 1) / block * block) {
  const std::size_t n1 = static_cast<std::size_t>(c_) * rpad_, n2 = static_cast<std::size_t>(r_) * cpad_;
  w_bytes_ = sizeof(float) * (n1 + rpad_ + n2 + cpad_);
  w_ = aligned_block(w_bytes_);
  float* w = static_cast<float*>(w_.get());
  std::memset(w, 0, w_bytes_);
  float *w1t = w, *bias1 = w1t + n1, *w2t = bias1 + rpad_, *bias2 = w2t + n2;
  for (int o = 0; o < r_; ++o)
    for (int i = 0; i < c_; ++i) w1t[static_cast<std::size_t>(i) * rpad_ + o] = w1[static_cast<std::size_t>(o) * c_ + i];
  for (int o = 0; o < c_; ++o)
    for (int i = 0; i < r_; ++i) w2t[static_cast<std::size_t>(i) * cpad_ + o] = w2[static_cast<std::size_t>(o) * r_ + i];
  if (b1) std::copy(b1, b1 + r_, bias1);
  if (b2) std::copy(b2, b2 + c_, bias2);
  l1_ = {w1t, c_, rpad_, bias1, act1};
  l2_ = {w2t, r_, cpad_, bias2, act2};
}

void SqueezeExcite::run(const float* x, std::int64_t pixels, int images, std::size_t x_image, float* s,
                        std::size_t s_image, void* scratch, int threads, float* y, std::size_t y_image) const {
  const auto mean_fn = block_ == 16 ? se_mean_avx512 : se_mean_avx2;
  const auto scale_fn = block_ == 16 ? se_scale_avx512 : se_scale_avx2;
  const auto layer_fn = block_ == 16 ? se_layer_avx512 : se_layer_avx2;
  const auto finish_fn = block_ == 16 ? se_finish_avx512 : se_finish_avx2;
  const int blocks = cpad_ / block_, groups = (blocks + 3) / 4;
  float* const mean = static_cast<float*>(scratch);
  float* const gate = mean + cpad_;   // s, where y is written
  float* const parts = gate + cpad_;  // threads x rpad
  // x * s in pieces of up to 4K pixels of a block (EfficientNet-B0's first
  // gate: 2 blocks of 12544 pixels, 8 pieces for 2 threads)
  const std::int64_t pieces = (pixels + 4095) / 4096, piece = (pixels + pieces - 1) / pieces;
  // Per image: the means, split by channel blocks; the first layer's sums,
  // split by input channels (its weights, up to a few hundred KB, read by
  // all threads, not one); each thread then finishes the middle values for
  // itself and takes its groups of four output vectors of the second.
#pragma omp parallel num_threads(std::max(1, std::min(threads, omp_get_max_threads())))
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    // The first layer's sums in `threads` parts whoever runs them, added in
    // one order: the same gate on any number of threads.
    const int np = std::max(1, threads);
    float* const hidden = parts + static_cast<std::size_t>(np + t) * rpad_;
    for (int i = 0; i < images; ++i) {
      const float* xi = x + i * x_image;
      float* si = y ? gate : s + i * s_image;
#pragma omp for schedule(static)
      for (int b = 0; b < blocks; ++b) mean_fn(xi + static_cast<std::size_t>(b) * pixels * block_, pixels, mean + b * block_);
      for (int part = t; part < np; part += n)
        layer_fn(l1_, mean, c_ * part / np, c_ * (part + 1) / np, 0, rpad_ / block_, false, parts + static_cast<std::size_t>(part) * rpad_);
#pragma omp barrier
      finish_fn(l1_, parts, np, rpad_, rpad_ / block_, hidden);
#pragma omp for schedule(static)
      for (int g = 0; g < groups; ++g) {
        layer_fn(l2_, hidden, 0, r_, 4 * g, std::min(4 * g + 4, blocks), true, si);
        if (g == groups - 1) std::fill(si + c_, si + cpad_, 0.f);
      }
      if (!y) continue;
#pragma omp for schedule(static)
      for (std::int64_t u = 0; u < blocks * pieces; ++u) {
        const std::int64_t b = u / pieces, p0 = u % pieces * piece, at = (b * pixels + p0) * block_;
        scale_fn(xi + at, si + b * block_, std::min(piece, pixels - p0), y + i * y_image + at);
      }
    }
  }
}

namespace {

// The SeAct of a node's post-ops (none, or one Relu, Clip, Swish, Sigmoid or
// HardSigmoid), if it has one.
bool se_act_of(const Node& n, SeAct& a) {
  a = SeAct{};
  if (n.post_ops.empty()) return true;
  if (n.post_ops.size() != 1) return false;
  const PostOp& p = n.post_ops[0];
  switch (p.kind) {
    case PostOp::Relu: a.a = 0.f; return true;
    case PostOp::Clip: a.a = p.alpha, a.b = p.beta; return true;
    case PostOp::Swish: a.kind = SeAct::Swish; return true;
    case PostOp::Sigmoid: a.kind = SeAct::Sigmoid; return true;
    case PostOp::HardSigmoid: a.kind = SeAct::HardSigmoid, a.a = p.alpha, a.b = p.beta; return true;
    default: return false;
  }
}

// The 1x1 convolution that is the only reader of `value` ([N, in, 1, 1]),
// turning it into [N, out, 1, 1] with constant weights (and bias) and at
// most one function: out is its weights' first dimension.
const Node* sole_fc_reader(const BuildContext& ctx, int value, std::int64_t in, std::int64_t& out) {
  const Graph& g = ctx.graph();
  const std::vector<int>& readers = ctx.consumers(value);
  if (g.is_output(value) || readers.size() != 1) return nullptr;
  const Node& n = g.nodes[static_cast<std::size_t>(readers[0])];
  SeAct unused;
  if (n.op != "Conv" || n.inputs.size() < 2 || n.inputs[0] != value || n.inputs[1] == value || !se_act_of(n, unused))
    return nullptr;
  const TensorData* w = g.constant(n.inputs[1]);
  const bool has_bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  if (!w || w->shape.size() != 4 || w->shape[1] != in || w->shape[2] != 1 || w->shape[3] != 1 ||
      (has_bias && !g.constant(n.inputs[2])))
    return nullptr;
  out = w->shape[0];
  const Shape& ys = g.value(n.outputs[0]).shape;
  if (ys != Shape{g.value(value).shape[0], out, 1, 1}) return nullptr;
  return &n;
}

struct SqueezeExciteNodes {
  const Node* reduce = nullptr;  // C -> R
  const Node* expand = nullptr;  // R -> C
};

// The gate that a GlobalAveragePool starts, if it is one and runs as one op
// here: float32 (not bf16 nor int8, nor recording ranges), a blocked input,
// an ISA with the kernels. VINFER_SQUEEZE_EXCITE=0: never.
bool squeeze_excite_of(const BuildContext& ctx, const Node& pool, SqueezeExciteNodes& se) {
  if (pool.op != "GlobalAveragePool" || pool.inputs.size() != 1 || ctx.bf16() || ctx.int8() || ctx.recording() ||
      !SqueezeExcite::supports(channel_block()) || detail::debug_env_is(detail::DebugVar::SqueezeExcite, "0"))
    return false;
  const Graph& g = ctx.graph();
  const Value& x = g.value(pool.inputs[0]);
  if (x.dtype != DType::F32 || x.shape.size() != 4 || x.is_constant()) return false;
  std::int64_t r = 0, c = 0;
  se.reduce = sole_fc_reader(ctx, pool.outputs[0], x.shape[1], r);
  se.expand = se.reduce ? sole_fc_reader(ctx, se.reduce->outputs[0], r, c) : nullptr;
  return se.expand && c == x.shape[1];
}

// The Mul(x, s) that is the gate's only reader, if the op may write its
// product (float32, no function after it) and no 1x1 applies it (a
// projection on vinfer's 1x1 kernel: channel_scale_absorbed).
const Node* sole_scale_reader(const BuildContext& ctx, const Node& pool, const SqueezeExciteNodes& se) {
  const Graph& g = ctx.graph();
  const int s = se.expand->outputs[0], x = pool.inputs[0];
  const std::vector<int>& readers = ctx.consumers(s);
  if (g.is_output(s) || readers.size() != 1) return nullptr;
  const Node& m = g.nodes[static_cast<std::size_t>(readers[0])];
  const bool operands = m.inputs.size() == 2 && ((m.inputs[0] == x && m.inputs[1] == s) || (m.inputs[0] == s && m.inputs[1] == x));
  if (m.op != "Mul" || !operands || !m.post_ops.empty() || g.value(m.outputs[0]).shape != g.value(x).shape ||
      channel_scale_absorbed(ctx, m))
    return nullptr;
  return &m;
}

class SqueezeExciteOp : public CpuOp {
 public:
  SqueezeExciteOp(std::unique_ptr<SqueezeExcite> k, std::int64_t pixels, int images, int threads)
      : kernel(std::move(k)), pixels(pixels), images(images), threads(threads) {
    scratch_md = memory::desc({static_cast<memory::dim>(kernel->scratch_bytes(threads) / sizeof(float))},
                              memory::data_type::f32, Tag::a);
  }
  std::unique_ptr<SqueezeExcite> kernel;
  std::int64_t pixels;
  int images, threads;
  bool product = false;  // DNNL_ARG_DST is x * s, not s
  void* scratch = nullptr;
  void bind(const dnnl::engine& eng, const std::function<void*(int)>& address, void* shared_scratch) override {
    CpuOp::bind(eng, address, shared_scratch);
    scratch = shared_scratch;
  }
  void execute(dnnl::stream&) override {
    const auto* x = static_cast<const float*>(args.at(DNNL_ARG_SRC).get_data_handle());
    auto* out = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
    const auto step = [&](int arg) { return acts.at(arg).md.get_size() / sizeof(float) / static_cast<std::size_t>(images); };
    if (product) kernel->run(x, pixels, images, step(DNNL_ARG_SRC), nullptr, 0, scratch, threads, out, step(DNNL_ARG_DST));
    else kernel->run(x, pixels, images, step(DNNL_ARG_SRC), out, step(DNNL_ARG_DST), scratch, threads);
  }
  std::vector<ByteSpan> weights() const override { return {kernel->packed_weights()}; }
};

}  // namespace

bool build_squeeze_excite(BuildContext& ctx, const Node& pool) {
  SqueezeExciteNodes se;
  if (!squeeze_excite_of(ctx, pool, se)) return false;
  const Graph& g = ctx.graph();
  const Shape& xs = g.value(pool.inputs[0]).shape;
  const TensorData& w1 = *g.constant(se.reduce->inputs[1]);
  const TensorData& w2 = *g.constant(se.expand->inputs[1]);
  const auto bias = [&](const Node& n) {
    return n.inputs.size() > 2 && n.inputs[2] >= 0 ? g.constant(n.inputs[2])->f.data() : nullptr;
  };
  SeAct a1, a2;
  se_act_of(*se.reduce, a1), se_act_of(*se.expand, a2);
  const int c = static_cast<int>(xs[1]), r = static_cast<int>(w1.shape[0]);
  auto op = std::make_unique<SqueezeExciteOp>(
      std::make_unique<SqueezeExcite>(c, r, channel_block(), w1.f.data(), bias(*se.reduce), a1, w2.f.data(),
                                      bias(*se.expand), a2),
      xs[2] * xs[3], static_cast<int>(xs[0]), omp_get_max_threads());
  op->acts[DNNL_ARG_SRC] = ctx.input(pool.inputs[0], Form::Blocked);
  const Node* mul = sole_scale_reader(ctx, pool, se);
  op->product = mul != nullptr;
  op->acts[DNNL_ARG_DST] = ctx.output(mul ? mul->outputs[0] : se.expand->outputs[0], Form::Blocked);
  op->name = pool.label();
  op->impl = channel_block() == 16 ? "vinfer:squeeze_excite_avx512" : "vinfer:squeeze_excite_avx2";
  op->flops = 2.0 * 2 * c * r * static_cast<double>(xs[0]);
  ctx.add(std::move(op));
  return true;
}

bool squeeze_excite_scale_absorbed(const BuildContext& ctx, const Node& mul) {
  if (mul.op != "Mul" || mul.inputs.size() != 2) return false;
  for (const int in : mul.inputs) {
    const Node* c2 = ctx.producer(in);
    const Node* c1 = c2 && c2->op == "Conv" && !c2->inputs.empty() ? ctx.producer(c2->inputs[0]) : nullptr;
    const Node* pool = c1 && c1->op == "Conv" && !c1->inputs.empty() ? ctx.producer(c1->inputs[0]) : nullptr;
    SqueezeExciteNodes se;
    if (pool && squeeze_excite_of(ctx, *pool, se) && se.expand == c2 && sole_scale_reader(ctx, *pool, se) == &mul)
      return true;
  }
  return false;
}

bool squeeze_excite_absorbed(const BuildContext& ctx, const Node& conv) {
  if (conv.op != "Conv" || conv.inputs.empty()) return false;
  const Node* p = ctx.producer(conv.inputs[0]);
  if (p && p->op == "Conv" && !p->inputs.empty()) p = ctx.producer(p->inputs[0]);
  SqueezeExciteNodes se;
  return p && squeeze_excite_of(ctx, *p, se) && (se.reduce == &conv || se.expand == &conv);
}

}  // namespace vinfer::cpu
