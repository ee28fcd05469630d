// vinfer's own engine kernels for AVX-512 (Winograd 3x3s, the 1x1
// convolution with a pre-activation, the batch-1 fully connected layer):
// 16 channels per vector (one nChw16c block), 12 x 32 GEMM register tiles.
// Compiled with -mavx512f; the classes that call them check the CPU.
#include <immintrin.h>

#include <cstring>

// GCC 12's _mm512_min_ps/_mm512_max_ps pass _mm512_undefined_ps() as the
// (unused, all-ones mask) merge source, which -Wuninitialized flags once they
// are inlined deep enough (GCC bug 105593); the warning is a false positive.
// (Its -Wmaybe-uninitialized twin is off for this file in CMakeLists.txt.)
#pragma GCC diagnostic ignored "-Wuninitialized"

#include "cpu/conv1x1_impl.hpp"
#include "cpu/kernels.hpp"
#include "cpu/gemv_impl.hpp"
#include "cpu/group_conv_impl.hpp"
#include "cpu/norm_pool_impl.hpp"
#include "cpu/squeeze_excite_impl.hpp"
#include "cpu/winograd_impl.hpp"

namespace vinfer::cpu {
namespace {

#define VINFER_ROWS(X)                                                                                   \
  X(0, 0, 0) X(1, 0, 1) X(2, 0, 2) X(3, 3, 0) X(4, 3, 1) X(5, 3, 2) X(6, 6, 0) X(7, 6, 1) X(8, 6, 2) X(9, 9, 0) \
      X(10, 9, 1) X(11, 9, 2)
struct Avx512 {
  using V = __m512;
  static constexpr int L = 16, R = 12;
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const float* p) { return _mm512_loadu_ps(p); }
  static V load_bf16(const std::uint16_t* p) {  // bfloat16 bits -> float32, exactly
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V fnmadd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
  static V min(V a, V b) { return _mm512_min_ps(a, b); }
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static V abs(V a) { return _mm512_abs_ps(a); }
  static V load_n(const float* p, int n) { return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), p); }
  // w = n + g, g = w - floor(w) in [0, 1): returns what scale2 takes for n (w
  // itself: VSCALEFPS floors it).
  static V floor_split(V w, V& g) {
    g = _mm512_reduce_ps(w, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    return w;
  }
  static V scale2(V a, V n) { return _mm512_scalef_ps(a, n); }  // a * 2^floor(n)
  static V rcp(V a) { return _mm512_rcp14_ps(a); }
  using Idx = __m512i;  // lane indices for permute
  static Idx load_idx(const int* p) { return _mm512_loadu_si512(p); }
  static V permute(V a, Idx i) { return _mm512_permutexvar_ps(i, a); }  // lane l: a[i[l]]
#include "cpu/gemm_micro.inc"
};
#undef VINFER_ROWS

}  // namespace

const WinogradKernelFns winograd_f43_avx512 = winograd_kernel_fns<Avx512, 1, 4>();
const WinogradKernelFns winograd_f23_avx512 = winograd_kernel_fns<Avx512, 1, 2>();
const WinogradKernelFns winograd_s2_avx512 = winograd_kernel_fns<Avx512, 2>();

void norm_pool_row_avx512(const NormPoolRow& r) { norm_pool_row<Avx512>(r); }

void se_mean_avx512(const float* x, std::int64_t pixels, float* out) { SqueezeExciteKernels<Avx512>::mean(x, pixels, out); }
void se_scale_avx512(const float* x, const float* s, std::int64_t pixels, float* y) {
  SqueezeExciteKernels<Avx512>::scale(x, s, pixels, y);
}
void se_layer_avx512(const SeLayer& f, const float* in, int k0, int k1, int v0, int v1, bool done, float* out) {
  SqueezeExciteKernels<Avx512>::layer(f, in, k0, k1, v0, v1, done, out);
}
void se_finish_avx512(const SeLayer& f, const float* parts, int count, std::size_t stride, int vectors, float* out) {
  SqueezeExciteKernels<Avx512>::finish(f, parts, count, stride, vectors, out);
}

void gemv_rows_avx512(const GemvRows& r) { gemv_rows<Avx512>(r, r.w); }
void gemv_rows_bf16_avx512(const GemvRows& r) { gemv_rows<Avx512>(r, r.w16); }

void conv1x1_rows_avx512(const Conv1x1Geometry& g, const Conv1x1Call& c, int p0, int rows, int oc0, int oc1, float* packed,
                       PrefetchCursor* pf) {
  Conv1x1Kernels<Avx512>::run_rows(g, c, p0, rows, oc0, oc1, packed, pf);
}

void group_conv_band_avx512(const GroupConvBand& r) { GroupConvKernels<Avx512>::run_band(r); }

void silu_avx512(const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; i += 16) Avx512::store(y + i, OutActs<Avx512>::swish(Avx512::load(x + i)));
}
void gelu_avx512(const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; i += 16) Avx512::store(y + i, OutActs<Avx512>::gelu(Avx512::load(x + i)));
}

void quantize_avx512(const float* x, void* y, std::int64_t n, float inv_scale, bool is_unsigned) {
  const float lo = is_unsigned ? 0.f : -128.f, hi = is_unsigned ? 255.f : 127.f;
  const __m512 s = _mm512_set1_ps(inv_scale), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  auto* out = static_cast<std::int8_t*>(y);
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    // (max with the bound second: a NaN gives the bound; conversion rounds to nearest even)
    const __m512 v = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(_mm512_loadu_ps(x + i), s), vlo), vhi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(v)));
  }
  if (i < n) quantize(x + i, out + i, n - i, inv_scale, is_unsigned);
}

void quantize_bf16_avx512(const std::uint16_t* x, void* y, std::int64_t n, float inv_scale, bool is_unsigned) {
  const float lo = is_unsigned ? 0.f : -128.f, hi = is_unsigned ? 255.f : 127.f;
  const __m512 s = _mm512_set1_ps(inv_scale), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  auto* out = static_cast<std::int8_t*>(y);
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    // (a bfloat16 is the high half of its float32)
    const __m512i bits = _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i))), 16);
    const __m512 v = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(_mm512_castsi512_ps(bits), s), vlo), vhi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(v)));
  }
  if (i < n) quantize_bf16(x + i, out + i, n - i, inv_scale, is_unsigned);
}

void scale_shift_blocked16_quantize_avx512(const float* x, void* y, std::int64_t n, std::int64_t y_stride, int count,
                                           const float* s, const float* b, bool relu, float inv_scale, bool is_unsigned) {
  const __m512 vs = _mm512_loadu_ps(s), vb = _mm512_loadu_ps(b), inv = _mm512_set1_ps(inv_scale), zero = _mm512_setzero_ps();
  const __m512 vlo = _mm512_set1_ps(is_unsigned ? 0.f : -128.f), vhi = _mm512_set1_ps(is_unsigned ? 255.f : 127.f);
  auto* out = static_cast<std::int8_t*>(y);
  for (std::int64_t p = 0; p < n; ++p) {
    __m512 v = _mm512_fmadd_ps(_mm512_loadu_ps(x + p * 16), vs, vb);
    if (relu) v = _mm512_max_ps(v, zero);  // (a NaN gives the second operand)
    v = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(v, inv), vlo), vhi);
    const __m128i q = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(v));
    if (count == 16) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + p * y_stride), q);
    } else {
      alignas(16) std::int8_t t[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(t), q);
      std::memcpy(out + p * y_stride, t, static_cast<std::size_t>(count));
    }
  }
}

void gather_blocks_avx512(const float* const* src, const int* idx, int sources, float* y, std::int64_t n) {
  __m512i sel[16];
  __mmask16 take[16];
  for (int s = 0; s < sources; ++s) {
    alignas(64) int lanes[16];
    take[s] = 0;
    for (int l = 0; l < 16; ++l) {
      const int i = idx[s * 16 + l];
      take[s] = static_cast<__mmask16>(take[s] | (i >= 0 ? 1u << l : 0u));
      lanes[l] = i >= 0 ? i : 0;
    }
    sel[s] = _mm512_load_si512(lanes);
  }
  for (std::int64_t p = 0; p < n; ++p) {
    __m512 v = _mm512_setzero_ps();
    for (int s = 0; s < sources; ++s) v = _mm512_mask_permutexvar_ps(v, take[s], sel[s], _mm512_loadu_ps(src[s] + p * 16));
    _mm512_storeu_ps(y + p * 16, v);
  }
}

}  // namespace vinfer::cpu
