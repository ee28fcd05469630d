// Winograd F(4x4, 3x3): what runs on any CPU (the support check and the
// weight transform at load). The kernels are in winograd_avx2.cpp.
#include <omp.h>

#include <algorithm>

#include "cpu/winograd.hpp"

namespace vinfer::cpu {

bool WinogradF43::supports(const WinogradGeometry& g) {
  static const bool cpu = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return cpu && (g.block == 8 || g.block == 16) && g.ic > 0 && g.oc > 0 && g.ic % g.block == 0 &&
         g.oc % g.block == 0 && g.pad_t >= 0 && g.pad_t <= 2 && g.pad_l >= 0 && g.pad_l <= 2 && g.oh > 0 && g.ow > 0 &&
         g.oh <= g.h + 2 * 2 - 2 && g.ow <= g.w + 2 * 2 - 2;
}

WinogradF43::WinogradF43(const WinogradGeometry& g, const float* weights, const float* bias, float lo, float hi)
    : g_(g), lo_(lo), hi_(hi) {
  tiles_w_ = (g.ow + 3) / 4;
  tiles_ = tiles_w_ * ((g.oh + 3) / 4);
  // Small maps (14x14: 16 tiles) would waste a third of a 12-tile chunk.
  tiles_per_chunk_ = tiles_ >= 96 ? 12 : 6;
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

}  // namespace vinfer::cpu
