// Internal: vinfer's own CPU kernels (free functions, plain C++ that the
// compiler vectorizes; the reference is graph/reference.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "vinfer/graph.hpp"

namespace vinfer::cpu {

// The post-ops in order over a contiguous span (`sum`: the Sum operand's
// matching span, if there is one).
void apply_post(float* y, std::int64_t n, const std::vector<PostOp>& post, const float* sum);
// y[i] = post(x[i] * s + b) over one channel's row of n values.
void scale_shift_row(const float* x, float* y, std::int64_t n, float s, float b, const std::vector<PostOp>& post, const float* sum);
// The same over n pixels of one channel block (nChw8c/16c): `block` channels
// interleaved; s and b point at `block` values.
void scale_shift_blocked(const float* x, float* y, std::int64_t n, int block, const float* s, const float* b,
                         const std::vector<PostOp>& post, const float* sum);

// float32 -> bfloat16, rounded to nearest, ties to even; NaN stays NaN.
inline std::uint16_t to_bf16(float f) {
  std::uint32_t u;
  __builtin_memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>(u >> 16 | 0x40);  // quiet NaN
  return static_cast<std::uint16_t>((u + 0x7fffu + (u >> 16 & 1)) >> 16);
}
// scale_shift_blocked on one 16-channel block of n pixels, at most a ReLU
// after it, and bfloat16 output: pixel p's first `count` channels at y + p x
// y_stride (16 and 16: blocks again; the channel count: channels-last). The
// portable reference, and the AVX512_BF16 kernel (simd_avx512_bf16.cpp;
// only where cpu_features().avx512_bf16).
void scale_shift_blocked16_bf16(const float* x, std::uint16_t* y, std::int64_t n, std::int64_t y_stride, int count, const float* s,
                                const float* b, bool relu);
// y[i] = to_bf16(x[i]) for n values (AVX512_BF16; only where cpu_features().avx512_bf16).
void to_bf16_avx512(const float* x, std::uint16_t* y, std::int64_t n);
void scale_shift_blocked16_bf16_avx512(const float* x, std::uint16_t* y, std::int64_t n, std::int64_t y_stride, int count,
                                       const float* s, const float* b, bool relu);

// y[i] = x[i] x inv_scale rounded to the nearest integer (ties to even),
// saturated to u8's [0, 255] or s8's [-128, 127] (NaN: the lower bound):
// the portable reference, and the AVX-512 kernel (simd_avx512.cpp; only
// where cpu_features().avx512). y holds n bytes.
void quantize(const float* x, void* y, std::int64_t n, float inv_scale, bool is_unsigned);
void quantize_avx512(const float* x, void* y, std::int64_t n, float inv_scale, bool is_unsigned);
// The same from bfloat16 values (exactly their float32 value, quantized).
void quantize_bf16(const std::uint16_t* x, void* y, std::int64_t n, float inv_scale, bool is_unsigned);
void quantize_bf16_avx512(const std::uint16_t* x, void* y, std::int64_t n, float inv_scale, bool is_unsigned);
// One 16-channel block of n pixels (nChw16c) through y = x * s + b (one
// rounding), a ReLU if asked, then quantize()'s rule, written channels-last:
// pixel p's first `count` channels at y + p x y_stride (bytes). Reference,
// and the AVX-512 kernel (only where cpu_features().avx512).
void scale_shift_blocked16_quantize(const float* x, void* y, std::int64_t n, std::int64_t y_stride, int count, const float* s,
                                    const float* b, bool relu, float inv_scale, bool is_unsigned);
void scale_shift_blocked16_quantize_avx512(const float* x, void* y, std::int64_t n, std::int64_t y_stride, int count,
                                           const float* s, const float* b, bool relu, float inv_scale, bool is_unsigned);

// One channel block of n pixels (nChw8c / nChw16c, L = 8 / 16 lanes)
// gathered from `sources` input blocks (at most L): output lane l of pixel p
// is src[s][p x L + idx[s x L + l]] for the source s whose idx there is not
// negative, zero where none is (ShuffleNet's channel shuffle,
// op_channel_gather.cpp). AVX2 + FMA and AVX-512 (simd_block_runs).
void gather_blocks_avx2(const float* const* src, const int* idx, int sources, float* y, std::int64_t n);
void gather_blocks_avx512(const float* const* src, const int* idx, int sources, float* y, std::int64_t n);

// y[i] = SiLU(x[i]) as vinfer's kernels apply it after a convolution
// (out_act.hpp); n a multiple of the vector (8 / 16 floats). y may be x.
void silu_avx2(const float* x, float* y, std::int64_t n);
void silu_avx512(const float* x, float* y, std::int64_t n);
// y[i] = GELU(x[i]) = x Phi(x), the erf form (out_act.hpp); as above.
void gelu_avx2(const float* x, float* y, std::int64_t n);
void gelu_avx512(const float* x, float* y, std::int64_t n);

}  // namespace vinfer::cpu
