// Resize kernels. The vertical passes (same weight across a whole row) are
// vectorised with Highway and dispatched at runtime; horizontal passes gather
// a different window per output pixel and stay scalar, specialised per
// channel count.
#include <algorithm>
#include <cstring>

#include "image/pixel_ops.hpp"
#include "image/resize_kernels.hpp"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "image/resize_kernels_hwy.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace vinfer::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void PilVerticalU8(const std::uint8_t* const* rows, const std::int32_t* w, int taps, std::uint8_t* out,
                   std::size_t n) {
  const hn::ScalableTag<std::int32_t> d32;
  const hn::Rebind<std::uint8_t, decltype(d32)> d8;
  const std::size_t N = hn::Lanes(d32);
  const auto round = hn::Set(d32, 1 << 21);
  const auto zero = hn::Zero(d32), max = hn::Set(d32, 255);
  std::size_t i = 0;
  for (; i + N <= n; i += N) {
    auto acc = round;
    for (int k = 0; k < taps; ++k) {
      const auto px = hn::PromoteTo(d32, hn::LoadU(d8, rows[k] + i));
      acc = hn::Add(acc, hn::Mul(px, hn::Set(d32, w[k])));
    }
    acc = hn::Min(hn::Max(hn::ShiftRight<22>(acc), zero), max);
    hn::StoreU(hn::DemoteTo(d8, acc), d8, out + i);
  }
  for (; i < n; ++i) {
    int acc = 1 << 21;
    for (int k = 0; k < taps; ++k) acc += w[k] * rows[k][i];
    out[i] = clip8_shift22(acc);
  }
}

void FloatVerticalF32(const float* const* rows, const float* w, int taps, float* out, std::size_t n) {
  const hn::ScalableTag<float> d;
  const std::size_t N = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + N <= n; i += N) {
    auto acc = hn::Zero(d);
    for (int k = 0; k < taps; ++k) acc = hn::Add(acc, hn::Mul(hn::Set(d, w[k]), hn::LoadU(d, rows[k] + i)));
    hn::StoreU(acc, d, out + i);
  }
  for (; i < n; ++i) {
    float acc = 0.f;
    for (int k = 0; k < taps; ++k) acc += w[k] * rows[k][i];
    out[i] = acc;
  }
}

}  // namespace vinfer::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace vinfer::detail {

HWY_EXPORT(PilVerticalU8);
HWY_EXPORT(FloatVerticalF32);

void pil_vertical_u8(const std::uint8_t* const* rows, const std::int32_t* w, int taps, std::uint8_t* out,
                     std::size_t n) {
  HWY_DYNAMIC_DISPATCH(PilVerticalU8)(rows, w, taps, out, n);
}

void float_vertical_f32(const float* const* rows, const float* w, int taps, float* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(FloatVerticalF32)(rows, w, taps, out, n);
}

namespace {
template <int C>
void pil_h(const std::uint8_t* in, std::uint8_t* out, int out_w, const int* start, const std::int32_t* w,
           int taps) {
  for (int x = 0; x < out_w; ++x, w += taps) {
    const std::uint8_t* s = in + start[x] * C;
    int acc[C];
    for (int c = 0; c < C; ++c) acc[c] = 1 << 21;
    for (int k = 0; k < taps; ++k)
      for (int c = 0; c < C; ++c) acc[c] += w[k] * s[k * C + c];
    for (int c = 0; c < C; ++c) out[x * C + c] = clip8_shift22(acc[c]);
  }
}

template <int C, typename T>
void float_h(const T* in, float* out, int out_w, const int* start, const float* w, int taps) {
  for (int x = 0; x < out_w; ++x, w += taps) {
    const T* s = in + start[x] * C;
    float acc[C] = {};
    for (int k = 0; k < taps; ++k)
      for (int c = 0; c < C; ++c) acc[c] += w[k] * static_cast<float>(s[k * C + c]);
    for (int c = 0; c < C; ++c) out[x * C + c] = acc[c];
  }
}

template <typename T>
void float_h_any(const T* in, float* out, int out_w, int C, const int* start, const float* w, int taps) {
  switch (C) {
    case 1: return float_h<1>(in, out, out_w, start, w, taps);
    case 3: return float_h<3>(in, out, out_w, start, w, taps);
    default: return float_h<4>(in, out, out_w, start, w, taps);
  }
}

template <typename T>
void nearest_row(const T* in, T* out, int out_w, int C, const int* xs) {
  switch (C) {
    case 1:
      for (int x = 0; x < out_w; ++x) out[x] = in[xs[x]];
      break;
    case 3:
      for (int x = 0; x < out_w; ++x) std::memcpy(out + 3 * x, in + 3 * xs[x], 3 * sizeof(T));
      break;
    default:
      for (int x = 0; x < out_w; ++x) std::memcpy(out + 4 * x, in + 4 * xs[x], 4 * sizeof(T));
  }
}
}  // namespace

void pil_horizontal_u8(const std::uint8_t* in, std::uint8_t* out, int out_w, int C, const int* start,
                       const std::int32_t* w, int taps) {
  switch (C) {
    case 1: return pil_h<1>(in, out, out_w, start, w, taps);
    case 3: return pil_h<3>(in, out, out_w, start, w, taps);
    default: return pil_h<4>(in, out, out_w, start, w, taps);
  }
}

void float_horizontal(const std::uint8_t* in, float* out, int out_w, int C, const int* start, const float* w,
                      int taps) {
  float_h_any(in, out, out_w, C, start, w, taps);
}
void float_horizontal(const float* in, float* out, int out_w, int C, const int* start, const float* w, int taps) {
  float_h_any(in, out, out_w, C, start, w, taps);
}

void nearest_row_u8(const std::uint8_t* in, std::uint8_t* out, int out_w, int C, const int* xs) {
  nearest_row(in, out, out_w, C, xs);
}
void nearest_row_f32(const float* in, float* out, int out_w, int C, const int* xs) {
  nearest_row(in, out, out_w, C, xs);
}

}  // namespace vinfer::detail
#endif  // HWY_ONCE
