// int8 Winograd F(2x2, 3x3) (winograd_u8.hpp): the weights' transform and
// packing, and the kernels' arithmetic in plain C++.
#include "cpu/winograd_u8.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "util/cpu_features.hpp"

namespace vinfer::cpu {
namespace {

std::size_t round64(std::size_t bytes) { return (bytes + 63) / 64 * 64; }

// A 4x4 tile's V = B^T d B, B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1].
void bt(const int d[4], int r[4]) { r[0] = d[0] - d[2], r[1] = d[1] + d[2], r[2] = d[2] - d[1], r[3] = d[1] - d[3]; }

// Position p's quantization of a tile: multiplier m (0: the values as they
// are) for v -> round(v x m / 2^15), as VPMULHRSW rounds.
int multiplier(int largest) { return largest <= 127 ? 0 : 127 * 32768 / largest; }
int quantize(int v, int m) { return m ? (v * m + 16384) >> 15 : v; }
float row_scale(float s_in, int m) { return m ? s_in * (32768.f / static_cast<float>(m)) : s_in; }

}  // namespace

std::size_t WinogradU8Plan::thread_bytes() const {
  const auto ic = static_cast<std::size_t>(g.ic), t = static_cast<std::size_t>(chunk);
  return round64(16 * ic * sizeof(std::int16_t)) + round64(16 * t * ic) + round64(16 * t * sizeof(float)) +
         round64(16 * t * 32 * sizeof(std::int32_t));
}

bool WinogradU8::supports(const WinogradU8Geometry& g) {
  return detail::cpu_features().avx512_vnni && g.ic > 0 && g.oc > 0 && g.ic % 32 == 0 && g.oc % 32 == 0 && g.h >= 2 &&
         g.w >= 2;
}

WinogradU8::WinogradU8(const WinogradU8Geometry& g, const float* weights, const float* bias, float s_in, float s_out,
                       bool relu) {
  WinogradU8Plan& p = plan_;
  p.g = g;
  p.tiles_w = (g.w + 1) / 2;
  p.per_image = p.tiles_w * ((g.h + 1) / 2);
  // The chunk's transformed input (16 x chunk x ic bytes) within about 384 KiB of L2.
  p.chunk = std::clamp(384 * 1024 / (16 * g.ic), 12, 96);
  p.s_in = s_in;
  p.inv_s_out = s_out > 0 ? 1.f / s_out : 0.f;
  p.relu = relu;

  const int IC = g.ic, OC = g.oc, panels = OC / 32;
  static const float G[4][3] = {{1, 0, 0}, {.5f, .5f, .5f}, {.5f, -.5f, .5f}, {0, 0, 1}};
  su_.assign(static_cast<std::size_t>(16) * OC, 1.f);
  neg_comp_.assign(static_cast<std::size_t>(16) * OC, 0);
  u_bytes_ = static_cast<std::size_t>(16) * IC * OC;
  u_ = aligned_block(u_bytes_);
  auto* u = static_cast<std::int8_t*>(u_.get());
  // Output channel by output channel (on the load's threads: VGG19's 3x3s
  // are 35 M transformed weights): its U[p][k] in float, then each
  // position's column scaled to +-127.
#pragma omp parallel
  {
    std::vector<float> uf(static_cast<std::size_t>(16) * IC);
    std::vector<std::int8_t> q8(static_cast<std::size_t>(IC));
#pragma omp for schedule(static)
    for (int o = 0; o < OC; ++o) {
      for (int k = 0; k < IC; ++k) {
        const float* w = weights + (static_cast<std::size_t>(o) * IC + k) * 9;
        float gw[4][3];  // G g
        for (int i = 0; i < 4; ++i)
          for (int b = 0; b < 3; ++b) gw[i][b] = G[i][0] * w[b] + G[i][1] * w[3 + b] + G[i][2] * w[6 + b];
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j)
            uf[static_cast<std::size_t>(i * 4 + j) * IC + k] = gw[i][0] * G[j][0] + gw[i][1] * G[j][1] + gw[i][2] * G[j][2];
      }
      for (int q = 0; q < 16; ++q) {
        const float* col = uf.data() + static_cast<std::size_t>(q) * IC;
        float largest = 0;
        for (int k = 0; k < IC; ++k) largest = std::max(largest, std::fabs(col[k]));
        const float s = largest > 0 ? largest / 127.f : 1.f, inv = 1.f / s;
        su_[static_cast<std::size_t>(q) * OC + o] = s;
        std::int32_t sum = 0;
        for (int k = 0; k < IC; ++k) {
          const float v = std::clamp(col[k] * inv, -127.f, 127.f);  // (rounded half away from zero, branch-free)
          q8[static_cast<std::size_t>(k)] = static_cast<std::int8_t>(static_cast<int>(v + std::copysign(0.5f, v)));
          sum += q8[static_cast<std::size_t>(k)];
        }
        // [q][panel][k / 4][32][4]
        std::int8_t* at = u + (static_cast<std::size_t>(q) * panels + o / 32) * IC * 32 + (o % 32) * 4;
        for (int k = 0; k < IC; k += 4) std::memcpy(at + k * 32, q8.data() + k, 4);
        neg_comp_[static_cast<std::size_t>(q) * OC + o] = -128 * sum;
      }
    }
  }
  bias_.assign(static_cast<std::size_t>(OC), 0.f);
  if (bias) std::copy(bias, bias + OC, bias_.begin());
  p.u = u;
  p.neg_comp = neg_comp_.data();
  p.su = su_.data();
  p.bias = bias_.data();
}

void winograd_u8_run_plain(const WinogradU8Plan& p, const std::uint8_t* src, void* dst, int images) {
  const WinogradU8Geometry& g = p.g;
  const int IC = g.ic, OC = g.oc, panels = OC / 32;
  std::vector<int> v(static_cast<std::size_t>(16) * IC);
  std::vector<int> a(static_cast<std::size_t>(16) * IC);  // the quantized V, +128
  for (int t = 0; t < images * p.per_image; ++t) {
    const int n = t / p.per_image, ti = t % p.per_image;
    const int y0 = (ti / p.tiles_w) * 2 - 1, x0 = (ti % p.tiles_w) * 2 - 1;
    const std::uint8_t* img = src + static_cast<std::size_t>(n) * p.src_stride();
    for (int c = 0; c < IC; ++c) {
      int d[4][4], r[4][4];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          const int y = y0 + i, x = x0 + j;
          d[i][j] = y >= 0 && y < g.h && x >= 0 && x < g.w ? img[(static_cast<std::size_t>(y) * g.w + x) * IC + c] : 0;
        }
      for (int i = 0; i < 4; ++i) bt(d[i], r[i]);
      for (int j = 0; j < 4; ++j) {
        const int col[4] = {r[0][j], r[1][j], r[2][j], r[3][j]};
        int out[4];
        bt(col, out);
        for (int i = 0; i < 4; ++i) v[static_cast<std::size_t>(i * 4 + j) * IC + c] = out[i];
      }
    }
    float rs[16];
    for (int q = 0; q < 16; ++q) {
      int largest = 0;
      for (int c = 0; c < IC; ++c) largest = std::max(largest, std::abs(v[static_cast<std::size_t>(q) * IC + c]));
      const int m = multiplier(largest);
      rs[q] = row_scale(p.s_in, m);
      for (int c = 0; c < IC; ++c) a[static_cast<std::size_t>(q) * IC + c] = quantize(v[static_cast<std::size_t>(q) * IC + c], m) + 128;
    }
    for (int o = 0; o < OC; ++o) {
      float m[16];
      for (int q = 0; q < 16; ++q) {
        std::int32_t acc = p.neg_comp[static_cast<std::size_t>(q) * OC + o];
        for (int k = 0; k < IC; ++k)
          acc += a[static_cast<std::size_t>(q) * IC + k] *
                 p.u[((static_cast<std::size_t>(q) * panels + o / 32) * (IC / 4) + k / 4) * 128 + (o % 32) * 4 + k % 4];
        m[q] = static_cast<float>(acc) * p.su[static_cast<std::size_t>(q) * OC + o] * rs[q];
      }
      float r[4][2], y[2][2];  // A^T M, then (A^T M) A; A^T = [1 1 1 0; 0 1 -1 -1]
      for (int i = 0; i < 4; ++i) {
        r[i][0] = m[i * 4] + m[i * 4 + 1] + m[i * 4 + 2];
        r[i][1] = m[i * 4 + 1] - m[i * 4 + 2] - m[i * 4 + 3];
      }
      for (int j = 0; j < 2; ++j) {
        y[0][j] = r[0][j] + r[1][j] + r[2][j];
        y[1][j] = r[1][j] - r[2][j] - r[3][j];
      }
      const int oy = (ti / p.tiles_w) * 2, ox = (ti % p.tiles_w) * 2;
      for (int i = 0; i < 2 && oy + i < g.h; ++i)
        for (int j = 0; j < 2 && ox + j < g.w; ++j) {
          float out = y[i][j] + p.bias[o];
          if (p.relu) out = std::max(out, 0.f);
          const std::size_t at = static_cast<std::size_t>(n) * p.dst_stride() +
                                 (static_cast<std::size_t>(oy + i) * g.w + ox + j) * OC + o;
          if (p.inv_s_out > 0) {
            const float s = std::min(std::max(out * p.inv_s_out, 0.f), 255.f);
            static_cast<std::uint8_t*>(dst)[at] = static_cast<std::uint8_t>(std::nearbyint(s));
          } else {
            static_cast<float*>(dst)[at] = out;
          }
        }
    }
  }
}

}  // namespace vinfer::cpu
