// Internal: libjpeg-turbo's inverse DCTs for vinfer's own baseline decoder
// (jpeg_scan.cpp), integer for integer: jidctint.c's "islow" 8x8 and
// jidctred.c's reduced 4x4, 2x2 and 1x1 outputs (DCT scaling by 1/2, 1/4,
// 1/8). Results are clamped to 0..255 the way its x86-64 SIMD versions do;
// on valid files this is also what its C range-limit table gives.
#pragma once
#include <cstddef>
#include <cstdint>

namespace vinfer::detail {

// `coef`: 64 quantized coefficients in natural (row-major) order; `quant`:
// the quantization table in natural order. Writes size x size samples with
// `stride` bytes between rows.
using IdctFn = void (*)(const std::int16_t* coef, const std::uint16_t* quant, std::uint8_t* out,
                        std::ptrdiff_t stride);
void idct_islow_8x8(const std::int16_t* coef, const std::uint16_t* quant, std::uint8_t* out, std::ptrdiff_t stride);
void idct_reduced_4x4(const std::int16_t* coef, const std::uint16_t* quant, std::uint8_t* out, std::ptrdiff_t stride);
void idct_reduced_2x2(const std::int16_t* coef, const std::uint16_t* quant, std::uint8_t* out, std::ptrdiff_t stride);
void idct_reduced_1x1(const std::int16_t* coef, const std::uint16_t* quant, std::uint8_t* out, std::ptrdiff_t stride);

// AVX2 bodies (jpeg_idct_avx2.cpp), equal to the above on 32-bit
// intermediates (every valid file); call only when cpu_features().avx2.
void idct_islow_8x8_avx2(const std::int16_t* coef, const std::uint16_t* quant, std::uint8_t* out, std::ptrdiff_t stride);
void idct_reduced_4x4_avx2(const std::int16_t* coef, const std::uint16_t* quant, std::uint8_t* out,
                           std::ptrdiff_t stride);
void idct_reduced_2x2_avx2(const std::int16_t* coef, const std::uint16_t* quant, std::uint8_t* out,
                           std::ptrdiff_t stride);

// Deferred form, for blocks whose DC is not known yet (jpeg_scan.cpp's
// speculative half): the sums before the last shift, size x size int32 in
// rows. The DC enters them linearly and exactly: with the DC coefficient set
// to zero, sum + ((DC * quant[0]) << idct_dc_scale_log2(size)) is the true
// sum, and idct_finish of it the sample the transforms above give.
using IdctSumsFn = void (*)(const std::int16_t* coef, const std::uint16_t* quant, std::int32_t* sums);
void idct_sums_8x8(const std::int16_t* coef, const std::uint16_t* quant, std::int32_t* sums);
void idct_sums_4x4(const std::int16_t* coef, const std::uint16_t* quant, std::int32_t* sums);
void idct_sums_2x2(const std::int16_t* coef, const std::uint16_t* quant, std::int32_t* sums);
void idct_sums_1x1(const std::int16_t* coef, const std::uint16_t* quant, std::int32_t* sums);
void idct_sums_8x8_avx2(const std::int16_t* coef, const std::uint16_t* quant, std::int32_t* sums);
void idct_sums_4x4_avx2(const std::int16_t* coef, const std::uint16_t* quant, std::int32_t* sums);
void idct_sums_2x2_avx2(const std::int16_t* coef, const std::uint16_t* quant, std::int32_t* sums);
int idct_last_shift(int size);
int idct_dc_scale_log2(int size);
std::uint8_t idct_finish(std::int64_t sum, int size);
IdctSumsFn idct_sums_for_size(int size);
// A whole block of sums finished into samples: idct_finish(sums[i] + add).
void idct_finish_block(const std::int32_t* sums, int size, std::int64_t add, std::uint8_t* out, std::ptrdiff_t stride);
void idct_finish_block_avx2(const std::int32_t* sums, int size, std::int64_t add, std::uint8_t* out,
                            std::ptrdiff_t stride);
using IdctFinishFn = void (*)(const std::int32_t* sums, int size, std::int64_t add, std::uint8_t* out,
                              std::ptrdiff_t stride);
IdctFinishFn idct_finish_block_fn();

// The fastest transform here for a block of `size` output samples (8, 4, 2
// or 1); null for other sizes.
IdctFn idct_for_size(int size);

}  // namespace vinfer::detail
