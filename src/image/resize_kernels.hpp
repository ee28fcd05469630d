// Internal: resize kernels. Free functions on plain pointers, one per
// arithmetic; SIMD versions are dispatched at runtime through Highway.
#pragma once
#include <cstddef>
#include <cstdint>

namespace vinfer::detail {

// out[i] = clip8((2^21 + sum_k w[k] * rows[k][i]) >> 22) for i < n (Pillow vertical pass).
void pil_vertical_u8(const std::uint8_t* const* rows, const std::int32_t* w, int taps, std::uint8_t* out,
                     std::size_t n);

// out[i] = sum_k w[k] * rows[k][i] in float, k ascending (float vertical pass).
void float_vertical_f32(const float* const* rows, const float* w, int taps, float* out, std::size_t n);

// Pillow horizontal pass of one row: C interleaved channels, fixed-point taps.
void pil_horizontal_u8(const std::uint8_t* in, std::uint8_t* out, int out_w, int channels, const int* start,
                       const std::int32_t* w, int taps);

// Float horizontal pass of one row (input u8 or f32).
void float_horizontal(const std::uint8_t* in, float* out, int out_w, int channels, const int* start,
                      const float* w, int taps);
void float_horizontal(const float* in, float* out, int out_w, int channels, const int* start, const float* w,
                      int taps);

// Nearest-neighbour gather of one row.
void nearest_row_u8(const std::uint8_t* in, std::uint8_t* out, int out_w, int channels, const int* xs);
void nearest_row_f32(const float* in, float* out, int out_w, int channels, const int* xs);

}  // namespace vinfer::detail
