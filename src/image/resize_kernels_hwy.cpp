// Resize kernels. The vertical passes (same weight across a whole row) are
// vectorised with Highway and dispatched at runtime; horizontal passes gather
// a different window per output pixel and stay scalar, specialised per
// channel count.
#include <algorithm>
#include <cstring>

#include "image/pixel_ops.hpp"
#include "image/resize_kernels.hpp"
#include "util/cpu_features.hpp"

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

// round_u8 over a row: nearest, ties to even (lrint), clamped to [0, 255].
// Finite input only (the rows come from u8 images).
void RoundRowU8(const float* in, std::uint8_t* out, std::size_t n) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Rebind<std::uint8_t, decltype(d)> d8;
  const std::size_t N = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto r = hn::Min(hn::Max(hn::NearestInt(hn::LoadU(d, in + i)), hn::Zero(di)), hn::Set(di, 255));
    hn::StoreU(hn::DemoteTo(d8, r), d8, out + i);
  }
  for (; i < n; ++i) out[i] = round_u8(in[i]);
}

// OpenCV's VResizeLinearVec_32s8u in 32-bit lanes: the operands fit in 16 bits
// (horizontal sums of non-negative weights, >> 4), so this is exactly its
// 16-bit high multiply.
void CvVerticalLinearU8(const std::int32_t* s0, const std::int32_t* s1, int b0, int b1, std::uint8_t* out,
                        std::size_t n) {
  const hn::ScalableTag<std::int32_t> d32;
  const hn::Rebind<std::uint8_t, decltype(d32)> d8;
  const std::size_t N = hn::Lanes(d32);
  const auto vb0 = hn::Set(d32, b0), vb1 = hn::Set(d32, b1), two = hn::Set(d32, 2);
  const auto zero = hn::Zero(d32), max = hn::Set(d32, 255);
  std::size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto a = hn::ShiftRight<16>(hn::Mul(hn::ShiftRight<4>(hn::LoadU(d32, s0 + i)), vb0));
    const auto b = hn::ShiftRight<16>(hn::Mul(hn::ShiftRight<4>(hn::LoadU(d32, s1 + i)), vb1));
    const auto r = hn::ShiftRight<2>(hn::Add(hn::Add(a, b), two));
    hn::StoreU(hn::DemoteTo(d8, hn::Min(hn::Max(r, zero), max)), d8, out + i);
  }
  for (; i < n; ++i) out[i] = sat_u8(cv_vlinear_simd(s0[i], s1[i], b0, b1));
}

}  // namespace vinfer::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "util/hwy_dispatch.hpp"

namespace vinfer::detail {

void round_row_u8(const float* in, std::uint8_t* out, std::size_t n) { VINFER_HWY_DISPATCH(RoundRowU8)(in, out, n); }

void cv_vertical_linear_u8(const std::int32_t* s0, const std::int32_t* s1, int b0, int b1, std::uint8_t* out,
                           std::size_t n) {
  VINFER_HWY_DISPATCH(CvVerticalLinearU8)(s0, s1, b0, b1, out, n);
}

void pil_vertical_u8(const std::uint8_t* const* rows, const std::int32_t* w, int taps, std::uint8_t* out,
                     std::size_t n) {
  VINFER_HWY_DISPATCH(PilVerticalU8)(rows, w, taps, out, n);
}

void float_vertical_f32(const float* const* rows, const float* w, int taps, float* out, std::size_t n) {
  VINFER_HWY_DISPATCH(FloatVerticalF32)(rows, w, taps, out, n);
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

namespace {
bool use_vnni(int C, const AxisTaps& t) { return C == 3 && !t.digits3.empty() && cpu_features().avx512_vnni; }
}  // namespace

void pil_horizontal_u8(const std::uint8_t* in, std::uint8_t* out, int C, const AxisTaps& t) {
  const int out_w = t.out_size;
  if (use_vnni(C, t))
    return pil_horizontal_u8_c3_avx512(in, out, t.start.data(), t.digits3.data(), t.digits3_regs, t.digits3_count, out_w,
                                       t.in_size);
  if (!t.split_hi.empty() && cpu_features().avx2) {
    if (C == 1) {
      const int done = 8 * t.split8_blocks;
      if (done > 0) pil_horizontal_u8_c1_8tap_avx2(in, out, t.start.data(), t.split8_hi.data(), t.split8_lo.data(), t.split8_blocks);
      return pil_horizontal_u8_c1_avx2(in, out + done, out_w - done, t.start.data() + done,
                                       t.split_hi.data() + done * 16, t.split_lo.data() + done * 16,
                                       t.split_safe_end - done);
    }
    if (C == 3)
      return pil_horizontal_u8_c3_avx2(in, out, out_w, t.start.data(), t.split3_hi.data(), t.split3_lo.data(),
                                       t.split3_groups, t.split3_safe_end, t.fixed.data(), t.max_taps);
  }
  const int* start = t.start.data();
  const std::int32_t* w = t.fixed.data();
  switch (C) {
    case 1: return pil_h<1>(in, out, out_w, start, w, t.max_taps);
    case 3: return pil_h<3>(in, out, out_w, start, w, t.max_taps);
    default: return pil_h<4>(in, out, out_w, start, w, t.max_taps);
  }
}

void pil_horizontal_u8_2rows(const std::uint8_t* in0, const std::uint8_t* in1, std::uint8_t* out0, std::uint8_t* out1,
                             int C, const AxisTaps& t) {
  if (!use_vnni(C, t)) {
    pil_horizontal_u8(in0, out0, C, t);
    pil_horizontal_u8(in1, out1, C, t);
    return;
  }
  pil_horizontal_u8_c3_avx512_2rows(in0, in1, out0, out1, t.start.data(), t.digits3.data(), t.digits3_regs,
                                    t.digits3_count, t.out_size, t.in_size);
}

void nearest_row_u8_f32(const std::uint8_t* in, float* out, int out_w, int C, const int* xs, int safe_end) {
  if (C == 1 && cpu_features().avx2) return nearest_row_u8_f32_c1_avx2(in, out, out_w, xs, safe_end);
  for (int x = 0; x < out_w; ++x)
    for (int c = 0; c < C; ++c) out[x * C + c] = in[xs[x] * C + c];
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
