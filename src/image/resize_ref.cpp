// Reference resize: the plan's coefficients applied with plain loops, in each
// framework's arithmetic. Slow and obvious on purpose: the fast path in
// resize.cpp is tested against this, and this against the frameworks.
#include <algorithm>
#include <cmath>
#include <vector>

#include "image/pixel_ops.hpp"
#include "image/resize_plan.hpp"
#include "vinfer/error.hpp"

namespace vinfer {
namespace {

using detail::Arith;
using detail::AxisTaps;
using detail::ResizePlan;

template <typename T>
void nearest(const ImageView<T>& in, const ResizePlan& p, T* out, int ow, int oh) {
  const int C = in.channels;
  for (int y = 0; y < oh; ++y)
    for (int x = 0; x < ow; ++x)
      for (int c = 0; c < C; ++c)
        out[(static_cast<std::size_t>(y) * ow + x) * C + c] = in.row(p.nearest_y[y])[p.nearest_x[x] * C + c];
}

// Float separable convolution, horizontal pass first.
template <typename T>
std::vector<float> float_conv(const ImageView<T>& in, const ResizePlan& p, int ow, int oh) {
  const int C = in.channels, H = in.height;
  const AxisTaps &tx = p.x, &ty = p.y;
  std::vector<float> tmp(static_cast<std::size_t>(H) * ow * C);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < ow; ++x)
      for (int c = 0; c < C; ++c) {
        float acc = 0.f;
        for (int k = 0; k < tx.max_taps; ++k)
          acc += tx.fweight[x * tx.max_taps + k] * static_cast<float>(in.row(y)[(tx.start[x] + k) * C + c]);
        tmp[(static_cast<std::size_t>(y) * ow + x) * C + c] = acc;
      }
  std::vector<float> out(static_cast<std::size_t>(oh) * ow * C);
  for (int y = 0; y < oh; ++y)
    for (int i = 0; i < ow * C; ++i) {
      float acc = 0.f;
      for (int k = 0; k < ty.max_taps; ++k)
        acc += ty.fweight[y * ty.max_taps + k] * tmp[static_cast<std::size_t>(ty.start[y] + k) * ow * C + i];
      out[static_cast<std::size_t>(y) * ow * C + i] = acc;
    }
  return out;
}

// Pillow: 22-bit weights, rounding, clipped u8 between the passes.
void pil_fixed(const ImageView<std::uint8_t>& src, const ResizePlan& p, std::uint8_t* out, int ow, int oh) {
  const int C = src.channels, W = src.width, H = src.height;
  std::vector<std::uint8_t> pre;
  ImageView<std::uint8_t> in = src;
  if (p.pil_premultiply) {
    pre.resize(static_cast<std::size_t>(W) * H * C);
    for (int y = 0; y < H; ++y) detail::pil_premultiply_row(src.row(y), pre.data() + static_cast<std::size_t>(y) * W * C, W);
    in = {pre.data(), W, H, C, static_cast<std::ptrdiff_t>(W) * C};
  }
  // One 1-D pass along an axis: Pillow's 22-bit convolution with a clipped u8 result.
  auto pass = [&](const std::uint8_t* src, int sw, int sh, bool horizontal, std::uint8_t* dst) {
    const detail::AxisTaps& t = horizontal ? p.x : p.y;
    const int dw = horizontal ? t.out_size : sw, dh = horizontal ? sh : t.out_size;
    for (int y = 0; y < dh; ++y)
      for (int x = 0; x < dw; ++x)
        for (int c = 0; c < C; ++c) {
          const int o = horizontal ? x : y;
          int acc = 1 << 21;
          for (int k = 0; k < t.max_taps; ++k) {
            const int sx = horizontal ? t.start[o] + k : x, sy = horizontal ? y : t.start[o] + k;
            acc += t.fixed[o * t.max_taps + k] * src[(static_cast<std::size_t>(sy) * sw + sx) * C + c];
          }
          dst[(static_cast<std::size_t>(y) * dw + x) * C + c] = detail::clip8_shift22(acc);
        }
  };
  std::vector<std::uint8_t> a(static_cast<std::size_t>(W) * H * C);
  for (int y = 0; y < H; ++y) std::copy(in.row(y), in.row(y) + W * C, a.begin() + static_cast<std::ptrdiff_t>(y) * W * C);
  int cw = W, ch = H;
  const bool order[2] = {!p.pil_vertical_first, p.pil_vertical_first};  // true: horizontal
  for (bool horizontal : order) {
    if (horizontal ? p.skip_x : p.skip_y) continue;
    const int nw = horizontal ? ow : cw, nh = horizontal ? ch : oh;
    std::vector<std::uint8_t> b(static_cast<std::size_t>(nw) * nh * C);
    pass(a.data(), cw, ch, horizontal, b.data());
    a.swap(b);
    cw = nw, ch = nh;
  }
  std::copy(a.begin(), a.end(), out);
  if (p.pil_premultiply)
    for (int y = 0; y < oh; ++y) detail::pil_unpremultiply_row(out + static_cast<std::size_t>(y) * ow * C, ow);
}

// OpenCV u8: 11-bit weights horizontally into int, then the vertical pass as
// OpenCV computes it (pixel_ops.hpp).
void cv_fixed(const ImageView<std::uint8_t>& in, const ResizePlan& p, std::uint8_t* out, int ow, int oh) {
  const int C = in.channels, H = in.height, row = ow * C;
  std::vector<int> tmp(static_cast<std::size_t>(H) * row);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < ow; ++x)
      for (int c = 0; c < C; ++c) {
        int acc = 0;
        for (int k = 0; k < p.x.max_taps; ++k) acc += p.x.fixed[x * p.x.max_taps + k] * in.row(y)[(p.x.start[x] + k) * C + c];
        tmp[static_cast<std::size_t>(y) * row + x * C + c] = acc;
      }
  const auto src_row = [&](int r) { return &tmp[static_cast<std::size_t>(r) * row]; };
  for (int y = 0; y < oh; ++y) {
    const int* pi = &p.y.cv_index[static_cast<std::size_t>(y) * p.y.cv_ksize];
    const std::int32_t* pw = &p.y.cv_weight[static_cast<std::size_t>(y) * p.y.cv_ksize];
    std::uint8_t* d = out + static_cast<std::size_t>(y) * row;
    if (p.arith == Arith::CvLinearFixed) {
      for (int i = 0; i < row; ++i)
        d[i] = detail::sat_u8(detail::cv_vlinear_simd(src_row(pi[0])[i], src_row(pi[1])[i], pw[0], pw[1]));
    } else {
      const int* const rows[4] = {src_row(pi[0]), src_row(pi[1]), src_row(pi[2]), src_row(pi[3])};
      detail::cv_vertical_cubic_u8(rows, pw, d, row);
    }
  }
}

void cv_area_fast(const ImageView<std::uint8_t>& in, const ResizePlan& p, std::uint8_t* out, int ow, int oh) {
  const int C = in.channels, sx = p.area_fast_x, sy = p.area_fast_y;
  for (int y = 0; y < oh; ++y)
    for (int x = 0; x < ow; ++x)
      for (int c = 0; c < C; ++c) {
        int sum = 0;
        for (int j = 0; j < sy; ++j)
          for (int i = 0; i < sx; ++i) sum += in.row(y * sy + j)[(x * sx + i) * C + c];
        out[(static_cast<std::size_t>(y) * ow + x) * C + c] = detail::cv_area_fast_value(sum, sx, sy);
      }
}

void check_sizes(int iw, int ih, int ow, int oh) {
  if (iw <= 0 || ih <= 0) throw Error(ErrorKind::InvalidArgument, "resize: empty input image");
  if (ow <= 0 || oh <= 0) throw Error(ErrorKind::InvalidArgument, "resize: output size must be positive");
}

}  // namespace

void resize_reference(const ImageView<std::uint8_t>& in, int ow, int oh, const ResizeSpec& spec, ImageU8& out) {
  validate(spec);
  check_sizes(in.width, in.height, ow, oh);
  const ResizePlan p = detail::make_resize_plan(spec, in.width, in.height, ow, oh, in.channels, true);
  out.reshape(ow, oh, in.channels);
  switch (p.arith) {
    case Arith::Nearest: nearest(in, p, out.data(), ow, oh); break;
    case Arith::PilFixed: pil_fixed(in, p, out.data(), ow, oh); break;
    case Arith::CvLinearFixed:
    case Arith::CvCubicFixed: cv_fixed(in, p, out.data(), ow, oh); break;
    case Arith::CvAreaFast: cv_area_fast(in, p, out.data(), ow, oh); break;
    case Arith::CvAreaFloat:
    case Arith::Float: {
      const std::vector<float> f = float_conv(in, p, ow, oh);
      for (std::size_t i = 0; i < f.size(); ++i) out.data()[i] = detail::round_u8(f[i]);
      break;
    }
  }
}

void resize_reference(const ImageView<float>& in, int ow, int oh, const ResizeSpec& spec, ImageF32& out) {
  validate(spec);
  check_sizes(in.width, in.height, ow, oh);
  const ResizePlan p = detail::make_resize_plan(spec, in.width, in.height, ow, oh, in.channels, false);
  out.reshape(ow, oh, in.channels);
  if (p.arith == Arith::Nearest) {
    nearest(in, p, out.data(), ow, oh);
    return;
  }
  const std::vector<float> f = float_conv(in, p, ow, oh);
  std::copy(f.begin(), f.end(), out.data());
}

}  // namespace vinfer
