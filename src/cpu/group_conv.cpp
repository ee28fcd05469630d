// Narrow-group convolutions (group_conv.hpp): what runs on any CPU (the
// support check, the weight packing at load, the split of the rows among
// threads). The band kernel is in group_conv_impl.hpp, compiled per ISA in
// simd_avx2.cpp / simd_avx512.cpp.
#include "cpu/group_conv.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace vinfer::cpu {

bool GroupConv::supports(const GroupConvGeometry& g) {
  if (!simd_block_runs(g.block) || g.c <= 0 || g.k <= 0 || g.k > kMaxGroupConvKernel || g.stride <= 0 || g.oh <= 0 ||
      g.ow <= 0 || g.pad_t < 0 || g.pad_l < 0 || g.pad_t >= g.k || g.pad_l >= g.k)
    return false;
  if (g.gw != 1 && g.gw != 2 && g.gw != 4 && g.gw != 8) return false;
  if (g.block % g.gw != 0 || g.c % g.gw != 0) return false;
  // Every output's window touches the input (an output on padding alone
  // would be the bias: the band's row bounds assume at least one tap).
  return (g.oh - 1) * g.stride - g.pad_t < g.h && (g.ow - 1) * g.stride - g.pad_l < g.w;
}

GroupConv::GroupConv(const GroupConvGeometry& g, const float* weights, const float* bias, float lo, float hi, OutAct act)
    : g_(g), lo_(lo), hi_(hi), act_(act), rotated_(rotated_form(g)) {
  const int B = g.block, kk = g.k * g.k, gw = g.gw;
  w_ = aligned_block(packed_weight_bytes());
  bias_ = aligned_block(sizeof(float) * static_cast<std::size_t>(g.blocks()) * B);
  auto* w = static_cast<float*>(w_.get());
  auto* b = static_cast<float*>(bias_.get());
  std::fill(w, w + packed_weight_bytes() / sizeof(float), 0.f);
  for (int c = 0; c < g.c; ++c) {
    const int blk = c / B, lane = c % B;
    if (rotated_) {
      // input lane (group G, member q), partial r: the weight of output
      // G gw + (q - r) mod gw for input member q
      const int q = lane % gw;
      for (int r = 0; r < gw; ++r) {
        const int o = blk * B + lane / gw * gw + (q - r + gw) % gw;
        for (int t = 0; t < kk; ++t)
          w[((static_cast<std::size_t>(blk) * kk + t) * gw + r) * B + lane] = weights[(static_cast<std::size_t>(o) * gw + q) * kk + t];
      }
    } else {
      for (int t = 0; t < kk; ++t)
        for (int j = 0; j < gw; ++j)
          w[((static_cast<std::size_t>(blk) * kk + t) * gw + j) * B + lane] = weights[(static_cast<std::size_t>(c) * gw + j) * kk + t];
    }
    if (bias) b[c] = bias[c];
  }
  for (int j = 0; j < gw; ++j)
    for (int lane = 0; lane < B; ++lane)
      perm_[j * B + lane] = rotated_ ? lane / gw * gw + (lane % gw + j) % gw : lane / gw * gw + j;
}

// Per thread: one ring, whole cache lines (the rotated form reads its
// input in place).
static std::size_t ring_bytes(const GroupConvGeometry& g) {
  return rotated_form(g) ? 0 : (sizeof(float) * ring_floats(g) + 63) / 64 * 64;
}

std::size_t GroupConv::scratch_bytes(int threads) const { return ring_bytes(g_) * std::max(1, threads); }
std::size_t GroupConv::ring_floats_per_thread() const { return ring_bytes(g_) / sizeof(float); }

void GroupConv::run(const float* src, float* dst, void* scratch, int threads, int images, std::size_t src_image,
                    std::size_t dst_image) const {
  const int B = g_.block, blocks = g_.blocks();
  const std::size_t in_plane = static_cast<std::size_t>(g_.h) * g_.w * B, out_plane = static_cast<std::size_t>(g_.oh) * g_.ow * B;
  if (src_image == 0) src_image = in_plane * blocks;
  if (dst_image == 0) dst_image = out_plane * blocks;
  threads = std::max(1, threads);
  // Each image in bands of rows, each band all channel blocks: as many
  // bands as give each thread about four items (each band fills its ring
  // once: k - stride rows more than it computes).
  const std::int64_t per_image = blocks;
  const int bands = static_cast<int>(std::clamp<std::int64_t>(
      (4 * threads + per_image * images - 1) / (per_image * images), 1, g_.oh));
  const int band = (g_.oh + bands - 1) / bands;
  const std::int64_t items = static_cast<std::int64_t>(images) * bands * blocks;
#pragma omp parallel num_threads(threads)
  {
    float* ring = reinterpret_cast<float*>(static_cast<char*>(scratch) + ring_bytes(g_) * omp_get_thread_num());
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < items; ++i) {
      const int blk = static_cast<int>(i % blocks), oy0 = static_cast<int>(i / blocks % bands) * band;
      if (oy0 >= g_.oh) continue;
      const std::size_t image = static_cast<std::size_t>(i / blocks / bands);
      run_band(src + image * src_image, dst + image * dst_image, blk, oy0, std::min(g_.oh, oy0 + band), ring);
    }
  }
}

void GroupConv::run_band(const float* src, float* dst, int blk, int oy0, int oy1, float* ring) const {
  const int B = g_.block, filter = g_.k * g_.k * g_.gw * B;
  GroupConvBand r;
  r.g = &g_;
  r.src = src + blk * static_cast<std::size_t>(g_.h) * g_.w * B;
  r.w = static_cast<const float*>(w_.get()) + static_cast<std::size_t>(blk) * filter;
  r.bias = static_cast<const float*>(bias_.get()) + static_cast<std::size_t>(blk) * B;
  r.perm = perm_;
  r.rotated = rotated_;
  r.lo = lo_, r.hi = hi_, r.act = act_;
  r.valid = std::min(B, g_.c - blk * B);
  r.oy0 = oy0, r.oy1 = oy1;
  r.dst = dst + (blk * static_cast<std::size_t>(g_.oh) + oy0) * g_.ow * B;
  r.ring = ring;
  (B == 16 ? group_conv_band_avx512 : group_conv_band_avx2)(r);
}

}  // namespace vinfer::cpu
