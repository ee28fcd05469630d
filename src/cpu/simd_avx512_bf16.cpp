// vinfer's kernels for Precision::BF16 on AVX-512 with AVX512_BF16
// (compiled with -mavx512bf16; reached only where cpu_features().avx512_bf16).
#include <immintrin.h>

#include "cpu/kernels.hpp"

namespace vinfer::cpu {

void scale_shift_blocked16_bf16_avx512(const float* x, std::uint16_t* y, std::int64_t n, std::int64_t y_stride, int count,
                                       const float* s, const float* b, bool relu) {
  const __m512 sv = _mm512_loadu_ps(s), bv = _mm512_loadu_ps(b), zero = _mm512_setzero_ps();
  const __mmask16 lanes = static_cast<__mmask16>((1u << count) - 1);
  for (std::int64_t i = 0; i < n; ++i) {
    // (x * s) + b rounded twice, as the float32 kernel computes it; then to
    // the nearest bfloat16, ties to even (the conversion oneDNN uses).
    __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(x + i * 16), sv), bv);
    if (relu) v = _mm512_max_ps(zero, v);  // (std::max(v, 0.f)'s order: a NaN stays NaN)
    const __m256i h = reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v));
    if (count == 16) _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i * y_stride), h);
    else _mm256_mask_storeu_epi16(y + i * y_stride, lanes, h);
  }
}

void to_bf16_avx512(const float* x, std::uint16_t* y, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(_mm512_loadu_ps(x + i))));
  for (; i < n; ++i) y[i] = to_bf16(x[i]);
}

}  // namespace vinfer::cpu
