// Fast resize: the same plans as resize_ref.cpp, applied row by row with
// SIMD kernels, reusable scratch and rows split across threads.
#include <algorithm>
#include <functional>
#include <type_traits>
#include <cstring>
#include <vector>

#include "image/pixel_ops.hpp"
#include "image/resize_kernels.hpp"
#include "image/resize_plan.hpp"
#include "util/cpu_features.hpp"
#include "util/scratch.hpp"
#include "util/thread_pool.hpp"
#include "vinfer/error.hpp"
#include "vinfer/resize.hpp"

namespace vinfer {

using detail::Arith;
using detail::ResizePlan;

namespace {

constexpr std::size_t kMinPixelsPerThread = 64 * 1024;

int effective_threads(const ResizeSpec& s, std::size_t work) {
  const int t = s.threads <= 0 ? detail::hardware_threads() : s.threads;
  return static_cast<int>(std::clamp<std::size_t>(work / kMinPixelsPerThread, 1, t));
}

struct PlanKey {
  int iw = 0, ih = 0, ow = 0, oh = 0, c = 0;
  bool u8 = false;
  bool operator==(const PlanKey&) const = default;
};

// A separable resize band by band: each thread takes a range of output rows,
// runs the horizontal pass only for the source rows its windows read, into a
// ring of m rows (a window's rows are consecutive, so they land in distinct
// slots, and a row shared by neighbouring windows is computed once), then the
// vertical pass. One fork/join per image and the scratch stays in cache,
// where two whole-image passes through a large intermediate did not.
// src(y, k): source row of tap k of output row y; horiz(r, R* dst); vert(y, const R* const* rows).
// horiz2 (may be null): two rows at once, where the kernel shares work between them.
template <typename R, typename Src, typename Horiz, typename Vert>
void separable_banded(int oh, int threads, int m, std::size_t trow, const Src& src, const Horiz& horiz,
                      const Vert& vert, const std::function<void(int, R*, int, R*)>& horiz2 = nullptr) {
  detail::parallel_for(oh, threads, [&](int y0, int y1) {
    thread_local std::vector<R> ring;
    thread_local std::vector<int> key;
    thread_local std::vector<const R*> rows;
    const detail::ScratchTrim trim(ring, key, rows);
    ring.resize(static_cast<std::size_t>(m) * trow);
    key.assign(m, -1);
    rows.resize(m);
    for (int y = y0; y < y1; ++y) {
      for (int k = 0; k < m; ++k) {
        const int r = src(y, k), slot = r % m;
        R* row = ring.data() + static_cast<std::size_t>(slot) * trow;
        if (key[slot] != r) {
          // The window's next row, if also new, goes with it: a window's rows
          // have distinct slots, so filling that one early is safe.
          const int r2 = k + 1 < m ? src(y, k + 1) : -1, slot2 = r2 >= 0 ? r2 % m : 0;
          if (horiz2 && r2 >= 0 && r2 != r && key[slot2] != r2) {
            horiz2(r, row, r2, ring.data() + static_cast<std::size_t>(slot2) * trow);
            key[slot2] = r2;
          } else {
            horiz(r, row);
          }
          key[slot] = r;
        }
        rows[k] = row;
      }
      vert(y, rows.data());
    }
  });
}

}  // namespace

struct Resizer::Impl {
  ResizeSpec spec;
  PlanKey key;
  bool has_plan = false;
  ResizePlan plan;
  std::vector<std::uint8_t> tmp_u8, pre_u8;
  std::vector<int> tmp_i32, row_slot, used_rows;

  const ResizePlan& plan_for(int iw, int ih, int ow, int oh, int c, bool u8) {
    const PlanKey k{iw, ih, ow, oh, c, u8};
    if (!has_plan || !(k == key)) {
      plan = detail::make_resize_plan(spec, iw, ih, ow, oh, c, u8);
      key = k;
      has_plan = true;
    }
    return plan;
  }

  void stream_vertical_rows(ImageU8& out, int y0, int y1) const;

  // Source rows [lo, hi) that the vertical pass reads.
  static std::pair<int, int> rows_needed(const ResizePlan& p, int ih) {
    if (p.skip_y) return {0, ih};
    const int lo = p.y.start.front();
    const int hi = p.y.start.back() + p.y.max_taps;
    return {std::min(lo, ih), std::min(hi, ih)};
  }

  template <typename T, typename O>
  void nearest(const ImageView<T>& in, O& out, int threads) {
    const ResizePlan& p = plan;
    const int ow = out.width(), C = in.channels;
    detail::parallel_for(out.height(), threads, [&](int y0, int y1) {
      for (int y = y0; y < y1; ++y) {
        if (y > y0 && p.nearest_y[y] == p.nearest_y[y - 1]) {
          std::memcpy(out.row(y), out.row(y - 1), sizeof(T) * ow * C);
        } else if constexpr (std::is_same_v<T, std::uint8_t>) {
          const std::uint8_t* s = in.row(p.nearest_y[y]);
          int done = 0;
          if (p.nearest_u8.blocks > 0 && detail::cpu_features().avx2) {
            detail::nearest_row_u8_c1_shuffle_avx2(s, out.row(y), p.nearest_u8.base.data(), p.nearest_u8.mask.data(),
                                                   p.nearest_u8.blocks);
            done = 8 * p.nearest_u8.blocks;
          }
          detail::nearest_row_u8(s, out.row(y) + done, ow - done, C, p.nearest_x.data() + done);
        } else {
          detail::nearest_row_f32(in.row(p.nearest_y[y]), out.row(y), ow, C, p.nearest_x.data());
        }
      }
    });
  }

  void pil_fixed(const ImageView<std::uint8_t>& src, ImageU8& out, int threads) {
    const ResizePlan& p = plan;
    const int C = src.channels, W = src.width, H = src.height, ow = out.width(), oh = out.height();
    ImageView<std::uint8_t> in = src;
    if (p.pil_premultiply) {
      pre_u8.resize(static_cast<std::size_t>(W) * H * 4);
      detail::parallel_for(H, threads, [&](int y0, int y1) {
        for (int y = y0; y < y1; ++y) detail::pil_premultiply_row(src.row(y), pre_u8.data() + static_cast<std::size_t>(y) * W * 4, W);
      });
      in = {pre_u8.data(), W, H, 4, static_cast<std::ptrdiff_t>(W) * 4};
    }
    if (p.pil_vertical_first) {  // Pillow's order when the height shrinks much more than the width
      const std::size_t irow = static_cast<std::size_t>(W) * C;
      tmp_u8.resize(static_cast<std::size_t>(oh) * irow);
      detail::parallel_for(oh, threads, [&](int y0, int y1) {
        thread_local std::vector<const std::uint8_t*> rows;
        const int m = p.y.max_taps;
        rows.resize(m);
        for (int y = y0; y < y1; ++y) {
          for (int k = 0; k < m; ++k) rows[k] = in.row(p.y.start[y] + k);
          std::uint8_t* t = tmp_u8.data() + y * irow;
          detail::pil_vertical_u8(rows.data(), &p.y.fixed[static_cast<std::size_t>(y) * m], m, t, irow);
          detail::pil_horizontal_u8(t, out.row(y), C, p.x);
          if (p.pil_premultiply) detail::pil_unpremultiply_row(out.row(y), ow);
        }
      });
      return;
    }
    if (!p.skip_x && !p.skip_y) {
      const std::size_t trow = static_cast<std::size_t>(ow) * C;
      const int m = p.y.max_taps;
      separable_banded<std::uint8_t>(
          oh, threads, m, trow, [&](int y, int k) { return p.y.start[y] + k; },
          [&](int r, std::uint8_t* d) { detail::pil_horizontal_u8(in.row(r), d, C, p.x); },
          [&](int y, const std::uint8_t* const* rows) {
            detail::pil_vertical_u8(rows, &p.y.fixed[static_cast<std::size_t>(y) * m], m, out.row(y), trow);
            if (p.pil_premultiply) detail::pil_unpremultiply_row(out.row(y), ow);
          },
          [&](int r, std::uint8_t* d, int r2, std::uint8_t* d2) {
            detail::pil_horizontal_u8_2rows(in.row(r), in.row(r2), d, d2, C, p.x);
          });
      return;
    }
    const auto needed = rows_needed(p, H);  // not a structured binding: lambdas below capture lo (clang 14)
    const int lo = needed.first, hi = needed.second;
    const int tw = p.skip_x ? W : ow;
    const std::size_t trow = static_cast<std::size_t>(tw) * C;
    const std::uint8_t* tbase;
    std::ptrdiff_t tstride;
    if (p.skip_x) {
      tbase = in.data;
      tstride = in.stride;
    } else {
      tmp_u8.resize(static_cast<std::size_t>(hi - lo) * trow);
      detail::parallel_for(hi - lo, threads, [&](int r0, int r1) {
        for (int r = r0; r < r1; ++r)
          detail::pil_horizontal_u8(in.row(lo + r), tmp_u8.data() + r * trow, C, p.x);
      });
      tbase = tmp_u8.data() - static_cast<std::ptrdiff_t>(lo) * trow;
      tstride = static_cast<std::ptrdiff_t>(trow);
    }
    detail::parallel_for(oh, threads, [&](int y0, int y1) {
      thread_local std::vector<const std::uint8_t*> rows;
      rows.resize(std::max(p.y.max_taps, 1));
      for (int y = y0; y < y1; ++y) {
        if (p.skip_y) {
          std::memcpy(out.row(y), tbase + y * tstride, trow);
        } else {
          const int m = p.y.max_taps;
          for (int k = 0; k < m; ++k) rows[k] = tbase + (p.y.start[y] + k) * tstride;
          detail::pil_vertical_u8(rows.data(), &p.y.fixed[static_cast<std::size_t>(y) * m], m, out.row(y), trow);
        }
        if (p.pil_premultiply) detail::pil_unpremultiply_row(out.row(y), ow);
      }
    });
  }

  // Float separable path: horizontal pass into float rows, then vertical.
  // out_u8: round each row to u8 there (out is then unused), in the same pass.
  template <typename T>
  void float_conv(const ImageView<T>& in, float* out, int ow, int oh, int threads, std::uint8_t* out_u8 = nullptr) {
    const ResizePlan& p = plan;
    const int C = in.channels, m = p.y.max_taps;
    const std::size_t trow = static_cast<std::size_t>(ow) * C;
    const detail::ShuffleGather& sg = p.x.tap_shuffle;
    const bool shuffle = std::is_same_v<T, std::uint8_t> && sg.blocks > 0 && detail::cpu_features().avx2;
    separable_banded<float>(
        oh, threads, m, trow, [&](int y, int k) { return p.y.start[y] + k; },
        [&](int r, float* d) {
          int done = 0;
          if constexpr (std::is_same_v<T, std::uint8_t>) {
            if (shuffle) {
              detail::float_horizontal_c1_shuffle_avx2(in.row(r), d, sg.base.data(), sg.mask.data(), sg.blocks,
                                                        p.x.fweight_blocked.data(), p.x.max_taps);
              done = 8 * sg.blocks;
            }
          }
          detail::float_horizontal(in.row(r), d + done, ow - done, C, p.x.start.data() + done,
                                   p.x.fweight.data() + static_cast<std::size_t>(done) * p.x.max_taps, p.x.max_taps);
        },
        [&](int y, const float* const* rows) {
          const float* w = &p.y.fweight[static_cast<std::size_t>(y) * m];
          if (!out_u8) return detail::float_vertical_f32(rows, w, m, out + y * trow, trow);
          thread_local std::vector<float> f;
          const detail::ScratchTrim trim(f);
          f.resize(trow);
          detail::float_vertical_f32(rows, w, m, f.data(), trow);
          detail::round_row_u8(f.data(), out_u8 + y * trow, trow);
        });
  }

  // Four integer taps per output pixel of C channels (OpenCV's u8 bicubic).
  template <int C>
  static void cv_horizontal_4taps(const std::uint8_t* s, int* d, int ow, const detail::AxisTaps& t) {
    for (int x = 0; x < ow; ++x) {
      const std::int32_t* w = &t.fixed[static_cast<std::size_t>(x) * 4];
      const std::uint8_t* sp = s + t.start[x] * C;
      for (int c = 0; c < C; ++c)
        d[x * C + c] = w[0] * sp[c] + w[1] * sp[C + c] + w[2] * sp[2 * C + c] + w[3] * sp[3 * C + c];
    }
  }

  // OpenCV's integer paths: horizontal into int rows (only the rows the
  // vertical pass reads, as OpenCV does), then vertical with OpenCV's rounding.
  void cv_fixed(const ImageView<std::uint8_t>& in, ImageU8& out, int threads) {
    const ResizePlan& p = plan;
    const int C = in.channels, ow = out.width(), oh = out.height(), row = ow * C, H = in.height;
    const bool linear = p.arith == Arith::CvLinearFixed;
    const int m = p.x.max_taps;
    const detail::ShuffleGather& sg = p.x.pair_shuffle;
    const bool gather2 = C == 1 && !p.x.packed2.empty() && detail::cpu_features().avx2;
    auto horiz = [&](int src_row, int* d) {
      const std::uint8_t* s = in.row(src_row);
      if (gather2) {
        int done = 0;
        if (sg.blocks > 0) {
          detail::cv_horizontal_linear_c1_shuffle_avx2(s, d, sg.base.data(), sg.mask.data(), sg.blocks,
                                                        p.x.packed2.data());
          done = 8 * sg.blocks;
        }
        detail::cv_horizontal_linear_c1_avx2(s, d + done, ow - done, p.x.start.data() + done,
                                             p.x.packed2.data() + done, p.x.packed2_safe_end - done);
        return;
      }
      if (m == 4 && (C == 1 || C == 3 || C == 4)) {  // bicubic: the taps and channels unrolled
        const auto run = [&](auto channels) { cv_horizontal_4taps<decltype(channels)::value>(s, d, ow, p.x); };
        if (C == 1) run(std::integral_constant<int, 1>());
        else if (C == 3) run(std::integral_constant<int, 3>());
        else run(std::integral_constant<int, 4>());
        return;
      }
      for (int x = 0; x < ow; ++x) {
        const std::int32_t* w = &p.x.fixed[static_cast<std::size_t>(x) * m];
        const std::uint8_t* sp = s + p.x.start[x] * C;
        for (int c = 0; c < C; ++c) {
          int acc = 0;
          for (int k = 0; k < m; ++k) acc += w[k] * sp[k * C + c];
          d[x * C + c] = acc;
        }
      }
    };
    if (linear) {
      separable_banded<int>(
          oh, threads, 2, static_cast<std::size_t>(row), [&](int y, int k) { return p.y.cv_index[2 * y + k]; },
          horiz, [&](int y, const int* const* rows) {
            const std::int32_t* pw = &p.y.cv_weight[2 * static_cast<std::size_t>(y)];
            detail::cv_vertical_linear_u8(rows[0], rows[1], pw[0], pw[1], out.row(y), row);
          });
      return;
    }
    // Cubic: every source row any output reads, horizontally once, then
    // each output row from its four (clamped, possibly repeated) rows.
    row_slot.assign(H, -1);
    used_rows.clear();
    for (int r : p.y.cv_index)
      if (row_slot[r] < 0) row_slot[r] = 0, used_rows.push_back(r);
    std::sort(used_rows.begin(), used_rows.end());
    for (std::size_t i = 0; i < used_rows.size(); ++i) row_slot[used_rows[i]] = static_cast<int>(i);
    tmp_i32.resize(used_rows.size() * row);
    detail::parallel_for(static_cast<int>(used_rows.size()), threads, [&](int r0, int r1) {
      for (int r = r0; r < r1; ++r) horiz(used_rows[r], tmp_i32.data() + static_cast<std::size_t>(r) * row);
    });
    auto srow = [&](int r) { return tmp_i32.data() + static_cast<std::size_t>(row_slot[r]) * row; };
    detail::parallel_for(oh, threads, [&](int y0, int y1) {
      for (int y = y0; y < y1; ++y) {
        const int* pi = &p.y.cv_index[4 * static_cast<std::size_t>(y)];
        const int* const rows[4] = {srow(pi[0]), srow(pi[1]), srow(pi[2]), srow(pi[3])};
        detail::cv_vertical_cubic_u8(rows, &p.y.cv_weight[4 * static_cast<std::size_t>(y)], out.row(y), row);
      }
    });
  }

  void cv_area_fast(const ImageView<std::uint8_t>& in, ImageU8& out, int threads) {
    const int C = in.channels, sx = plan.area_fast_x, sy = plan.area_fast_y, ow = out.width();
    detail::parallel_for(out.height(), threads, [&](int y0, int y1) {
      for (int y = y0; y < y1; ++y) {
        std::uint8_t* d = out.row(y);
        for (int x = 0; x < ow; ++x)
          for (int c = 0; c < C; ++c) {
            int sum = 0;
            for (int j = 0; j < sy; ++j) {
              const std::uint8_t* s = in.row(y * sy + j) + x * sx * C + c;
              for (int i = 0; i < sx; ++i) sum += s[i * C];
            }
            d[x * C + c] = detail::cv_area_fast_value(sum, sx, sy);
          }
      }
    });
  }
};

namespace {
template <typename T>
void check_input(const ImageView<T>& in, int ow, int oh) {
  if (in.data == nullptr || in.width <= 0 || in.height <= 0)
    throw Error(ErrorKind::InvalidArgument, "resize: empty input image");
  if (in.channels != 1 && in.channels != 3 && in.channels != 4)
    throw Error(ErrorKind::Unsupported, "resize: " + std::to_string(in.channels) + " channels (1, 3 or 4 supported)");
  if (ow <= 0 || oh <= 0)
    throw Error(ErrorKind::InvalidArgument,
                "resize: output size " + std::to_string(ow) + "x" + std::to_string(oh) + " must be positive");
  if (static_cast<long long>(ow) * oh > (1LL << 31) / in.channels)
    throw Error(ErrorKind::LimitExceeded, "resize: output size " + std::to_string(ow) + "x" + std::to_string(oh) + " is too large");
}
}  // namespace

Resizer::Resizer(const ResizeSpec& spec) : impl_(std::make_unique<Impl>()) {
  validate(spec);
  impl_->spec = spec;
}
Resizer::~Resizer() = default;
Resizer::Resizer(Resizer&&) noexcept = default;
Resizer& Resizer::operator=(Resizer&&) noexcept = default;
const ResizeSpec& Resizer::spec() const { return impl_->spec; }

void Resizer::run(const ImageView<std::uint8_t>& in, int ow, int oh, ImageU8& out) {
  check_input(in, ow, oh);
  Impl& m = *impl_;
  const ResizePlan& p = m.plan_for(in.width, in.height, ow, oh, in.channels, true);
  out.reshape(ow, oh, in.channels);
  const int threads = effective_threads(m.spec, static_cast<std::size_t>(in.width) * in.height + out.size());
  switch (p.arith) {
    case Arith::Nearest: m.nearest(in, out, threads); break;
    case Arith::PilFixed: m.pil_fixed(in, out, threads); break;
    case Arith::CvLinearFixed:
    case Arith::CvCubicFixed: m.cv_fixed(in, out, threads); break;
    case Arith::CvAreaFast: m.cv_area_fast(in, out, threads); break;
    case Arith::CvAreaFloat:
    case Arith::Float: m.float_conv(in, nullptr, ow, oh, threads, out.data()); break;
  }
}

bool Resizer::can_stream(int iw, int ih, int ow, int oh, int c) {
  if (iw <= 0 || ih <= 0 || ow <= 0 || oh <= 0 || (c != 1 && c != 3)) return false;
  const ResizePlan& p = impl_->plan_for(iw, ih, ow, oh, c, true);
  return p.arith == Arith::PilFixed && !p.pil_vertical_first && !p.pil_premultiply && !p.skip_x && !p.skip_y;
}

void Resizer::stream_rows(const ImageView<std::uint8_t>& in, int ow, int oh, int y0, int y1) {
  Impl& m = *impl_;
  const ResizePlan& p = m.plan_for(in.width, in.height, ow, oh, in.channels, true);
  const auto needed = Impl::rows_needed(p, in.height);
  const std::size_t trow = static_cast<std::size_t>(ow) * in.channels;
  m.tmp_u8.resize(static_cast<std::size_t>(needed.second - needed.first) * trow);
  for (int y = std::max(y0, needed.first); y < std::min(y1, needed.second); ++y)
    detail::pil_horizontal_u8(in.row(y), m.tmp_u8.data() + static_cast<std::size_t>(y - needed.first) * trow, in.channels, p.x);
}

// Output rows [y0, y1) from the horizontal pass's rows in tmp_u8.
void Resizer::Impl::stream_vertical_rows(ImageU8& out, int y0, int y1) const {
  const ResizePlan& p = plan;
  const int mt = p.y.max_taps, lo = rows_needed(p, key.ih).first;
  const std::size_t trow = static_cast<std::size_t>(out.width()) * key.c;
  thread_local std::vector<const std::uint8_t*> rows;
  rows.resize(static_cast<std::size_t>(mt));
  for (int y = y0; y < y1; ++y) {
    for (int k = 0; k < mt; ++k) rows[static_cast<std::size_t>(k)] = tmp_u8.data() + static_cast<std::size_t>(p.y.start[y] + k - lo) * trow;
    detail::pil_vertical_u8(rows.data(), &p.y.fixed[static_cast<std::size_t>(y) * mt], mt, out.row(y), trow);
  }
}

int Resizer::stream_vertical(int ow, int oh, int rows, ImageU8& out, int y0) {
  Impl& m = *impl_;
  if (!m.has_plan) throw Error(ErrorKind::Internal, "resize: stream_vertical without stream_rows");
  const ResizePlan& p = m.plan;
  const int hi = Impl::rows_needed(p, m.key.ih).second, mt = p.y.max_taps;
  if (y0 == 0) out.reshape(ow, oh, m.key.c);
  int y1 = y0;
  while (y1 < oh && std::min(p.y.start[y1] + mt, hi) <= rows) ++y1;
  m.stream_vertical_rows(out, y0, y1);
  return y1;
}

void Resizer::stream_finish(int ow, int oh, ImageU8& out, int y0) {
  Impl& m = *impl_;
  if (!m.has_plan) throw Error(ErrorKind::Internal, "resize: stream_finish without stream_rows");
  out.reshape(ow, oh, m.key.c);
  if (y0 >= oh) return;
  const int threads = effective_threads(m.spec, static_cast<std::size_t>(oh - y0) * ow * m.key.c * m.plan.y.max_taps);
  detail::parallel_for(oh - y0, threads, [&](int a, int b) { m.stream_vertical_rows(out, y0 + a, y0 + b); });
}

void Resizer::run(const ImageView<std::uint8_t>& in, int ow, int oh, ImageF32& out) {
  check_input(in, ow, oh);
  Impl& m = *impl_;
  const ResizePlan& p = m.plan_for(in.width, in.height, ow, oh, in.channels, false);
  out.reshape(ow, oh, in.channels);
  const int threads = effective_threads(m.spec, static_cast<std::size_t>(in.width) * in.height + out.size());
  if (p.arith == Arith::Nearest) {
    detail::parallel_for(oh, threads, [&](int y0, int y1) {
      for (int y = y0; y < y1; ++y) {
        if (y > y0 && p.nearest_y[y] == p.nearest_y[y - 1])
          std::memcpy(out.row(y), out.row(y - 1), sizeof(float) * ow * in.channels);
        else {
          const std::uint8_t* s = in.row(p.nearest_y[y]);
          int done = 0;
          if (p.nearest_f32.blocks > 0 && detail::cpu_features().avx2) {
            detail::nearest_row_u8_f32_c1_shuffle_avx2(s, out.row(y), p.nearest_f32.base.data(),
                                                       p.nearest_f32.mask.data(), p.nearest_f32.blocks);
            done = 8 * p.nearest_f32.blocks;
          }
          detail::nearest_row_u8_f32(s, out.row(y) + done, ow - done, in.channels, p.nearest_x.data() + done,
                                     p.nearest_gather_safe_end - done);
        }
      }
    });
    return;
  }
  m.float_conv(in, out.data(), ow, oh, threads);
}

void Resizer::run(const ImageView<float>& in, int ow, int oh, ImageF32& out) {
  check_input(in, ow, oh);
  Impl& m = *impl_;
  const ResizePlan& p = m.plan_for(in.width, in.height, ow, oh, in.channels, false);
  out.reshape(ow, oh, in.channels);
  const int threads = effective_threads(m.spec, static_cast<std::size_t>(in.width) * in.height + out.size());
  if (p.arith == Arith::Nearest) return m.nearest(in, out, threads);
  m.float_conv(in, out.data(), ow, oh, threads);
}

}  // namespace vinfer
