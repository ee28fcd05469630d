// Row kernels for colour conversion (internal).
#pragma once
#include <cstddef>
#include <cstdint>

namespace vinfer::detail {

// out[x] = (r*wr + g*wg + b*wb + round) >> shift over n pixels of 3 or 4
// interleaved channels; exact for weights below 2^16. Dispatches to the
// AVX2 kernel when the CPU has it, else Highway's best target.
void gray_int_row(const std::uint8_t* in, int channels, std::uint8_t* out, std::size_t n, std::uint32_t wr,
                  std::uint32_t wg, std::uint32_t wb, std::uint32_t round, int shift);

// The AVX2 body (color_avx2.cpp): handles a prefix of the row and returns how
// many pixels it wrote; the caller finishes the rest.
std::size_t gray_int_row_avx2(const std::uint8_t* in, int channels, std::uint8_t* out, std::size_t n,
                              std::uint32_t wr, std::uint32_t wg, std::uint32_t wb, std::uint32_t round, int shift);

}  // namespace vinfer::detail
