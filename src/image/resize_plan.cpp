// The resize rules of PyTorch, TensorFlow, Pillow and OpenCV as coefficient
// tables. Each function follows the arithmetic of the framework's own source
// (float vs double, truncation vs floor) because that is where results differ.
#include "image/resize_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "vinfer/error.hpp"

namespace vinfer::detail {
namespace {

using Window = std::vector<double>;

struct Builder {
  AxisTaps t;
  std::vector<Window> windows;
  Builder(int in, int out) {
    t.in_size = in;
    t.out_size = out;
    t.start.assign(out, 0);
    windows.resize(out);
  }
  // Adds weight w at source index i (already inside [0, in)).
  void add(int o, int i, double w) {
    Window& win = windows[o];
    if (win.empty()) {
      t.start[o] = i;
      win.push_back(w);
      return;
    }
    int s = t.start[o];
    if (i < s) {
      win.insert(win.begin(), s - i, 0.0);
      t.start[o] = s = i;
    }
    if (i - s >= static_cast<int>(win.size())) win.resize(i - s + 1, 0.0);
    win[i - s] += w;
  }
  AxisTaps finish() {
    int max_taps = 1;
    for (const Window& w : windows) max_taps = std::max<int>(max_taps, static_cast<int>(w.size()));
    t.max_taps = max_taps;
    t.count.assign(t.out_size, 0);
    t.weight.assign(static_cast<std::size_t>(t.out_size) * max_taps, 0.0);
    for (int o = 0; o < t.out_size; ++o) {
      const Window& w = windows[o];
      t.count[o] = static_cast<int>(w.size());
      std::copy(w.begin(), w.end(), t.weight.begin() + static_cast<std::ptrdiff_t>(o) * max_taps);
    }
    finalize_taps(t);
    return std::move(t);
  }
};

int clampi(long long v, int lo, int hi) { return static_cast<int>(std::clamp<long long>(v, lo, hi)); }

// ---------------------------------------------------------------- Pillow
double pil_filter(Filter f, double x) {
  switch (f) {
    case Filter::Box: return (x > -0.5 && x <= 0.5) ? 1.0 : 0.0;
    case Filter::Bilinear: x = std::fabs(x); return x < 1.0 ? 1.0 - x : 0.0;
    case Filter::Hamming:
      x = std::fabs(x);
      if (x == 0.0) return 1.0;
      if (x >= 1.0) return 0.0;
      x *= std::numbers::pi;
      return std::sin(x) / x * (0.54 + 0.46 * std::cos(x));
    case Filter::Bicubic: {
      constexpr double a = -0.5;
      x = std::fabs(x);
      if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
      if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
      return 0.0;
    }
    case Filter::Lanczos: {
      auto sinc = [](double v) {
        if (v == 0.0) return 1.0;
        v *= std::numbers::pi;
        return std::sin(v) / v;
      };
      return (-3.0 <= x && x < 3.0) ? sinc(x) * sinc(x / 3) : 0.0;
    }
    default: return 0.0;
  }
}

double pil_support(Filter f) {
  switch (f) {
    case Filter::Box: return 0.5;
    case Filter::Bilinear: case Filter::Hamming: return 1.0;
    case Filter::Bicubic: return 2.0;
    case Filter::Lanczos: return 3.0;
    default: return 0.0;
  }
}

// Pillow's integer weights (t.fixed, 22 fraction bits) and the forms its
// kernels load, from t.weight rounded half away from zero to `bits` fraction
// bits (<= 22) and shifted up to 22: (acc * 2^s + 2^21) >> 22 equals
// (acc + 2^(bits-1)) >> bits for s = 22 - bits, so a coarser rounding
// (PyTorch's uint8 path) runs on the same kernels, exactly.
void pil_fixed_weights(AxisTaps& t, int bits) {
  const int in = t.in_size, out = t.out_size;
  t.fixed.resize(t.weight.size());
  for (std::size_t i = 0; i < t.weight.size(); ++i) {
    const double w = t.weight[i] * (1 << bits);
    t.fixed[i] = (w < 0 ? static_cast<int>(-0.5 + w) : static_cast<int>(0.5 + w)) * (1 << (22 - bits));
  }
  if (t.max_taps <= 16) {
    t.split_hi.assign(static_cast<std::size_t>(out) * 16, 0);
    t.split_lo.assign(static_cast<std::size_t>(out) * 16, 0);
    for (int o = 0; o < out; ++o)
      for (int k = 0; k < t.max_taps; ++k) {
        const std::int32_t w = t.fixed[static_cast<std::size_t>(o) * t.max_taps + k];
        t.split_hi[o * 16 + k] = static_cast<std::int16_t>(w >> 11);
        t.split_lo[o * 16 + k] = static_cast<std::int16_t>(w & 2047);
      }
    t.split_safe_end = leading_within(t.start, 1, 16, in);
    if (t.max_taps <= 8) {  // two outputs per register: see pil_horizontal_u8_c1_8tap_avx2
      t.split8_blocks = leading_within(t.start, 1, 8, in) / 8;
      t.split8_hi.assign(static_cast<std::size_t>(t.split8_blocks) * 64, 0);
      t.split8_lo.assign(static_cast<std::size_t>(t.split8_blocks) * 64, 0);
      for (int b = 0; b < t.split8_blocks; ++b)
        for (int j = 0; j < 8; ++j)
          for (int k = 0; k < t.max_taps; ++k) {
            const int o = 8 * b + j;
            const std::size_t i = static_cast<std::size_t>(b) * 64 + (j % 4) * 16 + (j / 4) * 8 + k;
            t.split8_hi[i] = t.split_hi[o * 16 + k];
            t.split8_lo[i] = t.split_lo[o * 16 + k];
          }
    }
    t.split3_groups = (t.max_taps + 3) / 4;
    t.split3_hi.assign(static_cast<std::size_t>(out) * 64, 0);
    t.split3_lo.assign(static_cast<std::size_t>(out) * 64, 0);
    for (int o = 0; o < out; ++o)
      for (int k = 0; k < t.max_taps; ++k) {
        const int g = k / 4, pair = (k % 4) / 2, odd = k % 2;
        for (int c = 0; c < 3; ++c) {
          const std::size_t i = static_cast<std::size_t>(o) * 64 + g * 16 + pair * 8 + c * 2 + odd;
          t.split3_hi[i] = t.split_hi[o * 16 + k];
          t.split3_lo[i] = t.split_lo[o * 16 + k];
        }
      }
    // The last group's 16-byte load starts at pixel start + 4 * (groups - 1).
    t.split3_safe_end = leading_within(t.start, 3, 12 * (t.split3_groups - 1) + 16, in * 3);
  }
  const int regs = (t.max_taps + 15) / 16;
  if (regs <= 2) {
    const bool three = std::all_of(t.fixed.begin(), t.fixed.end(),
                                   [](std::int32_t w) { return w >= -(1 << 21) && w < (1 << 21); });
    const int D = three ? 3 : 4;
    // Up to 8 taps: two outputs per register when each odd output starts at
    // most 13 pixels after its even neighbour (both windows in one 64-byte load).
    bool pairs = t.max_taps <= 8;
    for (int o = 0; pairs && o + 1 < out; o += 2) pairs = t.start[o + 1] - t.start[o] <= 13;
    t.digits3_regs = pairs ? 0 : regs;
    t.digits3_count = D;
    const std::size_t blocks = pairs ? static_cast<std::size_t>(out + 1) / 2 : static_cast<std::size_t>(out) * regs;
    t.digits3.assign(blocks * D * 64, 0);
    for (int o = 0; o < out; ++o)
      for (int k = 0; k < t.max_taps; ++k) {
        const std::int32_t w = t.fixed[static_cast<std::size_t>(o) * t.max_taps + k];
        // The 128-bit lane of tap group k / 4: per output (regs registers), or per pair (output o % 2 in lanes 2-3).
        const std::size_t block = pairs ? static_cast<std::size_t>(o / 2) : static_cast<std::size_t>(o) * regs + k / 16;
        const int lane = pairs ? 2 * (o % 2) + k / 4 : (k % 16) / 4;
        std::int8_t* d = t.digits3.data() + block * D * 64 + 16 * lane + k % 4;
        for (int c = 0; c < 3; ++c)
          for (int i = 0; i < D; ++i)  // the top digit keeps the sign
            d[64 * i + 4 * c] = static_cast<std::int8_t>(i == D - 1 ? w >> (7 * i) : (w >> (7 * i)) & 127);
      }
  }
}

AxisTaps pil_taps(int in, int out, Filter f) {
  Builder b(in, out);
  const double scale = static_cast<double>(in) / out;
  const double filterscale = std::max(scale, 1.0);
  const double support = pil_support(f) * filterscale;
  const double ss = 1.0 / filterscale;
  std::vector<double> k;
  for (int xx = 0; xx < out; ++xx) {
    const double center = (xx + 0.5) * scale;
    int xmin = std::max(static_cast<int>(center - support + 0.5), 0);
    int xmax = std::min(static_cast<int>(center + support + 0.5), in) - xmin;
    k.assign(std::max(xmax, 0), 0.0);
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      k[x] = pil_filter(f, (x + xmin - center + 0.5) * ss);
      ww += k[x];
    }
    for (int x = 0; x < xmax; ++x) {
      if (ww != 0.0) k[x] /= ww;
      b.add(xx, xmin + x, k[x]);
    }
    if (xmax <= 0) b.add(xx, std::min(xmin, in - 1), 0.0);
  }
  AxisTaps t = b.finish();
  pil_fixed_weights(t, 22);
  return t;
}

// Pillow NEAREST: an affine transform that accumulates the source position in double.
std::vector<int> pil_nearest(int in, int out) {
  std::vector<int> idx(out);
  const double a = static_cast<double>(in) / out;
  double xo = a * 0.5;
  for (int x = 0; x < out; ++x) {
    int xin = xo < 0.0 ? -1 : static_cast<int>(xo);
    idx[x] = std::clamp(xin, 0, in - 1);
    xo += a;
  }
  return idx;
}

// ---------------------------------------------------------------- PyTorch
float torch_scale(int in, int out, bool align_corners, std::optional<double> scale_factor) {
  if (align_corners) return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.f;
  if (scale_factor && *scale_factor > 0.) return static_cast<float>(1.0 / *scale_factor);
  return static_cast<float>(in) / static_cast<float>(out);
}

std::vector<int> torch_nearest(int in, int out, std::optional<double> sf, bool exact) {
  std::vector<int> idx(out);
  const float scale = torch_scale(in, out, false, sf);
  for (int o = 0; o < out; ++o) {
    if (exact) {
      idx[o] = std::min(static_cast<int>(std::floor(static_cast<float>((o + 0.5) * scale))), in - 1);
    } else if (out == in) {
      idx[o] = o;
    } else if (out == 2 * in) {
      idx[o] = o >> 1;
    } else {
      idx[o] = std::min(static_cast<int>(std::floor(static_cast<float>(o) * scale)), in - 1);
    }
  }
  return idx;
}

float cubic1(float x, float A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }
float cubic2(float x, float A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }

// PyTorch's CPU kernels are compiled with FMA contraction (-mfma, GCC's default
// fp-contract=fast), so a*b+c in its coordinate and weight code rounds once.
float cubic1_fma(float x, float A) { return std::fma(std::fma(A + 2, x, -(A + 3)) * x, x, 1.f); }
float cubic2_fma(float x, float A) { return std::fma(std::fma(std::fma(A, x, -5 * A), x, 8 * A), x, -4 * A); }

AxisTaps torch_taps(int in, int out, const ResizeSpec& s, std::optional<double> sf) {
  Builder b(in, out);
  const float scale = torch_scale(in, out, s.align_corners, sf);
  const bool cubic = s.filter == Filter::Bicubic;
  if (s.filter == Filter::Area) {  // adaptive_avg_pool2d
    for (int o = 0; o < out; ++o) {
      const long long st = (static_cast<long long>(o) * in) / out;
      const long long en = ((static_cast<long long>(o) + 1) * in + out - 1) / out;
      for (long long i = st; i < en; ++i) b.add(o, static_cast<int>(i), 1.0 / static_cast<double>(en - st));
    }
    return b.finish();
  }
  if (s.antialias) {
    const float interp = cubic ? 4.f : 2.f;
    const float support = static_cast<float>(scale >= 1.f ? (interp * 0.5) * scale : interp * 0.5);
    const float invscale = static_cast<float>(scale >= 1.f ? 1.0 / scale : 1.0);
    const int max_size = static_cast<int>(std::ceil(support)) * 2 + 1;
    auto filt = [&](float x) -> float {
      x = std::fabs(x);
      if (!cubic) return x < 1.f ? 1.f - x : 0.f;
      if (x < 1.f) return cubic1(x, -0.5f);
      if (x < 2.f) return cubic2(x, -0.5f);
      return 0.f;
    };
    std::vector<float> w;
    for (int o = 0; o < out; ++o) {
      const float center = scale * static_cast<float>(o + 0.5);
      // Mixed float/double exactly as PyTorch's expression types make it.
      const int xmin = std::max(static_cast<int>(static_cast<double>(center - support) + 0.5), 0);
      int xsize = std::min(static_cast<int>(static_cast<double>(center + support) + 0.5), in) - xmin;
      xsize = std::clamp(xsize, 0, max_size);
      w.assign(xsize, 0.f);
      float total = 0.f;
      for (int j = 0; j < xsize; ++j) {
        w[j] = filt(static_cast<float>((static_cast<double>(static_cast<float>(j + xmin) - center) + 0.5) * invscale));
        total += w[j];
      }
      for (int j = 0; j < xsize; ++j) b.add(o, xmin + j, total != 0.f ? w[j] / total : w[j]);
      if (xsize == 0) b.add(o, std::min(xmin, in - 1), 0.0);
    }
    return b.finish();
  }
  for (int o = 0; o < out; ++o) {
    // Measured against PyTorch 2.15: its bilinear source index rounds once (as
    // an FMA would) when shrinking and twice when enlarging; bicubic always once.
    const bool single_rounding = cubic || scale > 1.f;
    float real = s.align_corners   ? scale * static_cast<float>(o)
                 : single_rounding ? std::fma(scale, static_cast<float>(o) + 0.5f, -0.5f)
                                   : scale * (static_cast<float>(o) + 0.5f) - 0.5f;
    if (!cubic) {
      if (real < 0.f) real = 0.f;
      const int i0 = static_cast<int>(real);
      const float l1 = std::clamp(real - static_cast<float>(i0), 0.f, 1.f);
      const int off = i0 < in - 1 ? 1 : 0;
      b.add(o, i0, 1.f - l1);
      b.add(o, i0 + off, l1);
    } else {
      const int i0 = std::min(static_cast<int>(std::floor(real)), in - 1);
      const float t = std::clamp(real - static_cast<float>(i0), 0.f, 1.f);
      constexpr float A = -0.75f;
      const float c[4] = {cubic2_fma(t + 1.f, A), cubic1_fma(t, A), cubic1_fma(1.f - t, A),
                          cubic2_fma(1.f - t + 1.f, A)};
      for (int j = 0; j < 4; ++j) b.add(o, clampi(i0 - 1 + j, 0, in - 1), c[j]);
    }
  }
  return b.finish();
}

// PyTorch on uint8 tensors (bilinear and bicubic, antialias or not): its
// Pillow-derived separable kernel, horizontal then vertical with a clipped u8
// row between, on int16 weights. The weights are computed in double
// (_compute_weights_aa, which also serves antialias=False: support 1 or 2,
// windows cut at the borders and renormalised), except bicubic without
// antialias, whose four taps clamp to the edge pixel as in its float kernel.
// They are then rounded to the most fraction bits that keep twice the
// largest weight under 2^15 (its weights_precision).
AxisTaps torch_u8_taps(int in, int out, const ResizeSpec& s, std::optional<double> sf) {
  Builder b(in, out);
  const bool cubic = s.filter == Filter::Bicubic, aa = s.antialias;
  const double scale = s.align_corners ? (out > 1 ? static_cast<double>(in - 1) / (out - 1) : 0.0)
                       : (sf && *sf > 0.) ? 1.0 / *sf
                                          : static_cast<double>(in) / out;
  const double interp = cubic ? 4.0 : 2.0;
  const double support = aa && scale >= 1.0 ? interp * 0.5 * scale : interp * 0.5;
  const int max_size = aa ? static_cast<int>(std::ceil(support)) * 2 + 1 : static_cast<int>(interp);
  const double delta = s.align_corners && !aa ? 0.5 : 0.0;
  const double invscale = aa && scale >= 1.0 ? 1.0 / scale : 1.0;
  const double A = aa ? -0.5 : -0.75;
  auto filt = [&](double x) {
    x = std::fabs(x);
    if (!cubic) return x < 1.0 ? 1.0 - x : 0.0;
    if (x < 1.0) return ((A + 2) * x - (A + 3)) * x * x + 1;
    if (x < 2.0) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    return 0.0;
  };
  std::vector<double> w;
  for (int o = 0; o < out; ++o) {
    const double center = scale * (o + 0.5 - delta);
    const bool clamped = cubic && !aa;
    const double first = center - support + 0.5 + delta;
    const int xmin = clamped ? static_cast<int>(std::floor(first)) : std::max(static_cast<int>(first), 0);
    const int xsize = clamped ? 4 : std::clamp(std::min(static_cast<int>(center + support + 0.5 + delta), in) - xmin,
                                               0, max_size);
    w.assign(xsize, 0.0);
    double total = 0.0;
    for (int j = 0; j < xsize; ++j) total += w[j] = filt((j + xmin - center + 0.5 - delta) * invscale);
    for (int j = 0; j < xsize; ++j) b.add(o, clampi(xmin + j, 0, in - 1), total != 0.0 ? w[j] / total : w[j]);
    if (xsize == 0) b.add(o, std::min(xmin, in - 1), 0.0);
  }
  AxisTaps t = b.finish();
  const double w_max = *std::max_element(t.weight.begin(), t.weight.end());
  int bits = 0;
  while (bits < 22 && static_cast<int>(0.5 + w_max * (1 << (bits + 1))) < (1 << 15)) ++bits;
  pil_fixed_weights(t, bits);
  return t;
}

// ---------------------------------------------------------------- TensorFlow 2
std::vector<int> tf_nearest(int in, int out) {
  std::vector<int> idx(out);
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (int o = 0; o < out; ++o) {
    const float v = (static_cast<float>(o) + 0.5f) * scale;
    idx[o] = std::max(0, std::min(static_cast<int>(std::floor(v)), in - 1));
  }
  return idx;
}

const float* tf_cubic_table() {
  constexpr int kTableSize = 1024;
  static const std::vector<float> table = [] {
    std::vector<float> t((kTableSize + 1) * 2);
    const double a = -0.5;
    for (int i = 0; i <= kTableSize; ++i) {
      float x = static_cast<float>(i * 1.0 / kTableSize);
      t[i * 2] = static_cast<float>(((a + 2) * x - (a + 3)) * x * x + 1);
      x += 1.0f;
      t[i * 2 + 1] = static_cast<float>(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
    }
    return t;
  }();
  return table.data();
}

float tf_kernel(Filter f, float x) {
  x = std::fabs(x);
  switch (f) {
    case Filter::Bilinear: return x < 1.0f ? 1.0f - x : 0.0f;
    case Filter::Bicubic:
      if (x >= 2.0f) return 0.0f;
      if (x >= 1.0f) return ((-0.5f * x + 2.5f) * x - 4.0f) * x + 2.0f;
      return ((1.5f * x - 2.5f) * x) * x + 1.0f;
    case Filter::Lanczos: {
      constexpr float r = 3.f;
      constexpr float pi = std::numbers::pi_v<float>;
      if (x > r) return 0.0f;
      if (x <= 1e-3f) return 1.0f;
      return r * std::sin(pi * x) * std::sin(pi * x / r) / (pi * pi * x * x);
    }
    default: return 0.f;
  }
}

float tf_radius(Filter f) { return f == Filter::Bilinear ? 1.f : f == Filter::Bicubic ? 2.f : 3.f; }

AxisTaps tf_taps(int in, int out, const ResizeSpec& s) {
  Builder b(in, out);
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  if (s.filter == Filter::Area) {
    for (int o = 0; o < out; ++o) {
      const float x0 = static_cast<float>(o) * scale, x1 = static_cast<float>(o + 1) * scale;
      const long long st = static_cast<long long>(std::floor(x0));
      const long long en = static_cast<long long>(std::ceil(x1));
      auto cell = [&](long long v) -> float {
        const float fv = static_cast<float>(v);
        return fv < x0 ? (fv + 1 > x1 ? scale : fv + 1 - x0) : (fv + 1 > x1 ? x1 - fv : 1.0f);
      };
      for (long long i = st; i < en; ++i) {
        const float w = (i == st) ? cell(st) : (i == en - 1 ? cell(en - 1) : 1.0f);
        b.add(o, clampi(i, 0, in - 1), static_cast<double>(w) / scale);
      }
    }
    return b.finish();
  }
  if (s.antialias || s.filter == Filter::Lanczos) {  // scale_and_translate
    const float sc = static_cast<float>(out) / static_cast<float>(in);
    const float inv_scale = 1.0f / sc;
    const float kernel_scale = s.antialias ? std::max(inv_scale, 1.0f) : 1.0f;
    const float radius = tf_radius(s.filter);
    const float one_over_ks = 1.0f / kernel_scale;
    std::vector<float> w;
    for (int o = 0; o < out; ++o) {
      const float sample = (static_cast<float>(o) + 0.5f) * inv_scale;
      long long st = static_cast<long long>(std::ceil(sample - radius * kernel_scale - 0.5f));
      long long en = static_cast<long long>(std::floor(sample + radius * kernel_scale - 0.5f));
      st = std::clamp<long long>(st, 0, in - 1);
      en = std::clamp<long long>(en, 0, in - 1) + 1;
      w.clear();
      float total = 0.f;
      for (long long src = st; src < en; ++src) {
        const float pos = static_cast<float>(src) + 0.5f - sample;
        w.push_back(tf_kernel(s.filter, std::fabs(pos * one_over_ks)));
        total += w.back();
      }
      if (std::fabs(total) >= 1000.0f * std::numeric_limits<float>::min()) {
        const float inv = 1.0f / total;
        for (float& v : w) v *= inv;
      }
      for (long long src = st; src < en; ++src) b.add(o, static_cast<int>(src), w[src - st]);
    }
    return b.finish();
  }
  for (int o = 0; o < out; ++o) {
    const float inpos = (static_cast<float>(o) + 0.5f) * scale - 0.5f;
    const float in_f = std::floor(inpos);
    if (s.filter == Filter::Bilinear) {
      const int lo = std::max(static_cast<int>(in_f), 0);
      const int hi = std::min(static_cast<int>(std::ceil(inpos)), in - 1);
      const float lerp = inpos - in_f;
      b.add(o, lo, 1.0f - lerp);
      b.add(o, hi, lerp);
    } else {  // Keys cubic through TF's 1024-entry table, out-of-range taps dropped and renormalised
      constexpr int kTable = 1024;
      const long long loc = static_cast<long long>(in_f);
      const float delta = inpos - in_f;
      const long long off = std::lrintf(delta * kTable);
      const float* tab = tf_cubic_table();
      float w[4] = {tab[off * 2 + 1], tab[off * 2], tab[(kTable - off) * 2], tab[(kTable - off) * 2 + 1]};
      for (int j = 0; j < 4; ++j)
        if (loc - 1 + j < 0 || loc - 1 + j > in - 1) w[j] = 0.f;
      const float sum = w[0] + w[1] + w[2] + w[3];
      if (std::fabs(sum) >= 1000.0f * std::numeric_limits<float>::min()) {
        const float inv = 1.0f / sum;
        for (float& v : w) v *= inv;
      }
      for (int j = 0; j < 4; ++j) b.add(o, clampi(loc - 1 + j, 0, in - 1), w[j]);
    }
  }
  return b.finish();
}

// ---------------------------------------------------------------- OpenCV
std::vector<int> cv_nearest(int in, int out) {
  std::vector<int> idx(out);
  const double ifx = 1. / (static_cast<double>(out) / in);
  for (int o = 0; o < out; ++o) idx[o] = std::min(static_cast<int>(std::floor(o * ifx)), in - 1);
  return idx;
}

// INTER_NEAREST_EXACT: Pillow-like centres, position accumulated in double.
std::vector<int> cv_nearest_exact(int in, int out) {
  std::vector<int> idx(out);
  const double scale = static_cast<double>(in) / static_cast<double>(out);
  double f = scale * 0.5;
  for (int o = 0; o < out; ++o) {
    idx[o] = std::min(static_cast<int>(std::floor(f)), in - 1);
    f += scale;
  }
  return idx;
}

short cv_round_short(float v) {
  return static_cast<short>(std::clamp<long>(std::lrint(v), std::numeric_limits<short>::min(),
                                              std::numeric_limits<short>::max()));
}

float cv_cubic_coeffs(float x, float* c) {
  constexpr float A = -0.75f;
  c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
  c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
  c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = 1.f - c[0] - c[1] - c[2];
  return 0.f;
}

// INTER_LINEAR / INTER_CUBIC (and INTER_AREA when enlarging) coefficient tables.
AxisTaps cv_taps(int in, int out, Filter f, bool u8) {
  Builder b(in, out);
  const double inv_scale = static_cast<double>(out) / in;
  const double scale = 1. / inv_scale;
  const bool cubic = f == Filter::Bicubic;
  const bool area = f == Filter::Area;
  const int ksize = cubic ? 4 : 2, ksize2 = ksize / 2;
  std::vector<int> cv_index;
  std::vector<std::int32_t> cv_weight;
  for (int dx = 0; dx < out; ++dx) {
    float fx;
    int sx;
    if (!area) {
      fx = static_cast<float>((dx + 0.5) * scale - 0.5);
      sx = static_cast<int>(std::floor(fx));
      fx -= static_cast<float>(sx);
    } else {
      sx = static_cast<int>(std::floor(dx * scale));
      fx = static_cast<float>((dx + 1) - (sx + 1) * inv_scale);
      fx = fx <= 0 ? 0.f : fx - std::floor(fx);
    }
    // OpenCV 5 keeps the fraction at the borders and clamps the source indices.
    float c[4];
    if (cubic) cv_cubic_coeffs(fx, c);
    else c[0] = 1.f - fx, c[1] = fx;
    for (int k = 0; k < ksize; ++k) {
      const int src = clampi(static_cast<long long>(sx) - (ksize2 - 1) + k, 0, in - 1);
      // Integer weights are rounded per tap, exactly as OpenCV stores them.
      const short fixed = cv_round_short(c[k] * 2048.f);
      b.add(dx, src, u8 ? static_cast<double>(fixed) : c[k]);
      if (u8) {
        cv_index.push_back(src);
        cv_weight.push_back(fixed);
      }
    }
  }
  AxisTaps t = b.finish();
  if (u8) {
    t.cv_ksize = ksize;
    t.cv_index = std::move(cv_index);
    t.cv_weight = std::move(cv_weight);
    t.fixed.resize(t.weight.size());
    for (std::size_t i = 0; i < t.weight.size(); ++i) t.fixed[i] = static_cast<std::int32_t>(t.weight[i]);
    if (t.max_taps == 2) {
      t.packed2.resize(out);
      for (int x = 0; x < out; ++x)
        t.packed2[x] = static_cast<std::int32_t>((t.fixed[2 * x] & 0xFFFF) |
                                                 (static_cast<std::uint32_t>(t.fixed[2 * x + 1]) << 16));
      t.packed2_safe_end = leading_within(t.start, 1, 4, in);
    }
    for (double& w : t.weight) w /= 2048.0;
  }
  return t;
}

// INTER_AREA when shrinking: exact coverage of each source cell, in OpenCV's float arithmetic.
AxisTaps cv_area_taps(int in, int out) {
  Builder b(in, out);
  const double scale = 1. / (static_cast<double>(out) / in);
  for (int dx = 0; dx < out; ++dx) {
    const double fsx1 = dx * scale, fsx2 = fsx1 + scale;
    const double cellWidth = std::min(scale, in - fsx1);
    int sx1 = static_cast<int>(std::ceil(fsx1)), sx2 = static_cast<int>(std::floor(fsx2));
    sx2 = std::min(sx2, in - 1);
    sx1 = std::min(sx1, sx2);
    if (sx1 - fsx1 > 1e-3) b.add(dx, sx1 - 1, static_cast<float>((sx1 - fsx1) / cellWidth));
    for (int sx = sx1; sx < sx2; ++sx) b.add(dx, sx, static_cast<float>(1.0 / cellWidth));
    if (fsx2 - sx2 > 1e-3)
      b.add(dx, sx2, static_cast<float>(std::min(std::min(fsx2 - sx2, 1.), cellWidth) / cellWidth));
  }
  return b.finish();
}

void fill_float(AxisTaps& t) {
  t.fweight.resize(t.weight.size());
  for (std::size_t i = 0; i < t.weight.size(); ++i) t.fweight[i] = static_cast<float>(t.weight[i]);
}

}  // namespace

ShuffleGather make_shuffle_gather(const std::vector<int>& xs, int in_size, const std::vector<int>& pattern) {
  ShuffleGather g;
  const int slot = static_cast<int>(pattern.size());
  const int reach = *std::max_element(pattern.begin(), pattern.end());
  const int blocks = static_cast<int>(xs.size()) / 8;
  std::int8_t m[32];
  for (int b = 0; b < blocks; ++b) {
    bool fits = true;
    for (int h = 0; h < 2 && fits; ++h) {
      const int* x = &xs[8 * b + 4 * h];
      fits = x[0] + 16 <= in_size;
      std::fill(m + 16 * h, m + 16 * h + 16, kZeroByte);
      for (int j = 0; j < 4 && fits; ++j) {
        const int rel = x[j] - x[0];
        fits = rel >= 0 && rel + reach <= 15;
        for (int k = 0; k < slot; ++k)
          m[16 * h + j * slot + k] = static_cast<std::int8_t>(pattern[k] == kZeroByte ? kZeroByte : rel + pattern[k]);
      }
    }
    if (!fits) break;
    g.base.push_back(xs[8 * b]);
    g.base.push_back(xs[8 * b + 4]);
    g.mask.insert(g.mask.end(), m, m + 32);
    ++g.blocks;
  }
  return g;
}

int leading_within(const std::vector<int>& start, int scale, int extra, int limit) {
  int n = 0;
  while (n < static_cast<int>(start.size()) && start[n] * scale + extra <= limit) ++n;
  return n;
}

void finalize_taps(AxisTaps& t) {
  // Windows near the right edge are moved left so that start + max_taps <= in_size.
  const int m = t.max_taps;
  if (m > t.in_size) throw Error(ErrorKind::Internal, "resize: window larger than the image");
  for (int o = 0; o < t.out_size; ++o) {
    const int over = t.start[o] + m - t.in_size;
    if (over <= 0) continue;
    double* w = &t.weight[static_cast<std::size_t>(o) * m];
    std::copy_backward(w, w + m - over, w + m);
    std::fill(w, w + over, 0.0);
    t.start[o] -= over;
    t.count[o] += over;
  }
}

ResizePlan make_resize_plan(const ResizeSpec& s, int in_w, int in_h, int out_w, int out_h,
                            int channels, bool u8_io) {
  ResizePlan p;
  const Filter f = s.filter;
  auto nearest = [&](auto fx, auto fy) {
    p.arith = Arith::Nearest;
    p.nearest_x = fx(in_w, out_w);
    p.nearest_y = fy(in_h, out_h);
  };
  switch (s.compat) {
    case Compat::Pil:
      if (f == Filter::Nearest) {
        nearest(pil_nearest, pil_nearest);
        break;
      }
      p.arith = u8_io ? Arith::PilFixed : Arith::Float;
      p.x = pil_taps(in_w, out_w, f);
      p.y = pil_taps(in_h, out_h, f);
      p.skip_x = in_w == out_w;
      p.skip_y = in_h == out_h;
      // Pillow 13 (PR #9549) runs the vertical pass first when the height shrinks
      // by more than twice as many pixels as the width does.
      p.pil_vertical_first = !p.skip_x && out_h < in_h && (in_h - out_h) > 2 * (in_w - out_w);
      p.pil_premultiply = u8_io && channels == 4;
      break;
    case Compat::Torch:
      if (f == Filter::Nearest || f == Filter::NearestExact) {
        const bool exact = f == Filter::NearestExact;
        p.arith = Arith::Nearest;
        p.nearest_x = torch_nearest(in_w, out_w, s.torch_scale_x, exact);
        p.nearest_y = torch_nearest(in_h, out_h, s.torch_scale_y, exact);
        break;
      }
      if (u8_io && (f == Filter::Bilinear || f == Filter::Bicubic)) {  // F.interpolate on a uint8 tensor
        p.arith = Arith::PilFixed;
        p.x = torch_u8_taps(in_w, out_w, s, s.torch_scale_x);
        p.y = torch_u8_taps(in_h, out_h, s, s.torch_scale_y);
        p.skip_x = in_w == out_w;
        p.skip_y = in_h == out_h;
        break;
      }
      p.arith = Arith::Float;
      p.x = torch_taps(in_w, out_w, s, s.torch_scale_x);
      p.y = torch_taps(in_h, out_h, s, s.torch_scale_y);
      break;
    case Compat::Tf:
      if (f == Filter::Nearest) {
        nearest(tf_nearest, tf_nearest);
        break;
      }
      p.arith = Arith::Float;
      p.x = tf_taps(in_w, out_w, s);
      p.y = tf_taps(in_h, out_h, s);
      break;
    case Compat::OpenCv: {
      if (f == Filter::Nearest) {
        nearest(cv_nearest, cv_nearest);
        break;
      }
      if (f == Filter::NearestExact) {
        nearest(cv_nearest_exact, cv_nearest_exact);
        break;
      }
      const double sx = 1. / (static_cast<double>(out_w) / in_w), sy = 1. / (static_cast<double>(out_h) / in_h);
      const int isx = static_cast<int>(std::lround(sx)), isy = static_cast<int>(std::lround(sy));
      const bool area_fast = std::fabs(sx - isx) < std::numeric_limits<double>::epsilon() &&
                             std::fabs(sy - isy) < std::numeric_limits<double>::epsilon();
      Filter eff = f;
      if (f == Filter::Bilinear && area_fast && isx == 2 && isy == 2) eff = Filter::Area;
      if (eff == Filter::Area && sx >= 1 && sy >= 1) {
        if (area_fast && u8_io) {
          p.arith = Arith::CvAreaFast;
          p.area_fast_x = isx;
          p.area_fast_y = isy;
          break;
        }
        p.arith = u8_io ? Arith::CvAreaFloat : Arith::Float;
        p.x = cv_area_taps(in_w, out_w);
        p.y = cv_area_taps(in_h, out_h);
        break;
      }
      p.arith = !u8_io ? Arith::Float : eff == Filter::Bicubic ? Arith::CvCubicFixed : Arith::CvLinearFixed;
      p.x = cv_taps(in_w, out_w, eff, u8_io);
      p.y = cv_taps(in_h, out_h, eff, u8_io);
      break;
    }
  }
  if (p.arith == Arith::Nearest) {
    p.nearest_gather_safe_end = leading_within(p.nearest_x, 1, 4, in_w);
    if (channels == 1) {
      p.nearest_u8 = make_shuffle_gather(p.nearest_x, in_w, {0});
      p.nearest_f32 = make_shuffle_gather(p.nearest_x, in_w, {0, kZeroByte, kZeroByte, kZeroByte});
    }
  }
  if (!p.x.weight.empty()) fill_float(p.x);
  if (!p.y.weight.empty()) fill_float(p.y);
  AxisTaps& t = p.x;
  if (channels == 1 && t.max_taps == 2 && !t.start.empty())
    t.pair_shuffle = make_shuffle_gather(t.start, in_w, {0, kZeroByte, 1, kZeroByte});
  if (channels == 1 && t.max_taps >= 2 && t.max_taps <= 4 && !t.fweight.empty()) {
    std::vector<int> pattern = {0, kZeroByte, kZeroByte, kZeroByte};
    for (int k = 1; k < t.max_taps; ++k) pattern[k] = k;
    t.tap_shuffle = make_shuffle_gather(t.start, in_w, pattern);
    const int m = t.max_taps;
    t.fweight_blocked.resize(static_cast<std::size_t>(t.tap_shuffle.blocks) * m * 8);
    for (int b = 0; b < t.tap_shuffle.blocks; ++b)
      for (int k = 0; k < m; ++k)
        for (int j = 0; j < 8; ++j)
          t.fweight_blocked[(static_cast<std::size_t>(b) * m + k) * 8 + j] = t.fweight[(8 * b + j) * m + k];
  }
  return p;
}

}  // namespace vinfer::detail
