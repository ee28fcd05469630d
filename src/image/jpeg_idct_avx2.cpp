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

inline __m256i descale(__m256i a, int n) { return _mm256_srai_epi32(_mm256_add_epi32(a, _mm256_set1_epi32(1 << (n - 1))), n); }
inline std::uint8_t out8(int v) { return static_cast<std::uint8_t>(v < -128 ? 0 : v > 127 ? 255 : v + 128); }

}  // namespace

namespace {

// Interleaves two rows of eight 16-bit values into (a0 b0 a1 b1 ... a7 b7).
inline __m256i pairs(__m128i a, __m128i b) {
  return _mm256_set_m128i(_mm_unpackhi_epi16(a, b), _mm_unpacklo_epi16(a, b));
}
inline __m256i k2(int a, int b) {  // the constant pair (a, b) in every 32-bit lane
  return _mm256_set1_epi32(static_cast<int>((static_cast<unsigned>(b) << 16) | (static_cast<unsigned>(a) & 0xFFFF)));
}
inline __m128i k2x(int a, int b) {
  return _mm_set1_epi32(static_cast<int>((static_cast<unsigned>(b) << 16) | (static_cast<unsigned>(a) & 0xFFFF)));
}
// Row r dequantized in 16 bits, as libjpeg-turbo's SIMD transforms do
// (exact for every valid file: dequantized coefficients fit in 12 bits).
inline __m128i row16(const std::int16_t* c, const std::uint16_t* q, int r) {
  return _mm_mullo_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(c + 8 * r)),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 8 * r)));
}

// The 4x4 transform up to the sums before the last shift: o[k] holds
// column k of rows 0..3. Products as pairs (pmaddwd); the first pass's
// results kept in 16 bits between the passes.
inline void sums_4x4(const std::int16_t* c, const std::uint16_t* q, __m128i o[4]) {
  const __m128i r0 = row16(c, q, 0), r1 = row16(c, q, 1), r2 = row16(c, q, 2), r3 = row16(c, q, 3);
  const __m128i r5 = row16(c, q, 5), r6 = row16(c, q, 6), r7 = row16(c, q, 7);
  const __m256i t0 = _mm256_slli_epi32(_mm256_cvtepi16_epi32(r0), kConstBits + 1);
  const __m256i t2 = _mm256_madd_epi16(pairs(r2, r6), k2(fix(1.847759065), -fix(0.765366865)));
  const __m256i t10 = _mm256_add_epi32(t0, t2), t12 = _mm256_sub_epi32(t0, t2);
  const __m256i p75 = pairs(r7, r5), p31 = pairs(r3, r1);
  const __m256i a0 = _mm256_add_epi32(_mm256_madd_epi16(p75, k2(-fix(0.211164243), fix(1.451774981))),
                                      _mm256_madd_epi16(p31, k2(-fix(2.172734803), fix(1.061594337))));
  const __m256i a2 = _mm256_add_epi32(_mm256_madd_epi16(p75, k2(-fix(0.509795579), -fix(0.601344887))),
                                      _mm256_madd_epi16(p31, k2(fix(0.899976223), fix(2.562915447))));
  constexpr int n1 = kConstBits - kPass1Bits + 1;
  auto pack = [](__m256i v) {  // eight 32-bit lanes to eight 16-bit ones
    return _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  };
  const __m128i w0 = pack(descale(_mm256_add_epi32(t10, a2), n1));  // workspace rows 0..3, 8 columns each
  const __m128i w3 = pack(descale(_mm256_sub_epi32(t10, a2), n1));
  const __m128i w1 = pack(descale(_mm256_add_epi32(t12, a0), n1));
  const __m128i w2 = pack(descale(_mm256_sub_epi32(t12, a0), n1));
  // Transpose: c01 holds columns 0 and 1 (rows 0..3 each), and so on.
  const __m128i u01 = _mm_unpacklo_epi16(w0, w1), u23 = _mm_unpacklo_epi16(w2, w3);
  const __m128i v01 = _mm_unpackhi_epi16(w0, w1), v23 = _mm_unpackhi_epi16(w2, w3);
  const __m128i c01 = _mm_unpacklo_epi32(u01, u23), c23 = _mm_unpackhi_epi32(u01, u23);
  const __m128i c45 = _mm_unpacklo_epi32(v01, v23), c67 = _mm_unpackhi_epi32(v01, v23);
  // Second pass, the four rows as four 32-bit lanes.
  const __m128i u0 = _mm_slli_epi32(_mm_cvtepi16_epi32(c01), kConstBits + 1);
  const __m128i u2 = _mm_madd_epi16(_mm_unpacklo_epi16(c23, c67), k2x(fix(1.847759065), -fix(0.765366865)));
  const __m128i u10 = _mm_add_epi32(u0, u2), u12 = _mm_sub_epi32(u0, u2);
  const __m128i q75 = _mm_unpackhi_epi16(c67, c45), q31 = _mm_unpackhi_epi16(c23, c01);
  const __m128i b0 = _mm_add_epi32(_mm_madd_epi16(q75, k2x(-fix(0.211164243), fix(1.451774981))),
                                   _mm_madd_epi16(q31, k2x(-fix(2.172734803), fix(1.061594337))));
  const __m128i b2 = _mm_add_epi32(_mm_madd_epi16(q75, k2x(-fix(0.509795579), -fix(0.601344887))),
                                   _mm_madd_epi16(q31, k2x(fix(0.899976223), fix(2.562915447))));
  const __m128i r = _mm_set1_epi32(1 << (kConstBits + kPass1Bits + 3));  // rounding for the last shift (19)
  o[0] = _mm_add_epi32(_mm_add_epi32(u10, b2), r);
  o[3] = _mm_add_epi32(_mm_sub_epi32(u10, b2), r);
  o[1] = _mm_add_epi32(_mm_add_epi32(u12, b0), r);
  o[2] = _mm_add_epi32(_mm_sub_epi32(u12, b0), r);
}

}  // namespace

namespace {

// libjpeg's islow butterfly on eight 16-bit vectors (one per input row of a
// pass), as sums of pair products: each output is a linear combination of
// the inputs with integer coefficients, the same sums libjpeg forms through
// z1..z5 (expanded here so that each pmaddwd takes two inputs).
constexpr int k0298 = fix(0.298631336), k0390 = fix(0.390180644), k0541 = fix(0.541196100), k0765 = fix(0.765366865),
              k0899 = fix(0.899976223), k1175 = fix(1.175875602), k1501 = fix(1.501321110), k1847 = fix(1.847759065),
              k1961 = fix(1.961570560), k2053 = fix(2.053119869), k2562 = fix(2.562915447), k3072 = fix(3.072711026);

inline void islow_8(const __m128i in[8], __m256i out[8]) {
  const __m256i p04 = pairs(in[0], in[4]), p26 = pairs(in[2], in[6]);
  const __m256i t0 = _mm256_madd_epi16(p04, k2(1 << kConstBits, 1 << kConstBits));
  const __m256i t1 = _mm256_madd_epi16(p04, k2(1 << kConstBits, -(1 << kConstBits)));
  const __m256i t2 = _mm256_madd_epi16(p26, k2(k0541, k0541 - k1847));  // z1 + z3 * -c(1.847)
  const __m256i t3 = _mm256_madd_epi16(p26, k2(k0541 + k0765, k0541));  // z1 + z2 * c(0.765)
  const __m256i e10 = _mm256_add_epi32(t0, t3), e13 = _mm256_sub_epi32(t0, t3);
  const __m256i e11 = _mm256_add_epi32(t1, t2), e12 = _mm256_sub_epi32(t1, t2);
  const __m256i p75 = pairs(in[7], in[5]), p31 = pairs(in[3], in[1]);
  auto odd = [&](int c7, int c5, int c3, int c1) {
    return _mm256_add_epi32(_mm256_madd_epi16(p75, k2(c7, c5)), _mm256_madd_epi16(p31, k2(c3, c1)));
  };
  const __m256i o0 = odd(k0298 - k0899 - k1961 + k1175, k1175, k1175 - k1961, k1175 - k0899);
  const __m256i o1 = odd(k1175, k2053 - k2562 - k0390 + k1175, k1175 - k2562, k1175 - k0390);
  const __m256i o2 = odd(k1175 - k1961, k1175 - k2562, k3072 - k2562 - k1961 + k1175, k1175);
  const __m256i o3 = odd(k1175 - k0899, k1175 - k0390, k1175, k1501 - k0899 - k0390 + k1175);
  out[0] = _mm256_add_epi32(e10, o3);
  out[7] = _mm256_sub_epi32(e10, o3);
  out[1] = _mm256_add_epi32(e11, o2);
  out[6] = _mm256_sub_epi32(e11, o2);
  out[2] = _mm256_add_epi32(e12, o1);
  out[5] = _mm256_sub_epi32(e12, o1);
  out[3] = _mm256_add_epi32(e13, o0);
  out[4] = _mm256_sub_epi32(e13, o0);
}

inline __m128i pack32(__m256i v) { return _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)); }

// 8x8 transpose of 16-bit values.
inline void transpose16(__m128i r[8]) {
  const __m128i a0 = _mm_unpacklo_epi16(r[0], r[1]), a1 = _mm_unpackhi_epi16(r[0], r[1]);
  const __m128i a2 = _mm_unpacklo_epi16(r[2], r[3]), a3 = _mm_unpackhi_epi16(r[2], r[3]);
  const __m128i a4 = _mm_unpacklo_epi16(r[4], r[5]), a5 = _mm_unpackhi_epi16(r[4], r[5]);
  const __m128i a6 = _mm_unpacklo_epi16(r[6], r[7]), a7 = _mm_unpackhi_epi16(r[6], r[7]);
  const __m128i b0 = _mm_unpacklo_epi32(a0, a2), b1 = _mm_unpackhi_epi32(a0, a2);
  const __m128i b2 = _mm_unpacklo_epi32(a1, a3), b3 = _mm_unpackhi_epi32(a1, a3);
  const __m128i b4 = _mm_unpacklo_epi32(a4, a6), b5 = _mm_unpackhi_epi32(a4, a6);
  const __m128i b6 = _mm_unpacklo_epi32(a5, a7), b7 = _mm_unpackhi_epi32(a5, a7);
  r[0] = _mm_unpacklo_epi64(b0, b4);
  r[1] = _mm_unpackhi_epi64(b0, b4);
  r[2] = _mm_unpacklo_epi64(b1, b5);
  r[3] = _mm_unpackhi_epi64(b1, b5);
  r[4] = _mm_unpacklo_epi64(b2, b6);
  r[5] = _mm_unpackhi_epi64(b2, b6);
  r[6] = _mm_unpacklo_epi64(b3, b7);
  r[7] = _mm_unpackhi_epi64(b3, b7);
}

// Both passes; out[x] holds output column x of rows 0..7 (lanes), as sums
// before the last shift, rounding included.
inline void sums_8x8(const std::int16_t* c, const std::uint16_t* q, __m256i out[8]) {
  __m128i in[8];
  for (int r = 0; r < 8; ++r) in[r] = row16(c, q, r);
  __m256i o[8];
  islow_8(in, o);
  const __m256i r1 = _mm256_set1_epi32(1 << (kConstBits - kPass1Bits - 1));
  for (int r = 0; r < 8; ++r)
    in[r] = pack32(_mm256_srai_epi32(_mm256_add_epi32(o[r], r1), kConstBits - kPass1Bits));
  transpose16(in);  // in[x]: workspace column x, rows as lanes
  islow_8(in, out);
  const __m256i r2 = _mm256_set1_epi32(1 << (kConstBits + kPass1Bits + 3 - 1));
  for (int x = 0; x < 8; ++x) out[x] = _mm256_add_epi32(out[x], r2);
}

}  // namespace

void idct_islow_8x8_avx2(const std::int16_t* c, const std::uint16_t* q, std::uint8_t* out, std::ptrdiff_t stride) {
  __m256i o[8];
  sums_8x8(c, q, o);
  __m128i w[8];
  for (int x = 0; x < 8; ++x) w[x] = pack32(_mm256_srai_epi32(o[x], kConstBits + kPass1Bits + 3));
  transpose16(w);  // w[y]: output row y
  const __m128i bias = _mm_set1_epi8(static_cast<char>(0x80));
  for (int y = 0; y < 8; y += 2) {
    const __m128i b = _mm_add_epi8(_mm_packs_epi16(w[y], w[y + 1]), bias);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + y * stride), b);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + (y + 1) * stride), _mm_srli_si128(b, 8));
  }
}

void idct_sums_8x8_avx2(const std::int16_t* c, const std::uint16_t* q, std::int32_t* sums) {
  __m256i o[8];
  sums_8x8(c, q, o);
  alignas(32) std::int32_t cols[8][8];
  for (int x = 0; x < 8; ++x) _mm256_store_si256(reinterpret_cast<__m256i*>(cols[x]), o[x]);
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x) sums[8 * y + x] = cols[x][y];
}

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
  const __m256i t10 = _mm256_slli_epi32(_mm256_cvtepi16_epi32(row16(c, q, 0)), kConstBits + 2);
  const __m256i t0 =
      _mm256_add_epi32(_mm256_madd_epi16(pairs(row16(c, q, 7), row16(c, q, 5)), k2(-fix(0.720959822), fix(0.850430095))),
                       _mm256_madd_epi16(pairs(row16(c, q, 3), row16(c, q, 1)), k2(-fix(1.272758580), fix(3.624509785))));
  constexpr int n1 = kConstBits - kPass1Bits + 2;
  // Rows 0 and 1 of the workspace as 16-bit values, row 0 in the low half.
  const __m256i ws = _mm256_packs_epi32(descale(_mm256_add_epi32(t10, t0), n1), descale(_mm256_sub_epi32(t10, t0), n1));
  // packs interleaves by 128-bit lane: (row0 c0-3, row1 c0-3 | row0 c4-7, row1 c4-7).
  constexpr short k1 = fix(3.624509785), k3 = -fix(1.272758580), k5 = fix(0.850430095), k7 = -fix(0.720959822);
  const __m256i odd = _mm256_madd_epi16(ws, _mm256_setr_epi16(0, k1, 0, k3, 0, k1, 0, k3, 0, k5, 0, k7, 0, k5, 0, k7));
  // odd lanes: (r0: c1, c3 | r1: c1, c3 || r0: c5, c7 | r1: c5, c7) as 32-bit products summed in pairs.
  alignas(32) int v[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(v), odd);
  alignas(32) std::int16_t w[16];
  _mm256_store_si256(reinterpret_cast<__m256i*>(w), ws);
  constexpr int round = 1 << (kConstBits + kPass1Bits + 3 + 2 - 1);
  for (int y = 0; y < 2; ++y) {
    const int u10 = w[4 * y] * (1 << (kConstBits + 2));
    const int u0 = v[2 * y] + v[2 * y + 1] + v[4 + 2 * y] + v[4 + 2 * y + 1];
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

void idct_finish_block_avx2(const std::int32_t* sums, int size, std::int64_t add, std::uint8_t* out,
                            std::ptrdiff_t stride) {
  // 32-bit lanes suffice when the DC term is what a valid file can give
  // (the sums themselves stay below 2^30 then); else the plain version.
  if (size == 1 || add > (std::int64_t{1} << 29) || add < -(std::int64_t{1} << 29)) {
    idct_finish_block(sums, size, add, out, stride);
    return;
  }
  const int shift = size == 8 ? 18 : size == 4 ? 19 : 20;
  const __m256i a = _mm256_set1_epi32(static_cast<int>(add));
  const __m128i bias = _mm_set1_epi8(static_cast<char>(0x80));
  auto eight = [&](const std::int32_t* p) {  // eight sums to eight clamped, centred 16-bit values
    return _mm256_srai_epi32(_mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), a), shift);
  };
  if (size == 8) {
    for (int y = 0; y < 8; y += 2, out += 2 * stride) {
      const __m256i v0 = eight(sums + 8 * y), v1 = eight(sums + 8 * y + 8);
      const __m128i w0 = _mm_packs_epi32(_mm256_castsi256_si128(v0), _mm256_extracti128_si256(v0, 1));
      const __m128i w1 = _mm_packs_epi32(_mm256_castsi256_si128(v1), _mm256_extracti128_si256(v1, 1));
      const __m128i b = _mm_add_epi8(_mm_packs_epi16(w0, w1), bias);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out), b);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + stride), _mm_srli_si128(b, 8));
    }
  } else if (size == 4) {
    const __m256i v0 = eight(sums), v1 = eight(sums + 8);
    const __m128i w0 = _mm_packs_epi32(_mm256_castsi256_si128(v0), _mm256_extracti128_si256(v0, 1));
    const __m128i w1 = _mm_packs_epi32(_mm256_castsi256_si128(v1), _mm256_extracti128_si256(v1, 1));
    alignas(16) std::uint8_t b[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(b), _mm_add_epi8(_mm_packs_epi16(w0, w1), bias));
    for (int y = 0; y < 4; ++y) __builtin_memcpy(out + y * stride, b + 4 * y, 4);
  } else {
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 2; ++x) out[y * stride + x] = out8((sums[2 * y + x] + static_cast<int>(add)) >> shift);
  }
}

}  // namespace vinfer::detail
