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
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (block == 8 && avx2) return winograd_chunk_avx2;
  if (block == 16 && avx512) return winograd_chunk_avx512;
  return nullptr;
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
  // Two register tiles of rows per chunk (the GEMM's B then serves both),
  // one on small maps, where a 14x14 map's 16 tiles would waste a third of 24.
  const int rows = g.block == 16 ? 12 : 6;
  tiles_per_chunk_ = tiles_ >= 16 * rows ? 2 * rows : rows;
  // U = G g G^T per channel pair, in double, stored [pos][ic][oc].
  static const double G[6][3] = {{0.25, 0, 0},           {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                 {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
  u_.assign(static_cast<std::size_t>(36) * g.ic * g.oc, 0.f);
  for (int o = 0; o < g.oc; ++o)
    for (int i = 0; i < g.ic; ++i) {
      const float* k = weights + (static_cast<std::size_t>(o) * g.ic + i) * 9;
      double gg[6][3];
      for (int a = 0; a < 6; ++a)
        for (int c = 0; c < 3; ++c) gg[a][c] = G[a][0] * k[c] + G[a][1] * k[3 + c] + G[a][2] * k[6 + c];
      for (int a = 0; a < 6; ++a)
        for (int b = 0; b < 6; ++b) {
          const double v = gg[a][0] * G[b][0] + gg[a][1] * G[b][1] + gg[a][2] * G[b][2];
          u_[(static_cast<std::size_t>(a * 6 + b) * g.ic + i) * g.oc + o] = static_cast<float>(v);
        }
    }
  bias_.assign(g.oc, 0.f);
  if (bias) std::copy(bias, bias + g.oc, bias_.begin());
  scratch_.resize(std::max(1, omp_get_max_threads()));
  for (auto& s : scratch_) s.resize(static_cast<std::size_t>(36) * tiles_per_chunk_ * (g.ic + g.oc));
}

void WinogradF43::run(const float* src, float* dst) {
  const int T = tiles_per_chunk_;
  const int chunks = (tiles_ + T - 1) / T;
  const int threads = std::min(omp_get_max_threads(), chunks);
  if (static_cast<int>(scratch_.size()) < threads) {
    scratch_.resize(threads);
    for (auto& s : scratch_) s.resize(static_cast<std::size_t>(36) * T * (g_.ic + g_.oc));
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int chunk = 0; chunk < chunks; ++chunk) {
    float* v = scratch_[omp_get_thread_num()].data();
    float* m = v + static_cast<std::size_t>(36) * T * g_.ic;
    chunk_(g_, tiles_w_, tiles_, chunk * T, T, src, u_.data(), bias_.data(), lo_, hi_, v, m, dst);
  }
}

}  // namespace vinfer::cpu
