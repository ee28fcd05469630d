// AVX2 RGB(A) -> gray with an integer rule. Highway's interleaved loads of
// bytes into 32-bit lanes cost more than the JPEG decode that feeds them
// (28 % of the exact seed-002 loop), so the deinterleave is one byte shuffle
// per eight pixels here. Compiled with -mavx2; called after a runtime check.
#include <immintrin.h>

#include "image/color_kernels.hpp"

namespace vinfer::detail {

std::size_t gray_int_row_avx2(const std::uint8_t* in, int channels, std::uint8_t* out, std::size_t n,
                              std::uint32_t wr, std::uint32_t wg, std::uint32_t wb, std::uint32_t round, int shift) {
  // Weights up to 2^16 do not fit pmaddwd's signed 16 bits, so G's weight is
  // split in two halves and G enters both pairs: (R, G) and (B, G).
  const auto wg1 = static_cast<std::int16_t>(wg / 2), wg2 = static_cast<std::int16_t>(wg - wg / 2);
  if (wr > 32767 || wb > 32767 || wg > 65535 || (channels != 3 && channels != 4)) return 0;
  const int c = channels;
  // Per 128-bit lane four pixels: (R,G) and (B,G) as 16-bit pairs in 32-bit slots.
  auto lane_mask = [c](int a) {
    alignas(16) std::int8_t m[16];
    for (int i = 0; i < 4; ++i) {
      m[i * 4 + 0] = static_cast<std::int8_t>(i * c + a);
      m[i * 4 + 1] = -1;
      m[i * 4 + 2] = static_cast<std::int8_t>(i * c + 1);
      m[i * 4 + 3] = -1;
    }
    return _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(m)));
  };
  const __m256i m_rg = lane_mask(0), m_bg = lane_mask(2);
  const __m256i w_rg = _mm256_set1_epi32(static_cast<int>((static_cast<std::uint32_t>(wg1) << 16) | wr));
  const __m256i w_bg = _mm256_set1_epi32(static_cast<int>((static_cast<std::uint32_t>(wg2) << 16) | wb));
  const __m256i vround = _mm256_set1_epi32(static_cast<int>(round));
  const __m128i vshift = _mm_cvtsi32_si128(shift);
  auto eight = [&](const std::uint8_t* p) {
    // Lane 0 holds pixels 0-3, lane 1 pixels 4-7 (16-byte loads at 0 and 4c).
    const __m256i v = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 4 * c)), 1);
    __m256i acc = _mm256_add_epi32(_mm256_madd_epi16(_mm256_shuffle_epi8(v, m_rg), w_rg),
                                   _mm256_madd_epi16(_mm256_shuffle_epi8(v, m_bg), w_bg));
    return _mm256_srl_epi32(_mm256_add_epi32(acc, vround), vshift);
  };
  // The last load of a block reads 16 bytes from pixel x + 12: stay inside the row.
  std::size_t x = 0;
  for (; (x + 16) * c + 4 <= n * c; x += 16) {
    const __m256i a = eight(in + x * c), b = eight(in + (x + 8) * c);
    const __m256i w16 = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
    const __m128i w8 = _mm_packus_epi16(_mm256_castsi256_si128(w16), _mm256_extracti128_si256(w16, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + x), w8);
  }
  return x;
}

}  // namespace vinfer::detail
