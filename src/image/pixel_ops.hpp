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

// OpenCV's vertical passes on u8 as its SIMD code computes them. OpenCV 5 runs
// the vector formula over whole rows (tails included), so it is the only one.

// VResizeLinearVec_32s8u: drop 4 bits, 16-bit high multiply, round by 2 bits.
inline int cv_vlinear_simd(int s0, int s1, int b0, int b1) {
  const int a = static_cast<std::int16_t>(std::clamp(s0 >> 4, -32768, 32767));
  const int b = static_cast<std::int16_t>(std::clamp(s1 >> 4, -32768, 32767));
  const int sum = std::clamp(((a * b0) >> 16) + ((b * b1) >> 16), -32768, 32767);
  return (sum + 2) >> 2;
}

// VResizeCubicVec_32s8u: float sum of the 4 taps, rounded to nearest even.
inline int cv_vcubic_simd(const int* col, int stride, const int* b) {
  const float scale = 1.f / (2048.f * 2048.f);
  float s = static_cast<float>(col[0]) * (static_cast<float>(b[0]) * scale);
  s = s + static_cast<float>(col[stride]) * (static_cast<float>(b[1]) * scale);
  s = s + static_cast<float>(col[2 * stride]) * (static_cast<float>(b[2]) * scale);
  s = s + static_cast<float>(col[3 * stride]) * (static_cast<float>(b[3]) * scale);
  return static_cast<int>(std::lrint(s));
}

// The same for images under 4 pixels tall, where clamped taps merged into fewer
// than 4 rows (the sum of the merged weights, in the same float order).
inline int cv_vcubic_short(const int* col, int stride, const int* b, int taps) {
  const float scale = 1.f / (2048.f * 2048.f);
  float s = 0.f;
  for (int k = 0; k < taps; ++k) s = s + static_cast<float>(col[k * stride]) * (static_cast<float>(b[k]) * scale);
  return static_cast<int>(std::lrint(s));
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
