// Gemm and MatMul with a constant right operand. One input row (batch 1):
// vinfer's zero-skipping matrix-vector kernel (gemv.hpp) on the weights as
// [K][N] rows (the graph's tensor itself where it already is that, else a
// copy made at load; bfloat16 with precision int8); otherwise, or with non-finite weights, oneDNN's matmul
// (weights packed once). alpha and beta are folded into weights and
// bias at load (dense_params).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include <omp.h>

#include "cpu/cpu_op.hpp"
#include "cpu/gemv.hpp"
#include "cpu/kernels.hpp"
#include "graph/op_params.hpp"
#include "util/debug_env.hpp"

namespace vinfer::cpu {
namespace {

class GemvOp : public CpuOp {
 public:
  std::int64_t K = 0, N = 0, ld = 0;  // ld: N rounded up to 16 (the rows' stride, zero-padded)
  Block packed;                       // [K][ld]: W transposed (float32, or bfloat16 with bf16)
  bool bf16 = false;                  // packed holds bfloat16 weights (rows: the _bf16 kernels)
  std::shared_ptr<const TensorData> shared;  // or the graph's [K][N] itself (rows of N, not ld)
  std::vector<float> bias;            // [ld], zeros where there is none
  std::vector<PostOp> post;
  void (*rows)(const GemvRows&) = nullptr;
  int threads = 1;
  Block scratch;  // ks (K int32), xs (K floats), then one accumulator of ld floats per thread
  const float* src = nullptr;
  float* dst = nullptr;
  std::int64_t rows_read = 0;  // by the last run

  std::vector<ByteSpan> weights() const override {
    return {{shared ? static_cast<const void*>(shared->f.data()) : packed.get(), static_cast<std::size_t>(K * (shared ? N : ld)) * weight_size()}};
  }
  double weight_bytes_read() const override {  // rows + bias
    return static_cast<double>(rows_read * (shared ? N : ld)) * static_cast<double>(weight_size()) + static_cast<double>(ld * 4);
  }

  void bind(const dnnl::engine& eng, const std::function<void*(int)>& address, void* scratchpad) override {
    CpuOp::bind(eng, address, scratchpad);
    src = static_cast<const float*>(args.at(DNNL_ARG_SRC).get_data_handle());
    dst = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
  }

  void execute(dnnl::stream&) override {
    auto* ks = static_cast<std::int32_t*>(scratch.get());
    float* xs = reinterpret_cast<float*>(ks + K);
    float* accs = xs + K;
    std::int64_t count = 0;
    for (std::int64_t k = 0; k < K; ++k)
      if (src[k] != 0.f) ks[count] = static_cast<std::int32_t>(k), xs[count++] = src[k];
    rows_read = count;
    // The rows read in `threads` (the team's size) equal parts, each summed on
    // its own: on fewer threads a thread takes several parts, and the sums
    // are added in the same order, so the result does not depend on how many
    // threads ran.
    const int parts = threads;
#pragma omp parallel num_threads(std::min(threads, omp_get_max_threads()))
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      const std::int64_t w_ld = shared ? N : ld, whole = shared ? N / 16 * 16 : ld;
      for (int part = t; part < parts; part += nt) {
        const std::int64_t i0 = count * part / parts, i1 = count * (part + 1) / parts;
        float* acc = accs + part * ld;
        std::fill(acc, acc + ld, 0.f);
        // Whole vectors by the kernel; a shared tensor's last N % 16 columns here.
        rows({bf16 ? nullptr : packed_data(), w_ld, whole, ks + i0, xs + i0, i1 - i0, acc,
              bf16 ? static_cast<const std::uint16_t*>(packed.get()) : nullptr});
        if (whole < N)
          for (std::int64_t i = i0; i < i1; ++i) {
            const float* row = packed_data() + ks[i] * w_ld;
            for (std::int64_t c = whole; c < N; ++c) acc[c] += xs[i] * row[c];
          }
      }
#pragma omp barrier
      // y = bias + the parts' sums, then the fused post-ops: columns in
      // equal shares of whole 16-float groups.
      const std::int64_t groups = ld / 16;
      const std::int64_t c0 = std::min(N, groups * t / nt * 16), c1 = std::min(N, groups * (t + 1) / nt * 16);
      for (std::int64_t c = c0; c < c1; ++c) {
        float v = bias[static_cast<std::size_t>(c)];
        for (int u = 0; u < parts; ++u) v += accs[u * ld + c];
        dst[c] = v;
      }
      if (c1 > c0) apply_post(dst + c0, c1 - c0, post, nullptr);
    }
  }

 private:
  const float* packed_data() const { return shared ? shared->f.data() : static_cast<const float*>(packed.get()); }
  std::size_t weight_size() const { return bf16 ? 2 : 4; }
};

bool all_finite(const float* w, std::int64_t n) {
  bool finite = true;
#pragma omp parallel for schedule(static) reduction(&& : finite)
  for (std::int64_t i = 0; i < n; ++i) finite = finite && std::isfinite(w[i]);
  return finite;
}

// op.packed ([K][ld], T: float or bfloat16 bits) from weights w read as
// w[n * ns + k * ks]; false if one is not finite (or, rounded to
// bfloat16, no longer is).
template <class T>
bool pack_rows(GemvOp& op, const float* w, std::int64_t ns, std::int64_t ks) {
  const std::int64_t K = op.K, N = op.N, ld = op.ld;
  op.packed = aligned_block(static_cast<std::size_t>(K * ld) * sizeof(T));
  auto* p = static_cast<T*>(op.packed.get());
  std::fill(p, p + K * ld, T{0});
  bool finite = true;
  constexpr std::int64_t B = 64;  // tiles of B x B: both sides stay in cache
#pragma omp parallel for schedule(static) reduction(&& : finite)
  for (std::int64_t k0 = 0; k0 < K; k0 += B)
    for (std::int64_t n0 = 0; n0 < N; n0 += B)
      for (std::int64_t k = k0; k < std::min(K, k0 + B); ++k)
        for (std::int64_t n = n0; n < std::min(N, n0 + B); ++n) {
          const float v = w[n * ns + k * ks];
          if constexpr (std::is_same_v<T, float>) {
            finite = finite && std::isfinite(v);
            p[k * ld + n] = v;
          } else {
            const std::uint16_t h = to_bf16(v);
            finite = finite && (h & 0x7f80u) != 0x7f80u;
            p[k * ld + n] = h;
          }
        }
  if (!finite) op.packed.reset();
  return finite;
}

// The graph's [K][N] itself (float32), else op.packed ([K][ld]) from its
// [N][K] (transposed) or scaled weights, in bfloat16 with op.bf16; false
// (nothing kept) if a weight is not finite.
bool pack_gemv(GemvOp& op, const detail::DenseParams& dp) {
  const std::int64_t K = op.K, N = op.N;
  if (dp.kn && op.bf16) return pack_rows<std::uint16_t>(op, dp.kn->f.data(), 1, N);
  if (dp.kn) {
    if (!all_finite(dp.kn->f.data(), K * N)) return false;
    op.shared = dp.kn;
    return true;
  }
  const float* w = dp.weights().f.data();
  return op.bf16 ? pack_rows<std::uint16_t>(op, w, K, 1) : pack_rows<float>(op, w, K, 1);
}

// dp with its weights rounded to bfloat16's values (kept in float32).
detail::DenseParams rounded_to_bf16(const detail::DenseParams& dp) {
  detail::DenseParams r = dp;
  TensorData w = dp.kn ? *dp.kn : dp.weights();
  for (float& v : w.f) {
    const std::uint32_t u = static_cast<std::uint32_t>(to_bf16(v)) << 16;
    std::memcpy(&v, &u, sizeof v);
  }
  auto shared = std::make_shared<const TensorData>(std::move(w));
  if (dp.kn) r.kn = shared;
  else r.nk = shared, r.kn = nullptr;
  r.copy = TensorData{};
  return r;
}

// One input row and post-ops that act on each output alone (the graph passes
// fuse a residual Sum into convolutions only). VINFER_FC=onednn keeps every
// layer on oneDNN's inner product (to compare).
bool gemv_takes(const Node& n, std::int64_t M, std::int64_t K) {
  if (detail::debug_env_is(detail::DebugVar::Fc, "onednn") || M != 1 || K >= (std::int64_t{1} << 31)) return false;
  return std::none_of(n.post_ops.begin(), n.post_ops.end(), [](const PostOp& p) { return p.kind == PostOp::Sum; });
}

// Completes a matmul op for a layer of weights `dp`: the primitive, the
// weights packed into its layout (from the graph's [K, N] as it is, else its
// [N, K] rows read as [K, N]; `quantize`: the reorder's scales) and the
// bias, its tensors; op->impl, if set, is appended to oneDNN's name.
void add_matmul(BuildContext& ctx, const Node& n, std::unique_ptr<PrimitiveOp> op, const dnnl::matmul::primitive_desc& pd,
                const detail::DenseParams& dp, const TensorRef& src, const TensorRef& dst,
                const std::vector<std::pair<int, TensorRef>>& extra, const dnnl::primitive_attr& quantize) {
  op->prim = dnnl::matmul(pd);
  const memory::desc user_w({dp.K, dp.N}, memory::data_type::f32, dp.kn ? Tag::ab : Tag::ba);
  op->args[DNNL_ARG_WEIGHTS] =
      pack_weights(ctx.engine(), dp.kn ? *dp.kn : dp.weights(), user_w, pd.weights_desc(), op->buffers, quantize);
  if (!dp.bias.f.empty()) op->args[DNNL_ARG_BIAS] = pack_weights(ctx.engine(), dp.bias, plain_md({1, dp.N}), pd.bias_desc(), op->buffers);
  op->acts[DNNL_ARG_SRC] = src;
  op->acts[DNNL_ARG_DST] = dst;
  for (const auto& [arg, t] : extra) op->acts[arg] = t;
  op->name = n.label();
  op->flops = 2.0 * static_cast<double>(dp.M * dp.N * dp.K);
  const std::string suffix = op->impl;
  finish(*op, pd);
  op->impl += suffix;
  ctx.add(std::move(op));
}

// A fully connected layer in int8: its float32 rows quantized (by their
// calibrated scale) into a buffer of its own, then oneDNN's u8/s8 matmul
// (VNNI) with float32 output: one op, as the rows are plain and small.
class Int8MatmulOp : public PrimitiveOp {
 public:
  Block rows;  // the quantized rows
  std::int64_t count = 0;
  float inv_scale = 1.f;
  bool is_unsigned = true;
  const float* src = nullptr;
  void bind(const dnnl::engine& eng, const std::function<void*(int)>& address, void* scratch) override {
    PrimitiveOp::bind(eng, address, scratch);
    src = static_cast<const float*>(args.at(DNNL_ARG_SRC).get_data_handle());
    args[DNNL_ARG_SRC] = memory(quantized_md, eng, rows.get());
  }
  void execute(dnnl::stream& s) override {
    quantize_avx512(src, rows.get(), count, inv_scale, is_unsigned);
    PrimitiveOp::execute(s);
  }
  memory::desc quantized_md;
};

// MatMul of two runtime tensors (attention's products): oneDNN's matmul on
// the plain tensors, [..., M, K] x [..., K, N] with broadcast batches.
void build_runtime_matmul(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& ys = g.value(n.outputs[0]).shape;
  auto padded = [&](int v) {
    Shape s = g.value(v).shape;
    s.insert(s.begin(), ys.size() - s.size(), 1);
    return s;
  };
  TensorRef a = ctx.input(n.inputs[0], Form::Plain), b = ctx.input(n.inputs[1], Form::Plain);
  a.md = plain_md(padded(n.inputs[0]));
  b.md = plain_md(padded(n.inputs[1]));
  const TensorRef y = ctx.output(n.outputs[0], Form::Plain);
  auto op = std::make_unique<PrimitiveOp>();
  std::vector<std::pair<int, TensorRef>> extra;
  dnnl::primitive_attr attr = default_attr();
  attr.set_post_ops(make_post_ops(ctx, n, Form::Plain, extra));
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a.md, b.md, y.md), attr, ctx.engine());
  op->prim = dnnl::matmul(pd);
  op->acts[DNNL_ARG_SRC] = a;
  op->acts[DNNL_ARG_WEIGHTS] = b;
  op->acts[DNNL_ARG_DST] = y;
  for (auto& [arg, t] : extra) op->acts[arg] = t;
  op->name = n.label();
  const Shape& as = g.value(n.inputs[0]).shape;
  op->flops = 2.0 * static_cast<double>(numel(ys)) * static_cast<double>(as.back());
  finish(*op, pd);
  ctx.add(std::move(op));
}

}  // namespace

bool fc_int8(const BuildContext& ctx, const Node& n) {
  return ctx.int8() && fc_int8_candidate(ctx, n) && ctx.int8_range(n.inputs[0]) && ctx.int8_weight_scales(n);
}

// The classifier (a layer whose output is the network's, or a Softmax's
// that is) stays float32: quantizing ResNet50's raised its logit error from
// 1.6e-2 to 1.8e-2 of the largest, and it is 0.3 ms of its 12.
bool fc_int8_candidate(const BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  if ((n.op != "Gemm" && n.op != "MatMul") || n.inputs.size() < 2 || !g.constant(n.inputs[1]) || g.constant(n.inputs[0]))
    return false;
  const int y = n.outputs[0];
  const std::vector<int>& readers = ctx.consumers(y);
  const bool softmax_out = readers.size() == 1 && g.nodes[static_cast<std::size_t>(readers[0])].op == "Softmax" &&
                           g.is_output(g.nodes[static_cast<std::size_t>(readers[0])].outputs[0]);
  if (g.is_output(y) || softmax_out) return false;
  return g.value(n.inputs[0]).shape.size() == 2 && g.constant(n.inputs[1])->shape.size() == 2 &&
         std::none_of(n.post_ops.begin(), n.post_ops.end(), [](const PostOp& p) { return p.kind == PostOp::Sum; });
}

// A layer that precision int8 leaves out (the classifier) has its weights
// rounded to bfloat16 (float32 sums): the one-row kernel holds them so, half
// the bytes read each image (ResNet50's: 4 of 8 MB), and oneDNN's matmul
// (batches) holds the same values in float32, so that a batch gives each
// image batch 1's result. Its outputs move by ~1e-3 relative, small beside
// int8's ~1e-2.
bool fc_bf16_weights(const BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  return ctx.int8() && (n.op == "Gemm" || n.op == "MatMul") && n.inputs.size() >= 2 && g.constant(n.inputs[1]) &&
         !g.constant(n.inputs[0]) && !fc_int8(ctx, n);
}

namespace {

// oneDNN's matmul with int8 rows and weights (quantized per output column
// by the calibration's scales), float32 bias, output and post-ops; oneDNN
// 2.6 adds the bias after the output scale here (unlike convolutions).
void build_int8_fc(BuildContext& ctx, const Node& n, const detail::DenseParams& dp, const std::vector<float>& sw) {
  const std::int64_t M = dp.M, N = dp.N, K = dp.K;
  const bool has_bias = !dp.bias.f.empty();
  const int x = n.inputs[0];
  const Form form = ctx.int8_form(x);
  const float s_in = ctx.int8_scale(x);
  TensorRef dst = ctx.output(n.outputs[0], Form::Plain);
  dst.md = plain_md({M, N});
  TensorRef src = ctx.input(x, Form::Plain);
  src.md = plain_md({M, K});
  auto op = std::make_unique<Int8MatmulOp>();
  op->quantized_md = memory::desc({M, K}, form == Form::ChannelsLastU8 ? memory::data_type::u8 : memory::data_type::s8, Tag::ab);
  op->rows = aligned_block(static_cast<std::size_t>(M * K));
  op->count = M * K;
  op->inv_scale = 1.f / s_in;
  op->is_unsigned = form == Form::ChannelsLastU8;
  std::vector<float> out_scales(static_cast<std::size_t>(N)), w_scales(static_cast<std::size_t>(N));
  for (std::size_t j = 0; j < out_scales.size(); ++j) out_scales[j] = s_in * sw[j], w_scales[j] = 1.f / sw[j];
  const memory::desc any_w({K, N}, memory::data_type::s8, Tag::any);
  const memory::desc bias_md = plain_md({1, N});
  std::vector<std::pair<int, TensorRef>> extra;
  dnnl::primitive_attr attr = default_attr();
  attr.set_output_scales(1 << 1, out_scales);
  attr.set_post_ops(make_post_ops(ctx, n, Form::Plain, extra));
  auto d = has_bias ? dnnl::matmul::desc(op->quantized_md, any_w, bias_md, dst.md) : dnnl::matmul::desc(op->quantized_md, any_w, dst.md);
  dnnl::matmul::primitive_desc pd(d, attr, ctx.engine());
  op->prim = dnnl::matmul(pd);
  dnnl::primitive_attr quantize;
  quantize.set_output_scales(1 << 1, w_scales);
  op->impl = "+vinfer:quantize_avx512";
  add_matmul(ctx, n, std::move(op), pd, dp, src, dst, extra, quantize);
}

}  // namespace

void build_inner_product(BuildContext& ctx, const Node& n) {
  if (n.op == "MatMul" && !ctx.graph().constant(n.inputs[1]) && !ctx.graph().constant(n.inputs[0])) {
    if (n.inputs.size() > 2) unsupported(n, "a bias on a product of runtime values");
    return build_runtime_matmul(ctx, n);
  }
  const detail::DenseParams dp = detail::dense_params(ctx.graph(), n);
  const std::int64_t M = dp.M, N = dp.N, K = dp.K;
  const bool has_bias = !dp.bias.f.empty();
  const TensorData& bias = dp.bias;

  if (fc_int8(ctx, n)) return build_int8_fc(ctx, n, dp, *ctx.int8_weight_scales(n));
  TensorRef dst = ctx.output(n.outputs[0], Form::Plain);
  dst.md = plain_md({M, N});

  if (gemv_takes(n, M, K)) {
    TensorRef src = ctx.input(n.inputs[0], Form::Plain);
    src.md = plain_md({M, K});
    auto op = std::make_unique<GemvOp>();
    op->K = K, op->N = N, op->ld = (N + 15) / 16 * 16;
    op->bf16 = ctx.int8();  // (past fc_int8: fc_bf16_weights)
    if (pack_gemv(*op, dp)) {
      op->bias.assign(static_cast<std::size_t>(op->ld), 0.f);
      if (has_bias) std::copy(bias.f.begin(), bias.f.end(), op->bias.begin());
      op->post = n.post_ops;
      op->rows = op->bf16 ? (simd_block_runs(16) ? gemv_rows_bf16_avx512 : simd_block_runs(8) ? gemv_rows_bf16_avx2 : gemv_rows_bf16_plain)
                          : (simd_block_runs(16) ? gemv_rows_avx512 : simd_block_runs(8) ? gemv_rows_avx2 : gemv_rows_plain);
      op->threads = std::max(1, omp_get_max_threads());
      op->scratch = aligned_block(static_cast<std::size_t>(2 * K + op->threads * op->ld) * sizeof(float));
      op->acts[DNNL_ARG_SRC] = src;
      op->acts[DNNL_ARG_DST] = dst;
      op->name = n.label();
      op->impl = std::string(op->bf16 ? "vinfer:gemv_bf16w_skip0" : "vinfer:gemv_skip0") +
                 (simd_block_runs(16) ? "_avx512" : simd_block_runs(8) ? "_avx2" : "");
      op->flops = 2.0 * static_cast<double>(N * K);
      ctx.add(std::move(op));
      return;
    }
  }

  // oneDNN's matmul with weights in the layout it picks: 1.0-1.3x faster than
  // its inner product on ViT's and ConvNeXt's shapes (M = 197 and 3136 rows;
  // 2 threads, AVX-512), never slower on those measured. With
  // Precision::BF16 its bfloat16 kernel (rows and weights rounded, float32
  // sums); the one-row kernel above stays float32: it reads only the rows
  // of non-zero inputs, at the memory's speed.
  const bool bf16 = ctx.bf16();
  const detail::DenseParams rounded = ctx.int8() ? rounded_to_bf16(dp) : detail::DenseParams{};
  TensorRef src = ctx.input(n.inputs[0], bf16 ? Form::PlainBf16 : Form::Plain);
  src.md = md_for({M, K}, bf16 ? Form::PlainBf16 : Form::Plain);
  const memory::desc any_w({K, N}, bf16 ? memory::data_type::bf16 : memory::data_type::f32, Tag::any);
  const memory::desc bias_md = plain_md({1, N});
  auto op = std::make_unique<PrimitiveOp>();
  std::vector<std::pair<int, TensorRef>> extra;
  dnnl::primitive_attr attr = default_attr();
  // A GELU alone after it (ConvNeXt's, ViT's and Swin's first MLP layers):
  // vinfer's pass in place after the product, not oneDNN's post-op, which
  // took 0.28-0.47 ns a value on two Zen 4 cores (0.34 ms of ConvNeXt-T's
  // 1.35 ms first products; vinfer's 0.18-0.19 ns, on values still in
  // cache). VINFER_GELU=onednn keeps the post-op.
  Node stripped = n;
  const bool own_gelu = !bf16 && n.post_ops.size() == 1 && n.post_ops[0].kind == PostOp::Gelu &&
                        N % channel_block() == 0 && simd_block_runs(channel_block()) && !ctx.is_view(n.outputs[0]) &&
                        !detail::debug_env_is(detail::DebugVar::Gelu, "onednn");
  if (own_gelu) stripped.post_ops.clear();
  attr.set_post_ops(make_post_ops(ctx, stripped, Form::Plain, extra));
  auto d = has_bias ? dnnl::matmul::desc(src.md, any_w, bias_md, dst.md) : dnnl::matmul::desc(src.md, any_w, dst.md);
  dnnl::matmul::primitive_desc pd(d, attr, ctx.engine());
  add_matmul(ctx, n, std::move(op), pd, ctx.int8() ? rounded : dp, src, dst, extra, {});
  if (own_gelu) ctx.add(make_in_place(dst, InPlaceFn::Gelu, "GELU after " + n.label()));
}

}  // namespace vinfer::cpu
