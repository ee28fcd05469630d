// AVX2 bodies of jpeg_color.hpp, exact like the plain versions. Compiled with
// -mavx2 for this file only; called after a runtime check.
#include <immintrin.h>

#include "image/jpeg_color.hpp"

namespace vinfer::detail {

int fancy_h2v2_colsum_avx2(const std::uint16_t* cs, int cw, std::uint8_t* out) {
  // cs[i + 1] is column i's sum; cs[i] and cs[i + 2] its neighbours.
  const __m256i k8 = _mm256_set1_epi16(8), k7 = _mm256_set1_epi16(7);
  int i = 0;
  for (; i + 16 <= cw; i += 16) {
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(cs + i + 1));
    const __m256i l = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(cs + i));
    const __m256i r = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(cs + i + 2));
    const __m256i c3 = _mm256_add_epi16(_mm256_add_epi16(c, c), c);
    const __m256i even = _mm256_srli_epi16(_mm256_add_epi16(_mm256_add_epi16(c3, l), k8), 4);
    const __m256i odd = _mm256_srli_epi16(_mm256_add_epi16(_mm256_add_epi16(c3, r), k7), 4);
    // Each 16-bit lane becomes the byte pair (even, odd): the outputs in order.
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * i), _mm256_or_si256(even, _mm256_slli_epi16(odd, 8)));
  }
  return i;
}

int fancy_h2v1_avx2(const std::uint8_t* in, int n, std::uint8_t* out) {
  const __m256i k1 = _mm256_set1_epi16(1), k2 = _mm256_set1_epi16(2);
  int i = 1;
  for (; i + 16 <= n - 1; i += 16) {
    auto load = [&](int at) { return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + at))); };
    const __m256i c = load(i), l = load(i - 1), r = load(i + 1);
    const __m256i c3 = _mm256_add_epi16(_mm256_add_epi16(c, c), c);
    const __m256i even = _mm256_srli_epi16(_mm256_add_epi16(_mm256_add_epi16(c3, l), k1), 2);
    const __m256i odd = _mm256_srli_epi16(_mm256_add_epi16(_mm256_add_epi16(c3, r), k2), 2);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 2 * i), _mm256_or_si256(even, _mm256_slli_epi16(odd, 8)));
  }
  return i;
}

namespace {
// One channel: y + ((a * cb' + b * cr' + 2^15) >> 16) for 8 pixels (32-bit lanes).
inline __m256i channel(__m256i y, __m256i cb, __m256i cr, int a, int b) {
  __m256i v = _mm256_add_epi32(_mm256_mullo_epi32(cb, _mm256_set1_epi32(a)), _mm256_mullo_epi32(cr, _mm256_set1_epi32(b)));
  return _mm256_add_epi32(y, _mm256_srai_epi32(_mm256_add_epi32(v, _mm256_set1_epi32(32768)), 16));
}
}  // namespace

std::size_t ycc_rgb_row_avx2(const std::uint8_t* y, const std::uint8_t* cb, const std::uint8_t* cr, std::uint8_t* rgb,
                             std::size_t n) {
  const __m256i k128 = _mm256_set1_epi32(128);
  // 16 R, 16 G, 16 B bytes -> 48 interleaved bytes, three 16-byte stores.
  const __m128i r0 = _mm_setr_epi8(0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1, -1, 5);
  const __m128i g0 = _mm_setr_epi8(-1, 0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1, -1);
  const __m128i b0 = _mm_setr_epi8(-1, -1, 0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1);
  const __m128i r1 = _mm_setr_epi8(-1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1, 10, -1);
  const __m128i g1 = _mm_setr_epi8(5, -1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1, 10);
  const __m128i b1 = _mm_setr_epi8(-1, 5, -1, -1, 6, -1, -1, 7, -1, -1, 8, -1, -1, 9, -1, -1);
  const __m128i r2 = _mm_setr_epi8(-1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15, -1, -1);
  const __m128i g2 = _mm_setr_epi8(-1, -1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15, -1);
  const __m128i b2 = _mm_setr_epi8(10, -1, -1, 11, -1, -1, 12, -1, -1, 13, -1, -1, 14, -1, -1, 15);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256i ch[3][2];
    for (int h = 0; h < 2; ++h) {
      const __m256i Y = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(y + i + 8 * h)));
      const __m256i B = _mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(cb + i + 8 * h))), k128);
      const __m256i R = _mm256_sub_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(cr + i + 8 * h))), k128);
      ch[0][h] = channel(Y, B, R, 0, 91881);
      ch[1][h] = channel(Y, B, R, -22554, -46802);
      ch[2][h] = channel(Y, B, R, 116130, 0);
    }
    __m128i c8[3];
    for (int k = 0; k < 3; ++k) {
      // Saturating packs clamp to [0, 255] (libjpeg's range_limit); then undo the lane interleave.
      const __m256i w = _mm256_packs_epi32(ch[k][0], ch[k][1]);             // 16 x i16, lanes [0-3 8-11 | 4-7 12-15]
      const __m256i b = _mm256_packus_epi16(w, w);                          // bytes
      c8[k] = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 0, 0, 0, 0)));
    }
    auto mix = [&](__m128i a, __m128i b, __m128i c) {
      return _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(c8[0], a), _mm_shuffle_epi8(c8[1], b)), _mm_shuffle_epi8(c8[2], c));
    };
    _mm_storeu_si128(reinterpret_cast<__m128i*>(rgb + 3 * i), mix(r0, g0, b0));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(rgb + 3 * i + 16), mix(r1, g1, b1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(rgb + 3 * i + 32), mix(r2, g2, b2));
  }
  return i;
}

}  // namespace vinfer::detail
