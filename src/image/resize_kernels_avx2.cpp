// AVX2 kernels for the horizontal pass, where each output pixel reads its own
// window and a plain vertical-style loop does not apply. Compiled with
// -mavx2 for this file only and called only after a runtime CPU check.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "image/pixel_ops.hpp"
#include "image/resize_kernels.hpp"

namespace vinfer::detail {

// Pillow's horizontal pass on one gray row, bit-exact. Each 22-bit weight is
// split as w = hi * 2^11 + lo (lo in [0, 2^11)), so that two 16-bit
// multiply-adds (pmaddwd) compute the exact 32-bit sum over up to 16 taps.
// Eight outputs are reduced together with horizontal adds.
void pil_horizontal_u8_c1_avx2(const std::uint8_t* in, std::uint8_t* out, int out_w, const int* start,
                               const std::int16_t* whi, const std::int16_t* wlo, int safe_end) {
  const __m256i round = _mm256_set1_epi32(1 << 21);
  const __m256i zero = _mm256_setzero_si256(), max = _mm256_set1_epi32(255);
  int x = 0;
  for (; x + 8 <= safe_end; x += 8) {
    __m256i s[8];
    for (int j = 0; j < 8; ++j) {
      const __m256i px = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + start[x + j])));
      const __m256i hi = _mm256_madd_epi16(px, _mm256_load_si256(reinterpret_cast<const __m256i*>(whi + (x + j) * 16)));
      const __m256i lo = _mm256_madd_epi16(px, _mm256_load_si256(reinterpret_cast<const __m256i*>(wlo + (x + j) * 16)));
      s[j] = _mm256_add_epi32(_mm256_slli_epi32(hi, 11), lo);
    }
    const __m256i t0 = _mm256_hadd_epi32(s[0], s[1]), t1 = _mm256_hadd_epi32(s[2], s[3]);
    const __m256i t2 = _mm256_hadd_epi32(s[4], s[5]), t3 = _mm256_hadd_epi32(s[6], s[7]);
    const __m256i u0 = _mm256_hadd_epi32(t0, t1), u1 = _mm256_hadd_epi32(t2, t3);
    __m256i r = _mm256_add_epi32(_mm256_permute2x128_si256(u0, u1, 0x20), _mm256_permute2x128_si256(u0, u1, 0x31));
    r = _mm256_min_epi32(_mm256_max_epi32(_mm256_srai_epi32(_mm256_add_epi32(r, round), 22), zero), max);
    const __m128i p16 = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + x), _mm_packus_epi16(p16, p16));
  }
  // The rest (windows that would read past the row end): exact scalar.
  for (; x < out_w; ++x) {
    int acc = 1 << 21;
    for (int k = 0; k < 16; ++k) {
      const int w = whi[x * 16 + k] * 2048 + wlo[x * 16 + k];
      if (w != 0) acc += w * in[start[x] + k];
    }
    out[x] = clip8_shift22(acc);
  }
}

// The same with <= 8 taps, two outputs per register (j and j + 4), so that
// no multiply-add is spent on zero padding; the three horizontal adds then
// leave outputs 0-7 in order.
void pil_horizontal_u8_c1_8tap_avx2(const std::uint8_t* in, std::uint8_t* out, const int* start,
                                    const std::int16_t* whi, const std::int16_t* wlo, int blocks) {
  const __m256i round = _mm256_set1_epi32(1 << 21);
  const __m256i zero = _mm256_setzero_si256(), max = _mm256_set1_epi32(255);
  for (int b = 0; b < blocks; ++b) {
    const int* st = start + 8 * b;
    __m256i s[4];
    for (int j = 0; j < 4; ++j) {
      const __m128i two = _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + st[j])),
                                             _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + st[j + 4])));
      const __m256i px = _mm256_cvtepu8_epi16(two);
      const std::size_t o = static_cast<std::size_t>(b) * 64 + j * 16;
      const __m256i hi = _mm256_madd_epi16(px, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(whi + o)));
      const __m256i lo = _mm256_madd_epi16(px, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wlo + o)));
      s[j] = _mm256_add_epi32(_mm256_slli_epi32(hi, 11), lo);
    }
    __m256i r = _mm256_hadd_epi32(_mm256_hadd_epi32(s[0], s[1]), _mm256_hadd_epi32(s[2], s[3]));
    r = _mm256_min_epi32(_mm256_max_epi32(_mm256_srai_epi32(_mm256_add_epi32(r, round), 22), zero), max);
    const __m128i p16 = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + 8 * b), _mm_packus_epi16(p16, p16));
  }
}

// out[i] = (float)in[idx[i]] for a gray row: nearest-neighbour gather to float.
void nearest_row_u8_f32_c1_avx2(const std::uint8_t* in, float* out, int out_w, const int* xs, int safe_end) {
  int x = 0;
  for (; x + 8 <= safe_end; x += 8) {
    const __m256i idx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xs + x));
    // Gather 32-bit words at byte offsets, keep the low byte.
    const __m256i v = _mm256_and_si256(_mm256_i32gather_epi32(reinterpret_cast<const int*>(in), idx, 1),
                                       _mm256_set1_epi32(0xFF));
    _mm256_storeu_ps(out + x, _mm256_cvtepi32_ps(v));
  }
  for (; x < out_w; ++x) out[x] = in[xs[x]];
}

}  // namespace vinfer::detail

namespace vinfer::detail {

// OpenCV's INTER_LINEAR horizontal pass on a gray row: d[x] = w0*s[i] + w1*s[i+1].
// Eight outputs per step: gather the two source bytes of each as a 16-bit
// pair, then one 16-bit multiply-add with the packed weight pairs.
void cv_horizontal_linear_c1_avx2(const std::uint8_t* s, std::int32_t* d, int out_w, const int* start,
                                  const std::int32_t* wpair, int safe_end) {
  const __m256i lo = _mm256_set1_epi32(0xFF), hi = _mm256_set1_epi32(0xFF00);
  int x = 0;
  for (; x + 8 <= safe_end; x += 8) {
    const __m256i idx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(start + x));
    const __m256i v = _mm256_i32gather_epi32(reinterpret_cast<const int*>(s), idx, 1);
    const __m256i pairs = _mm256_or_si256(_mm256_and_si256(v, lo), _mm256_slli_epi32(_mm256_and_si256(v, hi), 8));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + x),
                        _mm256_madd_epi16(pairs, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wpair + x))));
  }
  for (; x < out_w; ++x) {
    const int w0 = static_cast<std::int16_t>(wpair[x] & 0xFFFF), w1 = wpair[x] >> 16;
    d[x] = w0 * s[start[x]] + w1 * s[start[x] + 1];
  }
}

}  // namespace vinfer::detail

namespace vinfer::detail {

// Pillow's horizontal pass on an interleaved RGB row, bit-exact. Taps go in
// groups of four: one 16-byte load covers five pixels, a byte shuffle pairs
// the taps per channel ([R0 R1 G0 G1 B0 B1 0 0 | R2 R3 G2 G3 B2 B3 0 0]) and
// two 16-bit multiply-adds with the split weights (hi * 2^11 + lo) give exact
// 32-bit sums per channel.
void pil_horizontal_u8_c3_avx2(const std::uint8_t* in, std::uint8_t* out, int out_w, const int* start,
                               const std::int16_t* whi, const std::int16_t* wlo, int groups, int safe_end,
                               const std::int32_t* fixed, int taps) {
  // One in-lane shuffle of the broadcast load both pairs and zero-extends the taps.
  const __m256i shuf = _mm256_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1,  //
                                        6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1);
  const __m128i round = _mm_set1_epi32(1 << 21), zero = _mm_setzero_si128(), max = _mm_set1_epi32(255);
  int x = 0;
  for (; x < safe_end; ++x) {
    const std::uint8_t* s = in + start[x] * 3;
    __m256i acc_hi = _mm256_setzero_si256(), acc_lo = _mm256_setzero_si256();
    for (int g = 0; g < groups; ++g) {
      const __m256i px = _mm256_shuffle_epi8(
          _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + g * 12))), shuf);
      const std::size_t o = (static_cast<std::size_t>(x) * 4 + g) * 16;
      acc_hi = _mm256_add_epi32(acc_hi, _mm256_madd_epi16(px, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(whi + o))));
      acc_lo = _mm256_add_epi32(acc_lo, _mm256_madd_epi16(px, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wlo + o))));
    }
    const __m256i acc = _mm256_add_epi32(_mm256_slli_epi32(acc_hi, 11), acc_lo);
    __m128i r = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    r = _mm_min_epi32(_mm_max_epi32(_mm_srai_epi32(_mm_add_epi32(r, round), 22), zero), max);
    out[x * 3 + 0] = static_cast<std::uint8_t>(_mm_extract_epi32(r, 0));
    out[x * 3 + 1] = static_cast<std::uint8_t>(_mm_extract_epi32(r, 1));
    out[x * 3 + 2] = static_cast<std::uint8_t>(_mm_extract_epi32(r, 2));
  }
  for (; x < out_w; ++x) {  // windows that would load past the row end
    int acc[3] = {1 << 21, 1 << 21, 1 << 21};
    const std::uint8_t* s = in + start[x] * 3;
    for (int k = 0; k < taps; ++k)
      for (int c = 0; c < 3; ++c) acc[c] += fixed[static_cast<std::size_t>(x) * taps + k] * s[k * 3 + c];
    for (int c = 0; c < 3; ++c) out[x * 3 + c] = clip8_shift22(acc[c]);
  }
}

}  // namespace vinfer::detail

namespace vinfer::detail {
namespace {

// Block b of a shuffle gather (see ShuffleGather): each output's bytes in its slot.
inline __m256i shuffle_gather(const std::uint8_t* in, const int* base, const std::int8_t* mask, int b) {
  const __m256i v = _mm256_inserti128_si256(
      _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + base[2 * b]))),
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + base[2 * b + 1])), 1);
  return _mm256_shuffle_epi8(v, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(mask + 32 * b)));
}

}  // namespace

void nearest_row_u8_c1_shuffle_avx2(const std::uint8_t* in, std::uint8_t* out, const int* base,
                                    const std::int8_t* mask, int blocks) {
  for (int b = 0; b < blocks; ++b) {
    const __m256i v = shuffle_gather(in, base, mask, b);  // 4 bytes at the start of each lane
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + 8 * b),
                     _mm_unpacklo_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
  }
}

void nearest_row_u8_f32_c1_shuffle_avx2(const std::uint8_t* in, float* out, const int* base,
                                        const std::int8_t* mask, int blocks) {
  for (int b = 0; b < blocks; ++b)
    _mm256_storeu_ps(out + 8 * b, _mm256_cvtepi32_ps(shuffle_gather(in, base, mask, b)));
}

void cv_horizontal_linear_c1_shuffle_avx2(const std::uint8_t* s, std::int32_t* d, const int* base,
                                          const std::int8_t* mask, int blocks, const std::int32_t* wpair) {
  for (int b = 0; b < blocks; ++b)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + 8 * b),
                        _mm256_madd_epi16(shuffle_gather(s, base, mask, b),
                                          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wpair + 8 * b))));
}

void float_horizontal_c1_shuffle_avx2(const std::uint8_t* s, float* d, const int* base, const std::int8_t* mask,
                                      int blocks, const float* wt, int taps) {
  const __m256i byte = _mm256_set1_epi32(0xFF);
  for (int b = 0; b < blocks; ++b, wt += 8 * taps) {
    const __m256i v = shuffle_gather(s, base, mask, b);  // tap k in byte k of each slot
    // Summed tap by tap from zero, in the order of the plain kernel, so the
    // float result is the same to the bit.
    __m256 acc = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_and_si256(v, byte)), _mm256_loadu_ps(wt));
    for (int k = 1; k < taps; ++k) {
      const __m256i t = _mm256_and_si256(_mm256_srli_epi32(v, 8 * k), byte);
      acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_cvtepi32_ps(t), _mm256_loadu_ps(wt + 8 * k)));
    }
    _mm256_storeu_ps(d + 8 * b, acc);
  }
}

}  // namespace vinfer::detail
