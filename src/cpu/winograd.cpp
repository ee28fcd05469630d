// Winograd F(4x4, 3x3): what runs on any CPU (the support check, the weight
// transform at load, the split of the image among threads). The kernels are
// in winograd_impl.hpp, compiled per ISA in winograd_avx2.cpp / _avx512.cpp.
#include <omp.h>

#include <algorithm>

#include "cpu/winograd.hpp"

namespace vinfer::cpu {

namespace {
// The kernel for a channel block: 8 with AVX2 + FMA, 16 with AVX-512.
WinogradChunkFn chunk_fn(int block) {
  if (!simd_block_runs(block)) return nullptr;
  return block == 8 ? winograd_chunk_avx2 : winograd_chunk_avx512;
}
}  // namespace

bool WinogradF43::supports(const WinogradGeometry& g) {
  return chunk_fn(g.block) && g.ic > 0 && g.oc > 0 && g.ic % g.block == 0 &&
         g.oc % g.block == 0 && g.pad_t >= 0 && g.pad_t <= 2 && g.pad_l >= 0 && g.pad_l <= 2 && g.oh > 0 && g.ow > 0 &&
         g.oh <= g.h + 2 * 2 - 2 && g.ow <= g.w + 2 * 2 - 2;
}

WinogradF43::WinogradF43(const WinogradGeometry& g, const float* weights, const float* bias, float lo, float hi)
    : g_(g), lo_(lo), hi_(hi) {
  tiles_w_ = (g.ow + 3) / 4;
  tiles_ = tiles_w_ * ((g.oh + 3) / 4);
  chunk_ = chunk_fn(g.block);
  rows_ = g.block == 16 ? 12 : 6;
  max_chunk_ = 2 * rows_;  // the GEMM's B (a slice of U) then serves two register tiles
  // U = G g G^T per channel pair, in double, stored [pos][ic][oc].
  static const double G[6][3] = {{0.25, 0, 0},           {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                 {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
  u_ = aligned_block(sizeof(float) * 36 * g.ic * g.oc);
  float* u = static_cast<float*>(u_.get());
  for (int o = 0; o < g.oc; ++o)
    for (int i = 0; i < g.ic; ++i) {
      const float* k = weights + (static_cast<std::size_t>(o) * g.ic + i) * 9;
      double gg[6][3];
      for (int a = 0; a < 6; ++a)
        for (int c = 0; c < 3; ++c) gg[a][c] = G[a][0] * k[c] + G[a][1] * k[3 + c] + G[a][2] * k[6 + c];
      for (int a = 0; a < 6; ++a)
        for (int b = 0; b < 6; ++b) {
          const double v = gg[a][0] * G[b][0] + gg[a][1] * G[b][1] + gg[a][2] * G[b][2];
          u[(static_cast<std::size_t>(a * 6 + b) * g.ic + i) * g.oc + o] = static_cast<float>(v);
        }
    }
  bias_.assign(g.oc, 0.f);
  if (bias) std::copy(bias, bias + g.oc, bias_.begin());
}

std::size_t WinogradF43::thread_floats() const {
  const std::size_t floats = static_cast<std::size_t>(36) * (max_chunk_ + rows_ - 1) * (g_.ic + g_.oc);
  return (floats + 15) / 16 * 16;  // whole cache lines
}

std::size_t WinogradF43::scratch_bytes(int threads) const {
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

void WinogradF43::run(const float* src, float* dst, void* scratch, int max_threads) {
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
    float* m = v + static_cast<std::size_t>(36) * (max_chunk_ + rows_ - 1) * g_.ic;
    // Chunks of max_chunk_ tiles; the last one also takes the rows that do
    // not fill a register tile, so each thread runs at most one partial tile.
    // The first chunk fetches U while it transforms its input: inside a
    // network the weights come from memory, and the GEMM would wait for them.
    for (int t0 = begin, left = count; left > 0;) {
      const int T = left < max_chunk_ + rows_ ? left : max_chunk_;
      chunk_(g_, tiles_w_, t0, T, src, u, t0 == begin, bias_.data(), lo_, hi_, v, m, dst);
      t0 += T, left -= T;
    }
  }
}

}  // namespace vinfer::cpu
