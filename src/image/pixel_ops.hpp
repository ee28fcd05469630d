// Internal: per-pixel arithmetic shared by the reference and fast resize paths.
// Each helper is the exact rounding of one framework's kernel.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace vinfer::detail {

inline std::uint8_t sat_u8(int v) { return static_cast<std::uint8_t>(std::clamp(v, 0, 255)); }

// Pillow's clip8 after 22 fractional bits (arithmetic shift, then clamp).
inline std::uint8_t clip8_shift22(int acc) { return sat_u8(acc >> 22); }

// Round half to even, then saturate: cvRound / saturate_cast<uchar>(float).
inline std::uint8_t round_u8(float v) {
  if (!(v > 0.f)) return 0;
  if (v >= 255.f) return 255;
  return static_cast<std::uint8_t>(std::lrint(v));
}

// Rounds half to even (as lrint and cvtps2dq do) for |v| < 2^22: adding and
// subtracting 1.5 x 2^23 leaves no fraction bits. Unlike lrint, it vectorizes.
inline float round_even_small(float v) {
  constexpr float k = 12582912.f;
  return (v + k) - k;
}

// OpenCV's vertical passes on u8 as its SIMD code computes them.

// VResizeLinearVec_32s8u: drop 4 bits, 16-bit high multiply, round by 2 bits.
// OpenCV 5 runs this formula over whole rows (tails included).
inline int cv_vlinear_simd(int s0, int s1, int b0, int b1) {
  const int a = static_cast<std::int16_t>(std::clamp(s0 >> 4, -32768, 32767));
  const int b = static_cast<std::int16_t>(std::clamp(s1 >> 4, -32768, 32767));
  const int sum = std::clamp(((a * b0) >> 16) + ((b * b1) >> 16), -32768, 32767);
  return (sum + 2) >> 2;
}

// VResizeCubic on a u8 row of n elements from the four rows s[0..3] of
// horizontal sums (11-bit weights b). OpenCV's 128-bit SIMD kernel
// (VResizeCubicVec_32s8u, 8 elements a step, no FMA in x86 builds) takes the
// first n / 8 * 8 elements in float, S0 b0 + (S1 b1 + (S2 b2 + S3 b3)) with
// every product and sum rounded, then rounds half to even; its scalar loop
// takes the rest in fixed point. (opencv-python on x86 hands 1-, 3- and
// 4-channel images of at least 4x4 pixels to Intel IPP instead, unless
// cv2.ipp.setUseIPP(False): docs/compat.md.)
inline void cv_vertical_cubic_u8(const int* const s[4], const std::int32_t* b, std::uint8_t* d, int n) {
  const float scale = 1.f / (2048.f * 2048.f);
  const float f0 = static_cast<float>(b[0]) * scale, f1 = static_cast<float>(b[1]) * scale,
              f2 = static_cast<float>(b[2]) * scale, f3 = static_cast<float>(b[3]) * scale;
  const int vector_end = n / 8 * 8;
  for (int i = 0; i < vector_end; ++i) {
    float acc = static_cast<float>(s[3][i]) * f3;
    acc = static_cast<float>(s[2][i]) * f2 + acc;
    acc = static_cast<float>(s[1][i]) * f1 + acc;
    acc = static_cast<float>(s[0][i]) * f0 + acc;
    d[i] = sat_u8(static_cast<int>(round_even_small(acc)));
  }
  for (int i = vector_end; i < n; ++i) {
    const std::int64_t sum = static_cast<std::int64_t>(s[0][i]) * b[0] + static_cast<std::int64_t>(s[1][i]) * b[1] +
                             static_cast<std::int64_t>(s[2][i]) * b[2] + static_cast<std::int64_t>(s[3][i]) * b[3];
    d[i] = sat_u8(static_cast<int>((sum + (1 << 21)) >> 22));
  }
}

inline std::uint8_t cv_area_fast_value(int sum, int sx, int sy) {
  if (sx == 2 && sy == 2) return static_cast<std::uint8_t>((sum + 2) >> 2);
  return round_u8(static_cast<float>(sum) * (1.f / static_cast<float>(sx * sy)));
}

// Pillow's RGBA -> RGBa (premultiplied) and back, as Convert.c computes them.
inline void pil_premultiply_row(const std::uint8_t* in, std::uint8_t* out, int w) {
  for (int x = 0; x < w; ++x, in += 4, out += 4) {
    const unsigned a = in[3];
    for (int c = 0; c < 3; ++c) {
      const unsigned t = in[c] * a + 128;
      out[c] = static_cast<std::uint8_t>(((t >> 8) + t) >> 8);
    }
    out[3] = static_cast<std::uint8_t>(a);
  }
}

inline void pil_unpremultiply_row(std::uint8_t* px, int w) {
  for (int x = 0; x < w; ++x, px += 4) {
    const unsigned a = px[3];
    if (a == 0 || a == 255) continue;
    for (int c = 0; c < 3; ++c) px[c] = static_cast<std::uint8_t>(std::min(255u, (255u * px[c]) / a));
  }
}

}  // namespace vinfer::detail
