// RGB -> gray rows with integer rules (Pillow, OpenCV), vectorised with Highway.
#include <cstddef>
#include <cstdint>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "image/color_hwy.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace vinfer::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// out[x] = (r*wr + g*wg + b*wb + round) >> shift, in 32-bit lanes (exact).
void GrayIntRow(const std::uint8_t* in, int channels, std::uint8_t* out, std::size_t n, std::uint32_t wr,
                std::uint32_t wg, std::uint32_t wb, std::uint32_t round, int shift) {
  const hn::ScalableTag<std::uint32_t> d32;
  const hn::Rebind<std::uint8_t, decltype(d32)> d8;
  const hn::RebindToSigned<decltype(d32)> di32;
  const std::size_t N = hn::Lanes(d32);
  const auto vr = hn::Set(d32, wr), vg = hn::Set(d32, wg), vb = hn::Set(d32, wb), vround = hn::Set(d32, round);
  std::size_t x = 0;
  for (; x + N <= n; x += N) {
    hn::Vec<decltype(d8)> r, g, b, a;
    if (channels == 3) hn::LoadInterleaved3(d8, in + x * 3, r, g, b);
    else hn::LoadInterleaved4(d8, in + x * 4, r, g, b, a);
    auto acc = hn::Add(hn::Mul(hn::PromoteTo(d32, r), vr), hn::Mul(hn::PromoteTo(d32, g), vg));
    acc = hn::Add(hn::Add(acc, hn::Mul(hn::PromoteTo(d32, b), vb)), vround);
    hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di32, hn::ShiftRightSame(acc, shift))), d8, out + x);
  }
  for (; x < n; ++x) {
    const std::uint8_t* p = in + x * channels;
    out[x] = static_cast<std::uint8_t>((p[0] * wr + p[1] * wg + p[2] * wb + round) >> shift);
  }
}

}  // namespace vinfer::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "image/color_kernels.hpp"
#include "util/cpu_features.hpp"
#include "util/hwy_dispatch.hpp"

namespace vinfer::detail {
void gray_int_row(const std::uint8_t* in, int channels, std::uint8_t* out, std::size_t n, std::uint32_t wr,
                  std::uint32_t wg, std::uint32_t wb, std::uint32_t round, int shift) {
  const std::size_t done = cpu_features().avx2 ? gray_int_row_avx2(in, channels, out, n, wr, wg, wb, round, shift) : 0;
  VINFER_HWY_DISPATCH(GrayIntRow)(in + done * channels, channels, out + done, n - done, wr, wg, wb, round, shift);
}
}  // namespace vinfer::detail
#endif
