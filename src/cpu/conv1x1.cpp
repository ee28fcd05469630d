// The 1x1 convolution with a pre-activation: what runs on any CPU (support
// check, weight packing at load, the split among threads). Kernels in
// conv1x1_impl.hpp, compiled per ISA in simd_avx2.cpp / simd_avx512.cpp.
#include "cpu/conv1x1.hpp"

#include <omp.h>

#include <algorithm>
#include <limits>

namespace vinfer::cpu {

namespace {
Conv1x1RowsFn rows_fn(int block) {
  if (!simd_block_runs(block)) return nullptr;
  return block == 8 ? conv1x1_rows_avx2 : conv1x1_rows_avx512;
}
}  // namespace

bool in_h_ok(const Conv1x1Geometry& g) { return g.in_h > 0 && g.in_w > 0; }

bool Conv1x1Pre::supports(const Conv1x1Geometry& g) {
  const auto out_size = [&](int in) { return (in + 2 * g.pad - g.kernel) / g.stride + 1; };
  const bool map_ok = !g.gathers() || (g.ow > 0 && g.hw % g.ow == 0 && in_h_ok(g) && out_size(g.in_w) == g.ow &&
                                       out_size(g.in_h) == g.hw / g.ow);
  return rows_fn(g.block) && g.ic > 0 && g.oc > 0 && g.hw > 0 &&
         (g.stride == 1 || g.stride == 2) && (g.kernel == 1 || g.kernel == 3) && g.pad >= 0 && g.pad < g.kernel &&
         map_ok;
}

Conv1x1Pre::Conv1x1Pre(const Conv1x1Geometry& g, const float* weights, const float* bias, const PreActivation& pre,
                       float lo, float hi, OutAct act)
    : g_(g), pre_lo_(pre.per_image ? -std::numeric_limits<float>::infinity() : pre.lo), lo_(lo), hi_(hi), act_(act) {
  const int oc = g.oc;
  g_.oc = (oc + g.block - 1) / g.block * g.block;
  own_next_ = prefetch_own_weights();
  rows_fn_ = rows_fn(g.block);
  rows_ = g.block == 16 ? 12 : 6;
  block_px_ = kTiles * rows_;
  // A small map (7x7) is one block where a thread's share of the weights
  // (two threads taking half the output channels each) is more than half an
  // L2 (1 MiB here), so that each thread reads it once, not once per block:
  // ResNet50's layer4 1x1s read 1-2 MiB per thread (ResNet50 0.97x).
  // DenseNet's block 4 (up to 0.5 MiB per thread) was 0.5 % slower so.
  const double share = static_cast<double>(g.depth()) * g.oc * sizeof(float) / 2;
  if (g.hw <= kMaxBlockPixels && share > (512 << 10)) block_px_ = std::max(block_px_, g.hw);
  static_assert(kTiles * 12 <= kMaxBlockPixels);
  const int L = g.block, group = 2 * L;
  const int K = g.depth(), taps = g.kernel * g.kernel, icb = g.ic_blocks();
  w_ = aligned_block(sizeof(float) * K * g_.oc);
  float* w = static_cast<float*>(w_.get());
  const int groups = (g_.oc + group - 1) / group;
#pragma omp parallel for collapse(2) schedule(static)  // (loading: on every thread, rows written in order)
  for (int gi = 0; gi < groups; ++gi)
    for (int k = 0; k < K; ++k) {  // k = tap x ic_blocks + channel; OIHW holds [o][channel][tap]
      const int col0 = gi * group, width = std::min(group, g_.oc - col0), ch = k % icb;
      float* row = w + static_cast<std::size_t>(col0) * K + static_cast<std::size_t>(k) * width;
      for (int o = col0; o < col0 + width; ++o)
        row[o - col0] = ch < g.ic && o < oc ? weights[(static_cast<std::size_t>(o) * g.ic + ch) * taps + k / icb] : 0.f;
    }
  bias_.assign(g_.oc, 0.f);
  if (bias) std::copy(bias, bias + oc, bias_.begin());
  if (pre.per_image) {
    shift_.assign(icb, 0.f);
  } else if (pre.scale) {
    scale_.assign(icb, 0.f), shift_.assign(icb, 0.f);
    std::copy(pre.scale, pre.scale + g.ic, scale_.begin()), std::copy(pre.shift, pre.shift + g.ic, shift_.begin());
  }
}

std::size_t Conv1x1Pre::scratch_bytes(int threads) const {
  const std::size_t per_thread = (static_cast<std::size_t>(block_px_) * packed_ld(g_.depth()) + 15) / 16 * 16;
  return sizeof(float) * per_thread * std::max(1, threads);
}

void Conv1x1Pre::run(const float* src, float* dst, void* scratch, int max_threads, const std::vector<ByteSpan>* prefetch,
                     const float* residual, int images, std::size_t src_image, std::size_t dst_image,
                     const float* scale, std::size_t scale_image) const {
  const int threads = std::max(1, std::min(omp_get_max_threads(), max_threads));
  const int block_px = block_px_;
  const int blocks = (g_.hw + block_px - 1) / block_px;  // of up to kTiles register tiles
  const int groups = (g_.oc + 2 * g_.block - 1) / (2 * g_.block);  // of 2 vectors of output channels
  // Many pixels: each thread takes an equal share of them and all channels.
  // Few (7x7 maps): each thread takes all pixels and a share of the output
  // channels, so that it reads only its share of the weights.
  const bool by_pixels = blocks >= 2 * threads || groups < threads;
  const std::size_t per_thread = (static_cast<std::size_t>(block_px) * packed_ld(g_.depth()) + 15) / 16 * 16;
  Conv1x1Call call;
  call.src = src, call.w = static_cast<const float*>(w_.get()), call.bias = bias_.data();
  if (!scale_.empty()) call.pre_scale = scale_.data(), call.pre_shift = shift_.data();
  call.pre_lo = pre_lo_, call.lo = lo_, call.hi = hi_, call.act = act_, call.res = residual, call.dst = dst;
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), n = omp_get_num_threads();
    float* packed = static_cast<float*>(scratch) + per_thread * t;
    int p0 = 0, p1 = g_.hw, oc0 = 0, oc1 = g_.oc;
    if (by_pixels) {
      p0 = static_cast<int>(static_cast<long>(g_.hw) * t / n), p1 = static_cast<int>(static_cast<long>(g_.hw) * (t + 1) / n);
    } else {
      // In vectors, not groups of two: MobileNet's 160 outputs (5 groups)
      // split 3:2 left one thread idle a sixth of the time.
      const int vectors = g_.oc / g_.block;
      oc0 = vectors * t / n * g_.block, oc1 = vectors * (t + 1) / n * g_.block;
    }
    // Blocks of equal pixel counts (+-1), so that no block is a short tail.
    const int count = p1 - p0, nb = (count + block_px - 1) / block_px;
    const long calls = nb > 0 ? static_cast<long>(nb) * ((count / nb + rows_ - 1) / rows_) *
                                    ((oc1 - oc0 + 2 * g_.block - 1) / (2 * g_.block))
                              : 0;
    PrefetchCursor pf(prefetch, t, n, calls * images);
    // Each block reads the thread's weights again: from L2 after the first
    // where they fit in half of it, so only the first fetches its next panels.
    const bool refetch = sizeof(float) * static_cast<std::size_t>(g_.depth()) * (oc1 - oc0) > kOwnFetchBytes;
    for (int i = 0; i < images; ++i) {
      Conv1x1Call c = call;
      c.src += i * src_image, c.dst += i * dst_image;
      if (scale) c.pre_scale = scale + i * scale_image, c.pre_shift = shift_.data();
      if (c.res) c.res += i * dst_image;
      for (int b = 0; b < nb && oc0 < oc1; ++b) {
        const int b0 = p0 + count * b / nb, b1 = p0 + count * (b + 1) / nb;
        pf.own_next = own_next_ && ((b == 0 && i == 0) || refetch);
        rows_fn_(g_, c, b0, b1 - b0, oc0, oc1, packed, &pf);
      }
    }
  }
}

long Conv1x1Pre::tiles(int pixels, int channels) const {
  return static_cast<long>((pixels + rows_ - 1) / rows_) * ((channels + 2 * g_.block - 1) / (2 * g_.block));
}

void Conv1x1Pre::run_pixels(const float* src, float* dst, const float* residual, int p0, int p1, int oc0, int oc1,
                            float* packed, PrefetchCursor* pf) const {
  Conv1x1Call c;
  c.src = src, c.w = static_cast<const float*>(w_.get()), c.bias = bias_.data();
  if (!scale_.empty()) c.pre_scale = scale_.data(), c.pre_shift = shift_.data();
  c.pre_lo = pre_lo_, c.lo = lo_, c.hi = hi_, c.act = act_, c.res = residual, c.dst = dst;
  const int count = p1 - p0, nb = (count + block_px_ - 1) / block_px_;
  for (int b = 0; b < nb; ++b) {
    const int b0 = p0 + count * b / nb, b1 = p0 + count * (b + 1) / nb;
    rows_fn_(g_, c, b0, b1 - b0, oc0, oc1, packed, pf);
  }
}

}  // namespace vinfer::cpu
