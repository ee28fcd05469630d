// AVX2 bodies of the reduced inverse DCTs (jpeg_idct.hpp): the first pass
// runs the eight columns as eight 32-bit lanes, without the plain version's
// all-zero-column branches (they give the same numbers, and mispredicting
// them cost more than the arithmetic).
#include <immintrin.h>

#include "image/jpeg_idct.hpp"

namespace vinfer::detail {
namespace {

constexpr int kConstBits = 13, kPass1Bits = 2;
constexpr int fix(double x) { return static_cast<int>(x * (1 << kConstBits) + 0.5); }

// Row r of the block, dequantized, as eight 32-bit lanes.
inline __m256i row(const std::int16_t* c, const std::uint16_t* q, int r) {
  const __m256i cv = _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c + 8 * r)));
  const __m256i qv = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 8 * r)));
  return _mm256_mullo_epi32(cv, qv);
}
inline __m256i mul(__m256i a, int k) { return _mm256_mullo_epi32(a, _mm256_set1_epi32(k)); }
inline __m256i descale(__m256i a, int n) { return _mm256_srai_epi32(_mm256_add_epi32(a, _mm256_set1_epi32(1 << (n - 1))), n); }
inline std::uint8_t out8(int v) { return static_cast<std::uint8_t>(v < -128 ? 0 : v > 127 ? 255 : v + 128); }

}  // namespace

namespace {

// The 4x4 transform up to the sums before the last shift: o[k] holds
// column k of rows 0..3.
inline void sums_4x4(const std::int16_t* c, const std::uint16_t* q, __m128i o[4]) {
  const __m256i t0 = _mm256_slli_epi32(row(c, q, 0), kConstBits + 1);
  const __m256i t2 = _mm256_add_epi32(mul(row(c, q, 2), fix(1.847759065)), mul(row(c, q, 6), -fix(0.765366865)));
  const __m256i t10 = _mm256_add_epi32(t0, t2), t12 = _mm256_sub_epi32(t0, t2);
  const __m256i z1 = row(c, q, 7), z2 = row(c, q, 5), z3 = row(c, q, 3), z4 = row(c, q, 1);
  const __m256i a0 = _mm256_add_epi32(_mm256_add_epi32(mul(z1, -fix(0.211164243)), mul(z2, fix(1.451774981))),
                                      _mm256_add_epi32(mul(z3, -fix(2.172734803)), mul(z4, fix(1.061594337))));
  const __m256i a2 = _mm256_add_epi32(_mm256_add_epi32(mul(z1, -fix(0.509795579)), mul(z2, -fix(0.601344887))),
                                      _mm256_add_epi32(mul(z3, fix(0.899976223)), mul(z4, fix(2.562915447))));
  constexpr int n1 = kConstBits - kPass1Bits + 1;
  alignas(32) int ws[4][8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(ws[0]), descale(_mm256_add_epi32(t10, a2), n1));
  _mm256_store_si256(reinterpret_cast<__m256i*>(ws[3]), descale(_mm256_sub_epi32(t10, a2), n1));
  _mm256_store_si256(reinterpret_cast<__m256i*>(ws[1]), descale(_mm256_add_epi32(t12, a0), n1));
  _mm256_store_si256(reinterpret_cast<__m256i*>(ws[2]), descale(_mm256_sub_epi32(t12, a0), n1));
  // Second pass: the four rows as four lanes (a transpose through memory).
  auto col = [&](int x) { return _mm_setr_epi32(ws[0][x], ws[1][x], ws[2][x], ws[3][x]); };
  const __m128i w0 = col(0), w1 = col(1), w2 = col(2), w3 = col(3), w5 = col(5), w6 = col(6), w7 = col(7);
  auto m = [](__m128i a, int k) { return _mm_mullo_epi32(a, _mm_set1_epi32(k)); };
  const __m128i u0 = _mm_slli_epi32(w0, kConstBits + 1);
  const __m128i u2 = _mm_add_epi32(m(w2, fix(1.847759065)), m(w6, -fix(0.765366865)));
  const __m128i u10 = _mm_add_epi32(u0, u2), u12 = _mm_sub_epi32(u0, u2);
  const __m128i b0 = _mm_add_epi32(_mm_add_epi32(m(w7, -fix(0.211164243)), m(w5, fix(1.451774981))),
                                   _mm_add_epi32(m(w3, -fix(2.172734803)), m(w1, fix(1.061594337))));
  const __m128i b2 = _mm_add_epi32(_mm_add_epi32(m(w7, -fix(0.509795579)), m(w5, -fix(0.601344887))),
                                   _mm_add_epi32(m(w3, fix(0.899976223)), m(w1, fix(2.562915447))));
  const __m128i r = _mm_set1_epi32(1 << (kConstBits + kPass1Bits + 3));  // rounding for the last shift (19)
  o[0] = _mm_add_epi32(_mm_add_epi32(u10, b2), r);
  o[3] = _mm_add_epi32(_mm_sub_epi32(u10, b2), r);
  o[1] = _mm_add_epi32(_mm_add_epi32(u12, b0), r);
  o[2] = _mm_add_epi32(_mm_sub_epi32(u12, b0), r);
}

}  // namespace

void idct_reduced_4x4_avx2(const std::int16_t* c, const std::uint16_t* q, std::uint8_t* out, std::ptrdiff_t stride) {
  __m128i o[4];
  sums_4x4(c, q, o);
  constexpr int n2 = kConstBits + kPass1Bits + 3 + 1;
  for (auto& v : o) v = _mm_srai_epi32(v, n2);
  // o[k] holds column k of the four rows: interleave to rows, clamp, +128.
  const __m128i lo = _mm_packs_epi32(_mm_unpacklo_epi32(o[0], o[1]), _mm_unpacklo_epi32(o[2], o[3]));  // r0c0 r0c1 r1c0 r1c1 r0c2 r0c3 r1c2 r1c3
  const __m128i hi = _mm_packs_epi32(_mm_unpackhi_epi32(o[0], o[1]), _mm_unpackhi_epi32(o[2], o[3]));  // rows 2, 3
  const __m128i lo2 = _mm_shuffle_epi32(lo, _MM_SHUFFLE(3, 1, 2, 0));
  const __m128i hi2 = _mm_shuffle_epi32(hi, _MM_SHUFFLE(3, 1, 2, 0));
  const __m128i bytes = _mm_add_epi8(_mm_packs_epi16(lo2, hi2), _mm_set1_epi8(static_cast<char>(0x80)));
  alignas(16) std::uint8_t b[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(b), bytes);
  for (int y = 0; y < 4; ++y) __builtin_memcpy(out + y * stride, b + 4 * y, 4);
}

void idct_sums_4x4_avx2(const std::int16_t* c, const std::uint16_t* q, std::int32_t* sums) {
  __m128i o[4];
  sums_4x4(c, q, o);
  // Columns to rows: a 4x4 transpose.
  const __m128i t0 = _mm_unpacklo_epi32(o[0], o[1]), t1 = _mm_unpackhi_epi32(o[0], o[1]);
  const __m128i t2 = _mm_unpacklo_epi32(o[2], o[3]), t3 = _mm_unpackhi_epi32(o[2], o[3]);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(sums), _mm_unpacklo_epi64(t0, t2));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(sums + 4), _mm_unpackhi_epi64(t0, t2));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(sums + 8), _mm_unpacklo_epi64(t1, t3));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(sums + 12), _mm_unpackhi_epi64(t1, t3));
}

namespace {

// The 2x2 transform's sums before the last shift, rows 0 and 1.
inline void sums_2x2(const std::int16_t* c, const std::uint16_t* q, int s[4]) {
  const __m256i t10 = _mm256_slli_epi32(row(c, q, 0), kConstBits + 2);
  const __m256i t0 =
      _mm256_add_epi32(_mm256_add_epi32(mul(row(c, q, 7), -fix(0.720959822)), mul(row(c, q, 5), fix(0.850430095))),
                       _mm256_add_epi32(mul(row(c, q, 3), -fix(1.272758580)), mul(row(c, q, 1), fix(3.624509785))));
  constexpr int n1 = kConstBits - kPass1Bits + 2;
  alignas(32) int ws[2][8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(ws[0]), descale(_mm256_add_epi32(t10, t0), n1));
  _mm256_store_si256(reinterpret_cast<__m256i*>(ws[1]), descale(_mm256_sub_epi32(t10, t0), n1));
  constexpr int round = 1 << (kConstBits + kPass1Bits + 3 + 2 - 1);
  for (int y = 0; y < 2; ++y) {
    const int* w = ws[y];
    const int u10 = w[0] * (1 << (kConstBits + 2));
    const int u0 = w[7] * -fix(0.720959822) + w[5] * fix(0.850430095) + w[3] * -fix(1.272758580) +
                   w[1] * fix(3.624509785);
    s[2 * y] = u10 + u0 + round;
    s[2 * y + 1] = u10 - u0 + round;
  }
}

}  // namespace

void idct_reduced_2x2_avx2(const std::int16_t* c, const std::uint16_t* q, std::uint8_t* out, std::ptrdiff_t stride) {
  int s[4];
  sums_2x2(c, q, s);
  constexpr int n2 = kConstBits + kPass1Bits + 3 + 2;
  out[0] = out8(s[0] >> n2);
  out[1] = out8(s[1] >> n2);
  out[stride] = out8(s[2] >> n2);
  out[stride + 1] = out8(s[3] >> n2);
}

void idct_sums_2x2_avx2(const std::int16_t* c, const std::uint16_t* q, std::int32_t* sums) { sums_2x2(c, q, sums); }

}  // namespace vinfer::detail
