// Winograd 3x3 convolutions (winograd.hpp): what runs on any CPU (the support
// check, the weight transform at load, the split of the image among threads).
// The kernels are in winograd_impl.hpp, compiled per ISA in simd_avx2.cpp /
// simd_avx512.cpp.
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "cpu/winograd.hpp"
#include "util/debug_env.hpp"

namespace vinfer::cpu {

namespace {
// The kernels for a geometry's channel block (8 with AVX2 + FMA, 16 with
// AVX-512) and form.
const WinogradKernelFns* kernel_fns(const WinogradGeometry& g) {
  if (!simd_block_runs(g.block)) return nullptr;
  const bool b8 = g.block == 8;
  if (g.stride == 2) return b8 ? &winograd_s2_avx2 : &winograd_s2_avx512;
  if (g.stride != 1) return nullptr;
  if (g.out_tile == 4) return b8 ? &winograd_f43_avx2 : &winograd_f43_avx512;
  if (g.out_tile == 2) return b8 ? &winograd_f23_avx2 : &winograd_f23_avx512;
  return nullptr;
}

int output_tile(const WinogradGeometry& g) { return g.stride == 2 ? 2 : g.out_tile; }
int weight_positions(const WinogradGeometry& g) { return g.stride == 1 && g.out_tile == 4 ? 36 : 16; }

}  // namespace

int Winograd3x3::tiles_per_image(const WinogradGeometry& g) {
  const int m = output_tile(g);
  return ((g.oh + m - 1) / m) * ((g.ow + m - 1) / m);
}

int Winograd3x3::tiles(const WinogradGeometry& g) { return tiles_per_image(g) * std::max(1, g.images); }

std::size_t Winograd3x3::weight_bytes(const WinogradGeometry& g) {
  return sizeof(float) * weight_positions(g) * static_cast<std::size_t>(g.ic_blocks()) * g.oc_blocks();
}

Winograd3x3::Split Winograd3x3::choose_split(const WinogradGeometry& g) {
  if (const char* env = detail::debug_env(detail::DebugVar::WinogradSplit)) {
    if (std::strcmp(env, "tiles") == 0) return Split::Tiles;
    if (std::strcmp(env, "positions") == 0) return Split::Positions;
  }
  return weight_bytes(g) > (1 << 20) && tiles(g) <= 64 ? Split::Positions : Split::Tiles;
}

bool Winograd3x3::supports(const WinogradGeometry& g) {
  if (!kernel_fns(g) || g.ic <= 0 || g.oc <= 0 ||
      g.pad_t < 0 || g.pad_t > 2 || g.pad_l < 0 || g.pad_l > 2 || g.oh <= 0 || g.ow <= 0)
    return false;
  // At most 2 of padding after the input too: the last output reads up to
  // input row (oh - 1) * stride - pad_t + 2.
  return (g.oh - 1) * g.stride - g.pad_t + 2 <= g.h + 1 && (g.ow - 1) * g.stride - g.pad_l + 2 <= g.w + 1;
}

Winograd3x3::Winograd3x3(const WinogradGeometry& g, const float* weights, const float* bias, float lo, float hi,
                         Split split, bool half, OutAct act, Residual residual)
    : g_(g), split_(split == Split::Auto ? choose_split(g) : split), lo_(lo), hi_(hi), act_(act), residual_(residual) {
  const int m = output_tile(g);
  g_.images = std::max(1, g.images);
  tiles_w_ = (g.ow + m - 1) / m;
  per_image_ = tiles_per_image(g_);
  tiles_ = tiles(g_);
  fns_ = kernel_fns(g);
  own_next_ = prefetch_own_weights();
  rows_ = g.block == 16 ? 12 : 6;
  max_chunk_ = 2 * rows_;  // the GEMM's B (a slice of U) then serves two register tiles
  // U = G g G^T per channel pair, in double, stored per position as the
  // GEMM's panels: [pos][oc / 2L][ic][2L] (a last panel of L channels where
  // oc is an odd number of vectors).
  static const double G43[6][3] = {{0.25, 0, 0},           {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                   {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
  static const double G23[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static const double GS2[4][3] = {{1, 0, 0}, {1, 0, 1}, {0, 0, 1}, {0, 1, 0}};
  const bool s2 = g.stride == 2;
  const int n = weight_positions(g) == 36 ? 6 : 4;
  const double(*G)[3] = s2 ? GS2 : n == 6 ? G43 : G23;
  positions_ = n * n;
  rows_per_tile_ = 0;
  for (int p = 0; p < positions_; ++p) {
    // Stride 2: position 3 of a dimension serves both of its odd samples.
    mult_[static_cast<std::size_t>(p)] = s2 ? (p / 4 == 3 ? 2 : 1) * (p % 4 == 3 ? 2 : 1) : 1;
    rows_per_tile_ += mult_[static_cast<std::size_t>(p)];
  }
  // Half transformed, W's first run is stored times G[0][0] (1/4 or 1: exact),
  // so that U's first position, like its last, is one of W's runs.
  half_ = half && split_ == Split::Positions && n == 6 && !s2 ? n : 0;
  for (int b = 0; b < n; ++b)
    for (int c = 0; c < 3; ++c)
      g_rows_[static_cast<std::size_t>(b * 3 + c)] = static_cast<float>(c == 0 ? G[b][0] / G[0][0] : G[b][c]);
  const int IC = g.ic_blocks(), OC = g.oc_blocks();  // zero weights on the padding
  const std::size_t uw = static_cast<std::size_t>(IC) * OC;  // floats per row of U
  u_bytes_ = sizeof(float) * uw * (half_ ? half_ * 3 : positions_);
  u_ = aligned_block(u_bytes_);
  float* u = static_cast<float*>(u_.get());
  // On every thread, each position's row of a panel written in order (this
  // is most of loading a network with many 3x3 layers).
  const int panel = 2 * g.block, panels = (OC + panel - 1) / panel;
#pragma omp parallel for collapse(2) schedule(static)
  for (int p = 0; p < panels; ++p)
    for (int i = 0; i < IC; ++i) {
      const int col0 = p * panel, width = std::min(panel, OC - col0);
      // The panel's channels side by side, so that the compiler vectorizes across them.
      double k[9][2 * 16], gg[6][3][2 * 16];
      for (int o = 0; o < width; ++o)
        for (int c = 0; c < 9; ++c)
          k[c][o] = i < g.ic && col0 + o < g.oc ? weights[(static_cast<std::size_t>(col0 + o) * g.ic + i) * 9 + c] : 0.0;
      for (int a = 0; a < n; ++a)
        for (int c = 0; c < 3; ++c)
          for (int o = 0; o < width; ++o) gg[a][c][o] = G[a][0] * k[c][o] + G[a][1] * k[3 + c][o] + G[a][2] * k[6 + c][o];
      auto row = [&](int r) { return u + r * uw + static_cast<std::size_t>(col0) * IC + static_cast<std::size_t>(i) * width; };
      for (int a = 0; a < n; ++a)
        if (half_) {
          for (int c = 0; c < 3; ++c)
            for (int o = 0; o < width; ++o) row(a * 3 + c)[o] = static_cast<float>(gg[a][c][o] * (c == 0 ? G[0][0] : 1.0));
        } else {
          for (int b = 0; b < n; ++b)
            for (int o = 0; o < width; ++o)
              row(a * n + b)[o] = static_cast<float>(gg[a][0][o] * G[b][0] + gg[a][1][o] * G[b][1] + gg[a][2][o] * G[b][2]);
        }
    }
  bias_.assign(OC, 0.f);
  if (bias) std::copy(bias, bias + g.oc, bias_.begin());
}

WinogradLayout Winograd3x3::layout(int rows, int ch) const {
  WinogradLayout l;
  l.pitch = static_cast<std::size_t>(rows) * ch;
  for (int p = 0; p < positions_; ++p) {
    l.at[static_cast<std::size_t>(p)] = l.floats;
    l.floats += position_stride(mult_[static_cast<std::size_t>(p)] * l.pitch);
  }
  return l;
}

std::size_t Winograd3x3::thread_floats() const {
  const int rows = max_chunk_ + rows_ - 1;
  return layout(rows, g_.ic_blocks()).floats + layout(rows, g_.oc_blocks()).floats;
}

// Half transformed: each thread's two panels of U, after V and M.
std::size_t Winograd3x3::panel_floats() const { return half_ ? static_cast<std::size_t>(g_.ic_blocks()) * 4 * g_.block : 0; }

std::size_t Winograd3x3::scratch_bytes(int threads) const {
  if (split_ == Split::Positions)
    return sizeof(float) * (layout(tiles_, g_.ic_blocks()).floats + layout(tiles_, g_.oc_blocks()).floats +
                            panel_floats() * std::max(1, threads));
  return sizeof(float) * thread_floats() * std::max(1, threads);
}

void Winograd3x3::run(const float* src, float* dst) {
  const int threads = omp_get_max_threads();
  if (const std::size_t bytes = scratch_bytes(threads); own_bytes_ < bytes) {
    own_scratch_ = aligned_block(bytes);
    own_bytes_ = bytes;
  }
  run(src, dst, own_scratch_.get(), threads);
}

void Winograd3x3::run(const float* src, float* dst, void* scratch, int max_threads, const std::vector<ByteSpan>* prefetch,
                      int images, const float* res) {
  WinogradGeometry g = g_;
  g.images = images > 0 ? std::min(images, g_.images) : g_.images;
  const int tiles = per_image_ * g.images;
  if (split_ == Split::Positions)
    run_by_positions(g, tiles, src, dst, static_cast<float*>(scratch), max_threads, prefetch, res);
  else run_by_tiles(g, tiles, src, dst, static_cast<float*>(scratch), max_threads, prefetch, res);
}

void Winograd3x3::run_by_tiles(const WinogradGeometry& g, int tiles, const float* src, float* dst, float* scratch,
                               int max_threads, const std::vector<ByteSpan>* prefetch, const float* res) {
  // Every thread gets at least half a register tile of rows (DenseNet's 14x14
  // maps: 16 tiles, 2 threads of 8 were faster than 1 thread of 16).
  const int threads = std::max(1, std::min({omp_get_max_threads(), max_threads, tiles / (rows_ / 2)}));
  const float* u = static_cast<const float*>(u_.get());
  const int IC = g_.ic_blocks(), OC = g_.oc_blocks();
  const std::size_t uw = static_cast<std::size_t>(IC) * OC;  // floats per position
  const int panels = (OC + 2 * g_.block - 1) / (2 * g_.block);
  const int max_rows = max_chunk_ + rows_ - 1;
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    const int begin = static_cast<int>(static_cast<long>(tiles) * t / n);
    const int count = static_cast<int>(static_cast<long>(tiles) * (t + 1) / n) - begin;
    float* v = scratch + thread_floats() * t;
    float* m = v + layout(max_rows, IC).floats;
    // Chunks of max_chunk_ tiles; the last one also takes the rows that do
    // not fill a register tile, so each thread runs at most one partial tile.
    // The first chunk fetches U while it transforms its input: inside a
    // network the weights come from memory, and the GEMM would wait for them.
    const int chunks = std::max(1, count / max_chunk_);
    long calls = 0;
    for (int p = 0; p < positions_; ++p) calls += (mult_[static_cast<std::size_t>(p)] * (count / chunks) + rows_ - 1) / rows_;
    PrefetchCursor pf(prefetch, t, n, calls * chunks * panels);
    // Each chunk reads all of U again: from L2 after the first where it fits
    // in half of it, so only the first fetches its next panels.
    const bool refetch = transformed_weight_bytes() > kOwnFetchBytes;
    for (int t0 = begin, left = count; left > 0;) {
      const int T = left < max_chunk_ + rows_ ? left : max_chunk_;
      const WinogradLayout lv = layout(T, IC), lm = layout(T, OC);
      const bool first = t0 == begin;
      pf.own_next = own_next_ && (first || refetch);
      fns_->input(g, tiles_w_, per_image_, t0, T, lv, src, v, first ? u : nullptr, first ? transformed_weight_bytes() : 0);
      for (int p = 0; p < positions_; ++p)
        fns_->gemm(v + lv.at[static_cast<std::size_t>(p)], u + p * uw, m + lm.at[static_cast<std::size_t>(p)], IC, OC,
                   mult_[static_cast<std::size_t>(p)] * T, &pf);
      fns_->output(g, tiles_w_, per_image_, t0, T, lm, m, bias_.data(), lo_, hi_, act_, residual_, res, dst);
      t0 += T, left -= T;
    }
  }
}

void Winograd3x3::run_by_positions(const WinogradGeometry& g, int tiles, const float* src, float* dst, float* scratch,
                                   int max_threads, const std::vector<ByteSpan>* prefetch, const float* res) {
  const int threads = std::max(1, std::min(omp_get_max_threads(), max_threads));
  const float* u = static_cast<const float*>(u_.get());
  const int IC = g_.ic_blocks(), OC = g_.oc_blocks();
  const std::size_t ic = IC, oc = OC, uw = ic * oc;
  const WinogradLayout lv = layout(tiles, IC), lm = layout(tiles, OC);
  float* v = scratch;             // V: all tiles
  float* m = scratch + lv.floats;  // M: all tiles
  const long all_rows = static_cast<long>(rows_per_tile_) * tiles;  // of the GEMMs, positions one after another
  const int panels = (OC + 2 * g_.block - 1) / (2 * g_.block);
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    const int tile0 = static_cast<int>(tiles * static_cast<long>(t) / n);
    const int count = static_cast<int>(tiles * static_cast<long>(t + 1) / n) - tile0;
    const long r0 = all_rows * t / n, r1 = all_rows * (t + 1) / n;  // the thread's GEMM rows
    int p0 = 0, p1 = 0;  // the positions they are in: [p0, p1)
    for (long base = 0; p1 < positions_; ++p1) {
      const long rows = static_cast<long>(mult_[static_cast<std::size_t>(p1)]) * tiles;
      if (base + rows <= r0) p0 = p1 + 1;
      if (base >= r1) break;
      base += rows;
    }
    // The thread's first positions of U come into L2 while it transforms.
    const std::size_t pf_at = half_ ? static_cast<std::size_t>(p0 / half_) * 3 * uw : p0 * uw;
    const float* pf = u + pf_at;
    const std::size_t pf_bytes =
        count > 0 && p1 > p0 ? std::min<std::size_t>(u_bytes_ - sizeof(float) * pf_at, 1 << 20) : 0;
    fns_->input(g, tiles_w_, per_image_, tile0, count, lv, src, v + tile0 * ic, pf, pf_bytes);
#pragma omp barrier
    PrefetchCursor next(prefetch, t, n, panels * ((r1 - r0) / rows_ + (p1 - p0)));
    next.own_next = own_next_;
    // The thread's rows of position p: [lo, hi) of its tiles (none: lo >= hi).
    auto rows_of = [&](int p, long base, long& lo, long& hi) {
      const long rows = static_cast<long>(mult_[static_cast<std::size_t>(p)]) * tiles;
      lo = std::max(base, r0) - base, hi = std::min(base + rows, r1) - base;
      return rows;
    };
    if (!half_) {
      long base = 0;
      for (int p = 0; p < positions_; ++p) {
        long lo, hi;
        const long rows = rows_of(p, base, lo, hi);
        if (lo < hi)
          fns_->gemm(v + lv.at[static_cast<std::size_t>(p)] + static_cast<std::size_t>(lo) * ic, u + p * uw,
                     m + lm.at[static_cast<std::size_t>(p)] + static_cast<std::size_t>(lo) * oc, IC, OC,
                     static_cast<int>(hi - lo), &next);
        base += rows;
      }
    } else {
      // Per row a of W: per panel, its positions (a, b) in turn, U's panels
      // made from W[a]'s three runs while they are in L2 (the first and last
      // positions are two of them, the others come in pairs); the first three
      // GEMMs fetch the next three runs meanwhile (one each).
      float* made = m + lm.floats + panel_floats() * t;
      const int n_side = half_, width_max = 2 * g_.block;
      for (int a = p0 / n_side; a * n_side < p1; ++a) {
        const float* wa = u + static_cast<std::size_t>(a) * 3 * uw;
        for (int col = 0; col < OC; col += width_max) {
          const int width = std::min(width_max, OC - col);
          const std::size_t count = static_cast<std::size_t>(width) * ic;
          const float* w_panel = wa + static_cast<std::size_t>(col) * ic;
          const float* fetch = !own_next_              ? nullptr
                               : col + width < OC      ? w_panel + count
                               : (a + 1) * n_side < p1 ? wa + 3 * uw
                                                       : nullptr;
          int fetched = 0, pair = -1;  // the pair of positions whose panels are in `made`
          for (int b = 0; b < n_side; ++b) {
            const int p = a * n_side + b;
            long lo, hi;
            rows_of(p, static_cast<long>(p) * tiles, lo, hi);
            if (lo >= hi) continue;
            const float* panel = w_panel;
            if (b == n_side - 1) {
              panel = w_panel + 2 * uw;
            } else if (b > 0) {
              const int first = b - (b + 1) % 2;  // 1 for 1 and 2, 3 for 3 and 4
              if (pair != first)
                fns_->combine(w_panel, uw, &g_rows_[static_cast<std::size_t>(first * 3)], made, made + count, count);
              pair = first;
              panel = made + (b == first ? 0 : count);
            }
            fns_->gemm_panel(v + lv.at[static_cast<std::size_t>(p)] + static_cast<std::size_t>(lo) * ic, panel,
                             m + lm.at[static_cast<std::size_t>(p)] + static_cast<std::size_t>(lo) * oc, IC, OC,
                             col, width, static_cast<int>(hi - lo), &next,
                             fetch && fetched < 3 ? fetch + static_cast<std::size_t>(fetched) * uw : nullptr);
            ++fetched;
          }
        }
      }
    }
#pragma omp barrier
    fns_->output(g, tiles_w_, per_image_, tile0, count, lm, m + tile0 * oc, bias_.data(), lo_, hi_, act_, residual_, res, dst);
  }
}

}  // namespace vinfer::cpu
