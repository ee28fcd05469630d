// vinfer's own engine kernels for AVX2 + FMA (Winograd 3x3s, the 1x1
// convolution with a pre-activation, the batch-1 fully connected layer):
// 8 channels per vector, 6 x 16 GEMM register tiles. Compiled with -mavx2
// -mfma; the classes that call them check the CPU.
#include <immintrin.h>

#include "cpu/conv1x1_impl.hpp"
#include "cpu/gemv_impl.hpp"
#include "cpu/group_conv_impl.hpp"
#include "cpu/kernels.hpp"
#include "cpu/norm_pool_impl.hpp"
#include "cpu/squeeze_excite_impl.hpp"
#include "cpu/winograd_impl.hpp"

namespace vinfer::cpu {
namespace {

#define VINFER_ROWS(X) X(0, 0, 0) X(1, 0, 1) X(2, 0, 2) X(3, 3, 0) X(4, 3, 1) X(5, 3, 2)
struct Avx2 {
  using V = __m256;
  static constexpr int L = 8, R = 6;
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V load_bf16(const std::uint16_t* p) {  // bfloat16 bits -> float32, exactly
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V fnmadd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
  static V min(V a, V b) { return _mm256_min_ps(a, b); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V abs(V a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.f), a); }
  static V load_n(const float* p, int n) {  // the first n lanes, zeros after
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_maskload_ps(p, _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lanes));
  }
  // w = n + g, g = w - floor(w) in [0, 1), w first raised to -126 (scale2
  // makes 2^n from its bits): returns n.
  static V floor_split(V w, V& g) {
    w = _mm256_max_ps(_mm256_set1_ps(-126.f), w);  // (a NaN stays NaN)
    const V n = _mm256_floor_ps(w);
    g = _mm256_sub_ps(w, n);
    return n;
  }
  static V scale2(V a, V n) {  // a * 2^n, n integral in [-126, 127]
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(a, _mm256_castsi256_ps(e));
  }
  static V rcp(V a) { return _mm256_rcp_ps(a); }
  using Idx = __m256i;  // lane indices for permute
  static Idx load_idx(const int* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  static V permute(V a, Idx i) { return _mm256_permutevar8x32_ps(a, i); }  // lane l: a[i[l]]
#include "cpu/gemm_micro.inc"
};
#undef VINFER_ROWS

}  // namespace

const WinogradKernelFns winograd_f43_avx2 = winograd_kernel_fns<Avx2, 1, 4>();
const WinogradKernelFns winograd_f23_avx2 = winograd_kernel_fns<Avx2, 1, 2>();
const WinogradKernelFns winograd_s2_avx2 = winograd_kernel_fns<Avx2, 2>();

void norm_pool_row_avx2(const NormPoolRow& r) { norm_pool_row<Avx2>(r); }

void se_mean_avx2(const float* x, std::int64_t pixels, float* out) { SqueezeExciteKernels<Avx2>::mean(x, pixels, out); }
void se_scale_avx2(const float* x, const float* s, std::int64_t pixels, float* y) {
  SqueezeExciteKernels<Avx2>::scale(x, s, pixels, y);
}
void se_layer_avx2(const SeLayer& f, const float* in, int k0, int k1, int v0, int v1, bool done, float* out) {
  SqueezeExciteKernels<Avx2>::layer(f, in, k0, k1, v0, v1, done, out);
}
void se_finish_avx2(const SeLayer& f, const float* parts, int count, std::size_t stride, int vectors, float* out) {
  SqueezeExciteKernels<Avx2>::finish(f, parts, count, stride, vectors, out);
}

void gemv_rows_avx2(const GemvRows& r) { gemv_rows<Avx2>(r, r.w); }
void gemv_rows_bf16_avx2(const GemvRows& r) { gemv_rows<Avx2>(r, r.w16); }

void conv1x1_rows_avx2(const Conv1x1Geometry& g, const Conv1x1Call& c, int p0, int rows, int oc0, int oc1, float* packed,
                       PrefetchCursor* pf) {
  Conv1x1Kernels<Avx2>::run_rows(g, c, p0, rows, oc0, oc1, packed, pf);
}

void group_conv_band_avx2(const GroupConvBand& r) { GroupConvKernels<Avx2>::run_band(r); }

void silu_avx2(const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; i += 8) Avx2::store(y + i, OutActs<Avx2>::swish(Avx2::load(x + i)));
}
void gelu_avx2(const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; i += 8) Avx2::store(y + i, OutActs<Avx2>::gelu(Avx2::load(x + i)));
}

void gather_blocks_avx2(const float* const* src, const int* idx, int sources, float* y, std::int64_t n) {
  __m256i sel[8];
  __m256 take[8];
  for (int s = 0; s < sources; ++s) {
    alignas(32) int lanes[8], mask[8];
    for (int l = 0; l < 8; ++l) {
      const int i = idx[s * 8 + l];
      lanes[l] = i >= 0 ? i : 0;
      mask[l] = i >= 0 ? -1 : 0;
    }
    sel[s] = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
    take[s] = _mm256_castsi256_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(mask)));
  }
  for (std::int64_t p = 0; p < n; ++p) {
    __m256 v = _mm256_setzero_ps();
    for (int s = 0; s < sources; ++s)
      v = _mm256_blendv_ps(v, _mm256_permutevar8x32_ps(_mm256_loadu_ps(src[s] + p * 8), sel[s]), take[s]);
    _mm256_storeu_ps(y + p * 8, v);
  }
}

}  // namespace vinfer::cpu
