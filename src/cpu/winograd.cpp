// Winograd F(4x4, 3x3): what runs on any CPU (the support check, the weight
// transform at load, the split of the image among threads). The kernels are
// in winograd_impl.hpp, compiled per ISA in simd_avx2.cpp / simd_avx512.cpp.
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "cpu/winograd.hpp"

namespace vinfer::cpu {

namespace {
// The kernels for a channel block: 8 with AVX2 + FMA, 16 with AVX-512.
const WinogradKernelFns* kernel_fns(int block) {
  if (!simd_block_runs(block)) return nullptr;
  return block == 8 ? &winograd_avx2 : &winograd_avx512;
}

}  // namespace

WinogradF43::Split WinogradF43::choose_split(const WinogradGeometry& g) {
  if (const char* env = std::getenv("VINFER_WINOGRAD_SPLIT")) {
    if (std::strcmp(env, "tiles") == 0) return Split::Tiles;
    if (std::strcmp(env, "positions") == 0) return Split::Positions;
  }
  const int tiles = ((g.oh + 3) / 4) * ((g.ow + 3) / 4);
  const double u_mib = 36.0 * g.ic * g.oc * 4 / (1 << 20);
  return u_mib > 1 && tiles <= 64 ? Split::Positions : Split::Tiles;
}

bool WinogradF43::supports(const WinogradGeometry& g) {
  return kernel_fns(g.block) && g.ic > 0 && g.oc > 0 && g.ic % g.block == 0 &&
         g.oc % g.block == 0 && g.pad_t >= 0 && g.pad_t <= 2 && g.pad_l >= 0 && g.pad_l <= 2 && g.oh > 0 && g.ow > 0 &&
         g.oh <= g.h + 2 * 2 - 2 && g.ow <= g.w + 2 * 2 - 2;
}

WinogradF43::WinogradF43(const WinogradGeometry& g, const float* weights, const float* bias, float lo, float hi,
                         Split split)
    : g_(g), split_(split == Split::Auto ? choose_split(g) : split), lo_(lo), hi_(hi) {
  tiles_w_ = (g.ow + 3) / 4;
  tiles_ = tiles_w_ * ((g.oh + 3) / 4);
  fns_ = kernel_fns(g.block);
  rows_ = g.block == 16 ? 12 : 6;
  max_chunk_ = 2 * rows_;  // the GEMM's B (a slice of U) then serves two register tiles
  // U = G g G^T per channel pair, in double, stored per position as the
  // GEMM's panels: [pos][oc / 2L][ic][2L] (a last panel of L channels where
  // oc is an odd number of vectors).
  static const double G[6][3] = {{0.25, 0, 0},           {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                 {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
  u_ = aligned_block(sizeof(float) * 36 * g.ic * g.oc);
  float* u = static_cast<float*>(u_.get());
  const int panel = 2 * g.block;
  for (int o = 0; o < g.oc; ++o)
    for (int i = 0; i < g.ic; ++i) {
      const int col0 = o / panel * panel, width = std::min(panel, g.oc - col0);
      const float* k = weights + (static_cast<std::size_t>(o) * g.ic + i) * 9;
      double gg[6][3];
      for (int a = 0; a < 6; ++a)
        for (int c = 0; c < 3; ++c) gg[a][c] = G[a][0] * k[c] + G[a][1] * k[3 + c] + G[a][2] * k[6 + c];
      for (int a = 0; a < 6; ++a)
        for (int b = 0; b < 6; ++b) {
          const double v = gg[a][0] * G[b][0] + gg[a][1] * G[b][1] + gg[a][2] * G[b][2];
          u[static_cast<std::size_t>(a * 6 + b) * g.ic * g.oc + static_cast<std::size_t>(col0) * g.ic +
            static_cast<std::size_t>(i) * width + (o - col0)] = static_cast<float>(v);
        }
    }
  bias_.assign(g.oc, 0.f);
  if (bias) std::copy(bias, bias + g.oc, bias_.begin());
}

std::size_t WinogradF43::thread_floats() const {
  const std::size_t rows = max_chunk_ + rows_ - 1;
  return 36 * (position_stride(rows * g_.ic) + position_stride(rows * g_.oc));
}

std::size_t WinogradF43::scratch_bytes(int threads) const {
  const std::size_t tiles = tiles_;
  if (split_ == Split::Positions)
    return sizeof(float) * 36 * (position_stride(tiles * g_.ic) + position_stride(tiles * g_.oc));
  return sizeof(float) * thread_floats() * std::max(1, threads);
}

void WinogradF43::run(const float* src, float* dst) {
  const int threads = omp_get_max_threads();
  if (own_threads_ < threads) {
    own_scratch_ = aligned_block(scratch_bytes(threads));
    own_threads_ = threads;
  }
  run(src, dst, own_scratch_.get(), threads);
}

void WinogradF43::run(const float* src, float* dst, void* scratch, int max_threads, const std::vector<ByteSpan>* prefetch) {
  if (split_ == Split::Positions) return run_by_positions(src, dst, static_cast<float*>(scratch), max_threads, prefetch);
  // Every thread gets at least half a register tile of rows (DenseNet's 14x14
  // maps: 16 tiles, 2 threads of 8 were faster than 1 thread of 16).
  const int threads = std::max(1, std::min({omp_get_max_threads(), max_threads, tiles_ / (rows_ / 2)}));
  const float* u = static_cast<const float*>(u_.get());
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    const int begin = static_cast<int>(static_cast<long>(tiles_) * t / n);
    const int count = static_cast<int>(static_cast<long>(tiles_) * (t + 1) / n) - begin;
    float* v = static_cast<float*>(scratch) + thread_floats() * t;
    float* m = v + 36 * position_stride(static_cast<std::size_t>(max_chunk_ + rows_ - 1) * g_.ic);
    // Chunks of max_chunk_ tiles; the last one also takes the rows that do
    // not fill a register tile, so each thread runs at most one partial tile.
    // The first chunk fetches U while it transforms its input: inside a
    // network the weights come from memory, and the GEMM would wait for them.
    const int chunks = std::max(1, count / max_chunk_);
    const long calls = static_cast<long>(chunks) * 36 * ((g_.oc + 2 * g_.block - 1) / (2 * g_.block)) *
                       ((count / chunks + rows_ - 1) / rows_);
    PrefetchCursor pf(prefetch, t, n, calls);
    for (int t0 = begin, left = count; left > 0;) {
      const int T = left < max_chunk_ + rows_ ? left : max_chunk_;
      fns_->chunk(g_, tiles_w_, t0, T, src, u, t0 == begin, bias_.data(), lo_, hi_, v, m, dst, &pf);
      t0 += T, left -= T;
    }
  }
}

void WinogradF43::run_by_positions(const float* src, float* dst, float* scratch, int max_threads,
                                   const std::vector<ByteSpan>* prefetch) {
  const int threads = std::max(1, std::min(omp_get_max_threads(), max_threads));
  const float* u = static_cast<const float*>(u_.get());
  const std::size_t ic = g_.ic, oc = g_.oc, tiles = tiles_;
  const std::size_t vs = position_stride(tiles * ic), ms = position_stride(tiles * oc);
  float* v = scratch;  // V[36][tiles][ic]
  float* m = scratch + 36 * vs;  // M[36][tiles][oc]
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    const int tile0 = static_cast<int>(tiles_ * static_cast<long>(t) / n);
    const int count = static_cast<int>(tiles_ * static_cast<long>(t + 1) / n) - tile0;
    const int pos0 = 36 * t / n, pos1 = 36 * (t + 1) / n;
    // The thread's first positions of U come into L2 while it transforms.
    const float* pf = u + pos0 * ic * oc;
    const std::size_t pf_bytes = count > 0 ? std::min<std::size_t>(sizeof(float) * (pos1 - pos0) * ic * oc, 1 << 20) : 0;
    fns_->input(g_, tiles_w_, tile0, count, vs, src, v + tile0 * ic, pf, pf_bytes);
#pragma omp barrier
    PrefetchCursor next(prefetch, t, n,
                        static_cast<long>(pos1 - pos0) * ((g_.oc + 2 * g_.block - 1) / (2 * g_.block)) * ((tiles_ + rows_ - 1) / rows_));
    for (int pos = pos0; pos < pos1; ++pos)
      fns_->gemm(v + pos * vs, u + pos * ic * oc, m + pos * ms, g_.ic, g_.oc, tiles_, &next);
#pragma omp barrier
    fns_->output(g_, tiles_w_, tile0, count, ms, m + tile0 * oc, bias_.data(), lo_, hi_, dst);
  }
}

}  // namespace vinfer::cpu
