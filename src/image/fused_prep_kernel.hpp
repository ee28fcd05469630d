// Internal: the fused preprocessing formula (see fused_prep.hpp), plain C++
// that compiles for the host and, inside nvcc, for the device.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define VINFER_HD __host__ __device__
#else
#define VINFER_HD
#endif

namespace vinfer::detail {

// Plain pointers, all valid where the formula runs.
struct FusedPrepArgs {
  const std::uint8_t* src = nullptr;  // RGB rows
  long long src_stride = 0;           // bytes per source row
  int size = 0;                       // the output is size x size
  int crop_x = 0, crop_y = 0;         // the output's offset in the resized image
  int taps_x = 0, taps_y = 0;
  const std::int32_t* start_x = nullptr;   // per resized column: first source column
  const std::int32_t* weight_x = nullptr;  // per resized column: taps_x weights, 1.0 = 2^22
  const std::int32_t* start_y = nullptr;
  const std::int32_t* weight_y = nullptr;
  int vertical_first = 0;             // Pillow's pass order for this geometry
  int bgr = 0, nhwc = 0;              // output channel c reads source channel 2 - c; layout
  const float* table = nullptr;       // 3 x 256 (normalize_table)
  float* out = nullptr;
};

VINFER_HD inline int fused_clip8(int v) {  // Pillow's clip8: the sum started at 2^21
  v >>= 22;
  return v < 0 ? 0 : (v > 255 ? 255 : v);
}

// Output pixel (x, y), its three channels.
VINFER_HD inline void fused_prep_pixel(const FusedPrepArgs& a, int x, int y) {
  const int rx = x + a.crop_x, ry = y + a.crop_y;
  const int sx = a.start_x[rx], sy = a.start_y[ry];
  const std::int32_t* wx = a.weight_x + static_cast<long long>(rx) * a.taps_x;
  const std::int32_t* wy = a.weight_y + static_cast<long long>(ry) * a.taps_y;
  int acc[3] = {1 << 21, 1 << 21, 1 << 21};
  // First pass (u8 after rounding) for each tap of the second pass.
  const int outer = a.vertical_first ? a.taps_x : a.taps_y;
  const int inner = a.vertical_first ? a.taps_y : a.taps_x;
  for (int k = 0; k < outer; ++k) {
    int h[3] = {1 << 21, 1 << 21, 1 << 21};
    for (int j = 0; j < inner; ++j) {
      const int col = a.vertical_first ? sx + k : sx + j;
      const int row = a.vertical_first ? sy + j : sy + k;
      const std::uint8_t* p = a.src + row * a.src_stride + col * 3;
      const int w = a.vertical_first ? wy[j] : wx[j];
      for (int c = 0; c < 3; ++c) h[c] += w * p[c];
    }
    const int w = a.vertical_first ? wx[k] : wy[k];
    for (int c = 0; c < 3; ++c) acc[c] += w * fused_clip8(h[c]);
  }
  const long long plane = static_cast<long long>(a.size) * a.size;
  for (int c = 0; c < 3; ++c) {
    const float v = a.table[c * 256 + fused_clip8(acc[a.bgr ? 2 - c : c])];
    if (a.nhwc) a.out[(static_cast<long long>(y) * a.size + x) * 3 + c] = v;
    else a.out[c * plane + static_cast<long long>(y) * a.size + x] = v;
  }
}

}  // namespace vinfer::detail
