// Internal: resize kernels. Free functions on plain pointers, one per
// arithmetic; SIMD versions are dispatched at runtime through Highway.
#pragma once
#include <cstddef>
#include <cstdint>

#include "image/resize_plan.hpp"

namespace vinfer::detail {

// out[i] = clip8((2^21 + sum_k w[k] * rows[k][i]) >> 22) for i < n (Pillow vertical pass).
void pil_vertical_u8(const std::uint8_t* const* rows, const std::int32_t* w, int taps, std::uint8_t* out,
                     std::size_t n);

// out[i] = sum_k w[k] * rows[k][i] in float, k ascending (float vertical pass).
void float_vertical_f32(const float* const* rows, const float* w, int taps, float* out, std::size_t n);

// Pillow's horizontal pass on two rows (RGB: the weights loaded once for
// both where the CPU allows; otherwise two calls of pil_horizontal_u8).
void pil_horizontal_u8_2rows(const std::uint8_t* in0, const std::uint8_t* in1, std::uint8_t* out0, std::uint8_t* out1,
                             int channels, const AxisTaps& t);

// out[i] = round_u8(in[i]) for finite in (vectorised).
void round_row_u8(const float* in, std::uint8_t* out, std::size_t n);

// OpenCV INTER_LINEAR vertical pass on u8 (its SIMD rounding), i < n.
void cv_vertical_linear_u8(const std::int32_t* s0, const std::int32_t* s1, int b0, int b1, std::uint8_t* out,
                           std::size_t n);

// Pillow horizontal pass of one row (C interleaved channels).
void pil_horizontal_u8(const std::uint8_t* in, std::uint8_t* out, int channels, const AxisTaps& t);

// Float horizontal pass of one row (input u8 or f32).
void float_horizontal(const std::uint8_t* in, float* out, int out_w, int channels, const int* start,
                      const float* w, int taps);
void float_horizontal(const float* in, float* out, int out_w, int channels, const int* start, const float* w,
                      int taps);

// Nearest-neighbour gather of one row.
void nearest_row_u8(const std::uint8_t* in, std::uint8_t* out, int out_w, int channels, const int* xs);
void nearest_row_f32(const float* in, float* out, int out_w, int channels, const int* xs);
// Nearest gather of a u8 row straight to float; safe_end: leading outputs whose
// source index is at least 4 bytes before the row end.
void nearest_row_u8_f32(const std::uint8_t* in, float* out, int out_w, int channels, const int* xs, int safe_end);

// AVX2 versions (resize_kernels_avx2.cpp); call only when cpu_features().avx2.
void pil_horizontal_u8_c1_avx2(const std::uint8_t* in, std::uint8_t* out, int out_w, const int* start,
                               const std::int16_t* whi, const std::int16_t* wlo, int safe_end);
// AVX-512 BW + VBMI + VNNI (resize_kernels_avx512.cpp): Pillow's RGB
// horizontal pass over a whole row of in_w pixels with the byte-digit
// weights of AxisTaps::digits3 (regs: 0 for pairs of outputs, 1 or 2;
// ndigits: 3 or 4). Call only when cpu_features().avx512_vnni.
void pil_horizontal_u8_c3_avx512(const std::uint8_t* in, std::uint8_t* out, const int* start, const std::int8_t* digits,
                                 int regs, int ndigits, int out_w, int in_w);
// The same for two rows at once (the weights loaded once for both).
void pil_horizontal_u8_c3_avx512_2rows(const std::uint8_t* in0, const std::uint8_t* in1, std::uint8_t* out0,
                                       std::uint8_t* out1, const int* start, const std::int8_t* digits, int regs,
                                       int ndigits, int out_w, int in_w);
// The first 8 * blocks outputs with <= 8 taps (AxisTaps::split8_*).
void pil_horizontal_u8_c1_8tap_avx2(const std::uint8_t* in, std::uint8_t* out, const int* start,
                                    const std::int16_t* whi, const std::int16_t* wlo, int blocks);
void pil_horizontal_u8_c3_avx2(const std::uint8_t* in, std::uint8_t* out, int out_w, const int* start,
                               const std::int16_t* whi, const std::int16_t* wlo, int groups, int safe_end,
                               const std::int32_t* fixed, int taps);
void cv_horizontal_linear_c1_avx2(const std::uint8_t* s, std::int32_t* d, int out_w, const int* start,
                                  const std::int32_t* wpair, int safe_end);
void nearest_row_u8_f32_c1_avx2(const std::uint8_t* in, float* out, int out_w, const int* xs, int safe_end);
// Shuffle-gather kernels for gray rows (ShuffleGather in resize_plan.hpp):
// each writes the first 8 * blocks outputs of the row.
void nearest_row_u8_c1_shuffle_avx2(const std::uint8_t* in, std::uint8_t* out, const int* base,
                                    const std::int8_t* mask, int blocks);
void nearest_row_u8_f32_c1_shuffle_avx2(const std::uint8_t* in, float* out, const int* base,
                                        const std::int8_t* mask, int blocks);
void cv_horizontal_linear_c1_shuffle_avx2(const std::uint8_t* s, std::int32_t* d, const int* base,
                                          const std::int8_t* mask, int blocks, const std::int32_t* wpair);
// 2 to 4 float taps per output (AxisTaps::tap_shuffle, weights fweight_blocked).
void float_horizontal_c1_shuffle_avx2(const std::uint8_t* s, float* d, const int* base, const std::int8_t* mask,
                                      int blocks, const float* wt, int taps);

}  // namespace vinfer::detail
