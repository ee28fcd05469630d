// Internal: libjpeg-turbo's decoder-side chroma upsampling and YCbCr -> RGB,
// reproduced bit for bit, so that a second thread can do them while libjpeg
// decodes the next rows (decode_jpeg.cpp, DecodeOptions::threads). Each has a
// plain version (the reference) and an AVX2 one used where the CPU has it.
#pragma once
#include <cstddef>
#include <cstdint>

namespace vinfer::detail {

// jdsample.c's h2v2 "fancy" (triangle) upsampling of one output row:
// `cur` is the chroma row the output row lies in, `nbr` the chroma row above
// it (even output rows) or below it (odd), libjpeg's own edge rows at the
// top and bottom. `cw` chroma samples give 2 * cw outputs (out needs room
// for 2 * cw + 32 bytes); `colsum` is scratch for cw + 2 16-bit values.
void fancy_h2v2_row(const std::uint8_t* cur, const std::uint8_t* nbr, int cw, std::uint8_t* out, std::uint16_t* colsum);
void fancy_h2v2_row_ref(const std::uint8_t* cur, const std::uint8_t* nbr, int cw, std::uint8_t* out);

// jdsample.c's h2v1 "fancy" upsampling of one row (4:2:2 chroma): n
// samples give 2 * n outputs (out needs room for 2 * n + 32 bytes). With
// n == 1 it reads in[1], as libjpeg does (the block's padding column).
void fancy_h2v1_row(const std::uint8_t* in, int n, std::uint8_t* out);
void fancy_h2v1_row_ref(const std::uint8_t* in, int n, std::uint8_t* out);

// jdcolor.c's YCbCr -> RGB (16-bit fixed-point tables, clamped), n pixels.
void ycc_rgb_row(const std::uint8_t* y, const std::uint8_t* cb, const std::uint8_t* cr, std::uint8_t* rgb, std::size_t n);
void ycc_rgb_row_ref(const std::uint8_t* y, const std::uint8_t* cb, const std::uint8_t* cr, std::uint8_t* rgb,
                     std::size_t n);

// The AVX2 bodies (jpeg_color_avx2.cpp): each does a prefix and returns how
// many chroma samples (fancy) or pixels (ycc) it did.
int fancy_h2v2_colsum_avx2(const std::uint16_t* colsum, int cw, std::uint8_t* out);
int fancy_h2v1_avx2(const std::uint8_t* in, int n, std::uint8_t* out);  // outputs 2i, 2i+1 for i in [1, returned)
std::size_t ycc_rgb_row_avx2(const std::uint8_t* y, const std::uint8_t* cb, const std::uint8_t* cr, std::uint8_t* rgb,
                             std::size_t n);

}  // namespace vinfer::detail
