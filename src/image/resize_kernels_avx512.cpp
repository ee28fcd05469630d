// AVX-512 (BW + VBMI + VNNI) version of Pillow's horizontal pass on RGB rows.
// Each 22-bit weight is split into D signed bytes (base-128 digits, the
// lower ones in [0, 127]; D = 3 when |w| < 2^21, else 4), so that vpdpbusd
// multiplies four u8 pixels by four weight digits and adds them into a
// 32-bit lane in one instruction: D of them cover 16 taps of all three
// channels, where the 16-bit split (hi * 2^11 + lo) needs two multiply-adds
// and two adds per 8 taps. The sums are the same integers as Pillow's, so the result is
// bit-exact. Compiled with -mavx512f -mavx512bw -mavx512vbmi -mavx512vnni
// for this file only; called after a runtime check.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "image/resize_kernels.hpp"

namespace vinfer::detail {

namespace {

// 64 bytes of a row from byte `offset`; past the row end (masked) they read as zero.
inline __m512i load_row(const std::uint8_t* row, int offset, int row_bytes, bool masked) {
  if (!masked) return _mm512_loadu_si512(row + offset);
  const int n = row_bytes - offset;  // > 0: each load starts at a tap inside the window
  return _mm512_maskz_loadu_epi8(n >= 64 ? ~0ULL : (1ULL << n) - 1, row + offset);
}

// Four outputs' [R G B _] sums (one per 128-bit lane) -> Pillow's rounding and clip -> 12 bytes.
inline void store4(__m512i v, std::uint8_t* d) {
  const __m512i round = _mm512_set1_epi32(1 << 21), zero = _mm512_setzero_si512(), max = _mm512_set1_epi32(255);
  const __m128i pack = _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
  v = _mm512_min_epi32(_mm512_max_epi32(_mm512_srai_epi32(_mm512_add_epi32(v, round), 22), zero), max);
  const __m128i b = _mm_shuffle_epi8(_mm512_cvtepi32_epi8(v), pack);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(d), b);
  const int tail = _mm_extract_epi32(b, 2);
  std::memcpy(d + 8, &tail, 4);
}

// One output's [R G B _] sum in a 128-bit vector -> 3 bytes.
inline void store1(__m128i r4, std::uint8_t* d) {
  r4 = _mm_min_epi32(_mm_max_epi32(_mm_srai_epi32(_mm_add_epi32(r4, _mm_set1_epi32(1 << 21)), 22), _mm_setzero_si128()),
                     _mm_set1_epi32(255));
  d[0] = static_cast<std::uint8_t>(_mm_cvtsi128_si32(r4));
  d[1] = static_cast<std::uint8_t>(_mm_extract_epi32(r4, 1));
  d[2] = static_cast<std::uint8_t>(_mm_extract_epi32(r4, 2));
}

// ROWS source rows through the same weights (loaded once for all of them);
// REGS registers of 16 taps per output, D digits per weight.
template <int ROWS, int REGS, int D>
void pil_c3_vnni(const std::uint8_t* const* in, std::uint8_t* const* out, const int* start, const std::int8_t* digits,
                 int out_w, int row_bytes) {
  // 32-bit lane 4g + c holds taps 4g..4g+3 of channel c (c = 3: zero), so a
  // 128-bit lane g is [R G B 0] over four taps.
  alignas(64) std::int8_t idx[64];
  for (int g = 0; g < 4; ++g)
    for (int c = 0; c < 4; ++c)
      for (int j = 0; j < 4; ++j) idx[16 * g + 4 * c + j] = static_cast<std::int8_t>(c < 3 ? (4 * g + j) * 3 + c : 0);
  const __m512i perm = _mm512_load_si512(idx);
  const __mmask64 keep = 0x0FFF0FFF0FFF0FFFULL;
  // Outputs whose 64-byte loads stay in the row; the rest load with a mask.
  int safe_end = out_w;
  while (safe_end > 0 && start[safe_end - 1] * 3 + 48 * (REGS - 1) + 64 > row_bytes) --safe_end;
  // The digits' products go into one sum from the top digit down, shifted
  // by 7 bits before each next digit: the same integers as a sum per digit
  // combined afterwards, with two fewer vector operations per output and row.
  auto pixel = [&](int x, __m512i* acc, bool masked) {  // per row: 4 lanes x [R G B 0] partial sums of output x
    const std::int8_t* w = digits + static_cast<std::size_t>(x) * REGS * D * 64;
    __m512i px[REGS][ROWS];
    for (int r = 0; r < REGS; ++r)
      for (int i = 0; i < ROWS; ++i)
        px[r][i] = _mm512_maskz_permutexvar_epi8(keep, perm, load_row(in[i], start[x] * 3 + 48 * r, row_bytes, masked));
    for (int i = 0; i < ROWS; ++i) acc[i] = _mm512_setzero_si512();
    for (int d = D - 1; d >= 0; --d) {
      if (d < D - 1)
        for (int i = 0; i < ROWS; ++i) acc[i] = _mm512_slli_epi32(acc[i], 7);
      for (int r = 0; r < REGS; ++r) {
        const __m512i wd = _mm512_loadu_si512(w + (r * D + d) * 64);
        for (int i = 0; i < ROWS; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], px[r][i], wd);
      }
    }
  };
  int x = 0;
  // Four outputs at a time: their lane sums by two 128-bit-lane transposes.
  for (; x + 4 <= safe_end; x += 4) {
    __m512i a[4][ROWS];
    for (int j = 0; j < 4; ++j) pixel(x + j, a[j], false);
    for (int i = 0; i < ROWS; ++i) {
      const __m512i s01 = _mm512_add_epi32(_mm512_shuffle_i32x4(a[0][i], a[1][i], 0x44), _mm512_shuffle_i32x4(a[0][i], a[1][i], 0xEE));
      const __m512i s23 = _mm512_add_epi32(_mm512_shuffle_i32x4(a[2][i], a[3][i], 0x44), _mm512_shuffle_i32x4(a[2][i], a[3][i], 0xEE));
      store4(_mm512_add_epi32(_mm512_shuffle_i32x4(s01, s23, 0x88), _mm512_shuffle_i32x4(s01, s23, 0xDD)), out[i] + x * 3);
    }
  }
  for (; x < out_w; ++x) {
    __m512i acc[ROWS];
    pixel(x, acc, x >= safe_end);
    for (int i = 0; i < ROWS; ++i)
      store1(_mm_add_epi32(_mm_add_epi32(_mm512_castsi512_si128(acc[i]), _mm512_extracti32x4_epi32(acc[i], 1)),
                           _mm_add_epi32(_mm512_extracti32x4_epi32(acc[i], 2), _mm512_extracti32x4_epi32(acc[i], 3))),
             out[i] + x * 3);
  }
}

// Up to 8 taps: two outputs per register, output x in 128-bit lanes 0-1 and
// x + 1 in lanes 2-3, both from x's 64-byte load (the plan checked that x + 1
// starts at most 13 pixels later); digits: per pair of outputs.
template <int ROWS, int D>
void pil_c3_vnni_pairs(const std::uint8_t* const* in, std::uint8_t* const* out, const int* start,
                       const std::int8_t* digits, int out_w, int row_bytes) {
  alignas(64) std::int8_t idx[64];
  for (int g = 0; g < 4; ++g)
    for (int c = 0; c < 4; ++c)
      for (int j = 0; j < 4; ++j) idx[16 * g + 4 * c + j] = static_cast<std::int8_t>(c < 3 ? (4 * (g % 2) + j) * 3 + c : 0);
  const __m512i perm = _mm512_load_si512(idx);
  const __mmask64 keep = 0x0FFF0FFF0FFF0FFFULL, upper = 0xFFFFFFFF00000000ULL;
  int safe_end = out_w;  // outputs whose 64-byte load stays in the row
  while (safe_end > 0 && start[safe_end - 1] * 3 + 64 > row_bytes) --safe_end;
  // The pair (x, x + 1) with x even: per row, lanes [x: 2 tap groups | x + 1: 2 tap groups].
  auto pair = [&](int x, __m512i* acc) {
    const int next = x + 1 < out_w ? start[x + 1] : start[x];
    const __m512i p = _mm512_mask_add_epi8(perm, upper, perm, _mm512_set1_epi8(static_cast<char>(3 * (next - start[x]))));
    const std::int8_t* w = digits + static_cast<std::size_t>(x / 2) * D * 64;
    __m512i wd[D];
    for (int d = 0; d < D; ++d) wd[d] = _mm512_loadu_si512(w + 64 * d);
    for (int i = 0; i < ROWS; ++i) {
      const __m512i px = _mm512_maskz_permutexvar_epi8(keep, p, load_row(in[i], start[x] * 3, row_bytes, x >= safe_end));
      acc[i] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), px, wd[D - 1]);
      for (int d = D - 2; d >= 0; --d) acc[i] = _mm512_dpbusd_epi32(_mm512_slli_epi32(acc[i], 7), px, wd[d]);
    }
  };
  int x = 0;
  for (; x + 4 <= out_w; x += 4) {
    __m512i a[ROWS], b[ROWS];
    pair(x, a);
    pair(x + 2, b);
    for (int i = 0; i < ROWS; ++i)
      store4(_mm512_add_epi32(_mm512_shuffle_i32x4(a[i], b[i], 0x88), _mm512_shuffle_i32x4(a[i], b[i], 0xDD)), out[i] + x * 3);
  }
  for (; x < out_w; x += 2) {
    __m512i a[ROWS];
    pair(x, a);
    for (int i = 0; i < ROWS; ++i) {
      store1(_mm_add_epi32(_mm512_castsi512_si128(a[i]), _mm512_extracti32x4_epi32(a[i], 1)), out[i] + x * 3);
      if (x + 1 < out_w)
        store1(_mm_add_epi32(_mm512_extracti32x4_epi32(a[i], 2), _mm512_extracti32x4_epi32(a[i], 3)), out[i] + x * 3 + 3);
    }
  }
}

template <int ROWS>
void pil_c3_dispatch(const std::uint8_t* const* in, std::uint8_t* const* out, const int* start,
                     const std::int8_t* digits, int regs, int ndigits, int out_w, int row_bytes) {
  if (regs == 0) {
    if (ndigits == 3) return pil_c3_vnni_pairs<ROWS, 3>(in, out, start, digits, out_w, row_bytes);
    return pil_c3_vnni_pairs<ROWS, 4>(in, out, start, digits, out_w, row_bytes);
  }
  if (ndigits == 3) {
    if (regs == 1) return pil_c3_vnni<ROWS, 1, 3>(in, out, start, digits, out_w, row_bytes);
    return pil_c3_vnni<ROWS, 2, 3>(in, out, start, digits, out_w, row_bytes);
  }
  if (regs == 1) return pil_c3_vnni<ROWS, 1, 4>(in, out, start, digits, out_w, row_bytes);
  pil_c3_vnni<ROWS, 2, 4>(in, out, start, digits, out_w, row_bytes);
}

}  // namespace

void pil_horizontal_u8_c3_avx512(const std::uint8_t* in, std::uint8_t* out, const int* start, const std::int8_t* digits,
                                 int regs, int ndigits, int out_w, int in_w) {
  pil_c3_dispatch<1>(&in, &out, start, digits, regs, ndigits, out_w, in_w * 3);
}

void pil_horizontal_u8_c3_avx512_2rows(const std::uint8_t* in0, const std::uint8_t* in1, std::uint8_t* out0,
                                       std::uint8_t* out1, const int* start, const std::int8_t* digits, int regs,
                                       int ndigits, int out_w, int in_w) {
  const std::uint8_t* in[2] = {in0, in1};
  std::uint8_t* out[2] = {out0, out1};
  pil_c3_dispatch<2>(in, out, start, digits, regs, ndigits, out_w, in_w * 3);
}

}  // namespace vinfer::detail
