// Plain versions of libjpeg's upsampling and colour conversion (the
// reference for the AVX2 bodies), and the dispatch.
#include "image/jpeg_color.hpp"

#include <algorithm>

#include "util/cpu_features.hpp"

namespace vinfer::detail {
namespace {

// jdcolor.c's tables as formulas: SCALEBITS 16, ONE_HALF 2^15, FIX(x) rounded.
constexpr int kCrR = 91881, kCbB = 116130, kCrG = 46802, kCbG = 22554;

inline std::uint8_t clamp8(int v) { return static_cast<std::uint8_t>(std::clamp(v, 0, 255)); }

// Columns sums 3 * cur + nbr with libjpeg's edge handling folded into
// colsum[-1] = colsum[0] and colsum[cw] = colsum[cw - 1] (stored at +1).
void colsums(const std::uint8_t* cur, const std::uint8_t* nbr, int cw, std::uint16_t* cs) {
  for (int i = 0; i < cw; ++i) cs[i + 1] = static_cast<std::uint16_t>(3 * cur[i] + nbr[i]);
  cs[0] = cs[1];
  cs[cw + 1] = cs[cw];
}

void fancy_from_colsum(const std::uint16_t* cs, int from, int cw, std::uint8_t* out) {
  for (int i = from; i < cw; ++i) {
    const int c = cs[i + 1];
    out[2 * i] = static_cast<std::uint8_t>((3 * c + cs[i] + 8) >> 4);
    out[2 * i + 1] = static_cast<std::uint8_t>((3 * c + cs[i + 2] + 7) >> 4);
  }
}

}  // namespace

void fancy_h2v2_row_ref(const std::uint8_t* cur, const std::uint8_t* nbr, int cw, std::uint8_t* out) {
  // As jdsample.c writes it: the first and last outputs from one column sum.
  int this_sum = 3 * cur[0] + nbr[0];
  if (cw == 1) {
    out[0] = static_cast<std::uint8_t>((this_sum * 4 + 8) >> 4);
    out[1] = static_cast<std::uint8_t>((this_sum * 4 + 7) >> 4);
    return;
  }
  int next_sum = 3 * cur[1] + nbr[1];
  out[0] = static_cast<std::uint8_t>((this_sum * 4 + 8) >> 4);
  out[1] = static_cast<std::uint8_t>((this_sum * 3 + next_sum + 7) >> 4);
  int last_sum = this_sum;
  this_sum = next_sum;
  for (int i = 1; i < cw - 1; ++i) {
    next_sum = 3 * cur[i + 1] + nbr[i + 1];
    out[2 * i] = static_cast<std::uint8_t>((this_sum * 3 + last_sum + 8) >> 4);
    out[2 * i + 1] = static_cast<std::uint8_t>((this_sum * 3 + next_sum + 7) >> 4);
    last_sum = this_sum;
    this_sum = next_sum;
  }
  out[2 * cw - 2] = static_cast<std::uint8_t>((this_sum * 3 + last_sum + 8) >> 4);
  out[2 * cw - 1] = static_cast<std::uint8_t>((this_sum * 4 + 7) >> 4);
}

void fancy_h2v2_row(const std::uint8_t* cur, const std::uint8_t* nbr, int cw, std::uint8_t* out, std::uint16_t* colsum) {
  colsums(cur, nbr, cw, colsum);
  const int done = cpu_features().avx2 ? fancy_h2v2_colsum_avx2(colsum, cw, out) : 0;
  fancy_from_colsum(colsum, done, cw, out);
}

void fancy_h2v1_row_ref(const std::uint8_t* in, int n, std::uint8_t* out) {
  // As jdsample.c writes it: the outer outputs copy the edge samples.
  out[0] = in[0];
  out[1] = static_cast<std::uint8_t>((in[0] * 3 + in[1] + 2) >> 2);
  if (n == 1) return;
  for (int i = 1; i < n - 1; ++i) {
    out[2 * i] = static_cast<std::uint8_t>((in[i] * 3 + in[i - 1] + 1) >> 2);
    out[2 * i + 1] = static_cast<std::uint8_t>((in[i] * 3 + in[i + 1] + 2) >> 2);
  }
  out[2 * n - 2] = static_cast<std::uint8_t>((in[n - 1] * 3 + in[n - 2] + 1) >> 2);
  out[2 * n - 1] = in[n - 1];
}

void fancy_h2v1_row(const std::uint8_t* in, int n, std::uint8_t* out) {
  if (n < 2 || !cpu_features().avx2) {
    fancy_h2v1_row_ref(in, n, out);
    return;
  }
  const int done = fancy_h2v1_avx2(in, n, out);  // interior samples [1, done)
  out[0] = in[0];
  out[1] = static_cast<std::uint8_t>((in[0] * 3 + in[1] + 2) >> 2);
  for (int i = std::max(done, 1); i < n - 1; ++i) {
    out[2 * i] = static_cast<std::uint8_t>((in[i] * 3 + in[i - 1] + 1) >> 2);
    out[2 * i + 1] = static_cast<std::uint8_t>((in[i] * 3 + in[i + 1] + 2) >> 2);
  }
  out[2 * n - 2] = static_cast<std::uint8_t>((in[n - 1] * 3 + in[n - 2] + 1) >> 2);
  out[2 * n - 1] = in[n - 1];
}

void ycc_rgb_row_ref(const std::uint8_t* y, const std::uint8_t* cb, const std::uint8_t* cr, std::uint8_t* rgb,
                     std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const int b = cb[i] - 128, r = cr[i] - 128, l = y[i];
    rgb[3 * i] = clamp8(l + ((kCrR * r + 32768) >> 16));
    rgb[3 * i + 1] = clamp8(l + ((-kCbG * b + 32768 - kCrG * r) >> 16));
    rgb[3 * i + 2] = clamp8(l + ((kCbB * b + 32768) >> 16));
  }
}

void ycc_rgb_row(const std::uint8_t* y, const std::uint8_t* cb, const std::uint8_t* cr, std::uint8_t* rgb, std::size_t n) {
  const std::size_t done = cpu_features().avx2 ? ycc_rgb_row_avx2(y, cb, cr, rgb, n) : 0;
  ycc_rgb_row_ref(y + done, cb + done, cr + done, rgb + 3 * done, n - done);
}

}  // namespace vinfer::detail
