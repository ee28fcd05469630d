// AVX-512 (BW + VBMI) version of Pillow's horizontal pass on RGB rows: one
// 64-byte load and one byte permutation (vpermb, zeroing the high bytes)
// give eight taps of all three channels as 16-bit pairs, where AVX2 needs a
// load and a shuffle per four taps. Bit-exact like the AVX2 kernel (same
// split weights, same sums). Compiled with -mavx512f -mavx512bw -mavx512vbmi
// for this file only; called after a runtime check.
#include <immintrin.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "image/pixel_ops.hpp"
#include "image/resize_kernels.hpp"

namespace vinfer::detail {

bool has_avx512vbmi() {
  // VINFER_IMAGE_ISA=avx2 keeps the image kernels on AVX2 (to compare, or to test that path here).
  static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vbmi") &&
                          !(std::getenv("VINFER_IMAGE_ISA") && std::strcmp(std::getenv("VINFER_IMAGE_ISA"), "avx2") == 0);
  return yes;
}

namespace {

// ROWS source rows through the same weights: each weight register is loaded
// once for all of them (the weights, 256 bytes per output, otherwise stream
// from L2 for every row).
template <int ROWS>
int pil_c3_rows(const std::uint8_t* const* in, std::uint8_t* const* out, const int* start, const std::int16_t* whi,
                const std::int16_t* wlo, int groups, int safe_end) {
  // 128-bit lane L holds taps 2L and 2L+1 as [R R G G B B 0 0] (16-bit), the
  // layout of split3_hi/lo: the low byte of 16-bit value k is the pixel byte,
  // the high byte zero (mask).
  alignas(64) std::int8_t idx[64];
  for (int lane = 0; lane < 4; ++lane) {
    const int t0 = 2 * lane, t1 = 2 * lane + 1;
    const int src[8] = {t0 * 3, t1 * 3, t0 * 3 + 1, t1 * 3 + 1, t0 * 3 + 2, t1 * 3 + 2, 0, 0};
    for (int k = 0; k < 8; ++k) {
      idx[lane * 16 + 2 * k] = static_cast<std::int8_t>(src[k]);
      idx[lane * 16 + 2 * k + 1] = 0;
    }
  }
  const __m512i perm = _mm512_load_si512(idx);
  // Keep the low byte of slots 0-5 of each lane; zero the high bytes and slots 6, 7.
  const __mmask64 keep = 0x0555055505550555ULL;
  const int regs = (groups + 1) / 2;  // eight taps per register
  auto pixel = [&](int x, __m512i* acc) {  // per row: 4 lanes x [R G B 0] partial sums of output x
    __m512i hi[ROWS], lo[ROWS];
    for (int i = 0; i < ROWS; ++i) hi[i] = lo[i] = _mm512_setzero_si512();
    for (int r = 0; r < regs; ++r) {
      const std::size_t o = (static_cast<std::size_t>(x) * 4 + 2 * r) * 16;
      const __m512i wh = _mm512_loadu_si512(whi + o), wl = _mm512_loadu_si512(wlo + o);
      for (int i = 0; i < ROWS; ++i) {
        const __m512i px = _mm512_maskz_permutexvar_epi8(keep, perm, _mm512_loadu_si512(in[i] + start[x] * 3 + 24 * r));
        hi[i] = _mm512_add_epi32(hi[i], _mm512_madd_epi16(px, wh));
        lo[i] = _mm512_add_epi32(lo[i], _mm512_madd_epi16(px, wl));
      }
    }
    for (int i = 0; i < ROWS; ++i) acc[i] = _mm512_add_epi32(_mm512_slli_epi32(hi[i], 11), lo[i]);
  };
  const __m512i round = _mm512_set1_epi32(1 << 21), zero = _mm512_setzero_si512(), max = _mm512_set1_epi32(255);
  // [R0 G0 B0 _ R1 G1 B1 _ ...] -> 12 packed bytes.
  const __m128i pack = _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
  int x = 0;
  // Four outputs at a time: their lane sums by two 128-bit-lane transposes.
  for (; x + 4 <= safe_end; x += 4) {
    __m512i a[4][ROWS];
    for (int j = 0; j < 4; ++j) pixel(x + j, a[j]);
    for (int i = 0; i < ROWS; ++i) {
      const __m512i s01 = _mm512_add_epi32(_mm512_shuffle_i32x4(a[0][i], a[1][i], 0x44), _mm512_shuffle_i32x4(a[0][i], a[1][i], 0xEE));
      const __m512i s23 = _mm512_add_epi32(_mm512_shuffle_i32x4(a[2][i], a[3][i], 0x44), _mm512_shuffle_i32x4(a[2][i], a[3][i], 0xEE));
      __m512i v = _mm512_add_epi32(_mm512_shuffle_i32x4(s01, s23, 0x88), _mm512_shuffle_i32x4(s01, s23, 0xDD));
      v = _mm512_min_epi32(_mm512_max_epi32(_mm512_srai_epi32(_mm512_add_epi32(v, round), 22), zero), max);
      const __m128i b = _mm_shuffle_epi8(_mm512_cvtepi32_epi8(v), pack);
      std::uint8_t* d = out[i] + x * 3;
      _mm_storel_epi64(reinterpret_cast<__m128i*>(d), b);
      const int tail = _mm_extract_epi32(b, 2);
      std::memcpy(d + 8, &tail, 4);
    }
  }
  for (; x < safe_end; ++x) {
    __m512i acc[ROWS];
    pixel(x, acc);
    for (int i = 0; i < ROWS; ++i) {
      __m128i r4 = _mm_add_epi32(_mm_add_epi32(_mm512_castsi512_si128(acc[i]), _mm512_extracti32x4_epi32(acc[i], 1)),
                                 _mm_add_epi32(_mm512_extracti32x4_epi32(acc[i], 2), _mm512_extracti32x4_epi32(acc[i], 3)));
      r4 = _mm_min_epi32(_mm_max_epi32(_mm_srai_epi32(_mm_add_epi32(r4, _mm_set1_epi32(1 << 21)), 22), _mm_setzero_si128()),
                         _mm_set1_epi32(255));
      out[i][x * 3 + 0] = static_cast<std::uint8_t>(_mm_cvtsi128_si32(r4));
      out[i][x * 3 + 1] = static_cast<std::uint8_t>(_mm_extract_epi32(r4, 1));
      out[i][x * 3 + 2] = static_cast<std::uint8_t>(_mm_extract_epi32(r4, 2));
    }
  }
  return x;
}

}  // namespace

int pil_horizontal_u8_c3_avx512(const std::uint8_t* in, std::uint8_t* out, const int* start, const std::int16_t* whi,
                                const std::int16_t* wlo, int groups, int safe_end) {
  return pil_c3_rows<1>(&in, &out, start, whi, wlo, groups, safe_end);
}

int pil_horizontal_u8_c3_avx512_2rows(const std::uint8_t* in0, const std::uint8_t* in1, std::uint8_t* out0,
                                      std::uint8_t* out1, const int* start, const std::int16_t* whi,
                                      const std::int16_t* wlo, int groups, int safe_end) {
  const std::uint8_t* in[2] = {in0, in1};
  std::uint8_t* out[2] = {out0, out1};
  return pil_c3_rows<2>(in, out, start, whi, wlo, groups, safe_end);
}

}  // namespace vinfer::detail
