// Internal: the narrow-group convolution's band kernel (group_conv.hpp)
// written once over an ISA's vector type (L channels of one pixel, one
// channel block), included by simd_avx2.cpp and simd_avx512.cpp.
#pragma once
#include <algorithm>
#include <type_traits>

#include "cpu/group_conv.hpp"

namespace vinfer::cpu {

template <class I>
struct GroupConvKernels {
  using V = typename I::V;
  static constexpr int L = I::L, T = kGroupConvTile;
  // The loop order of a tile's multiply-adds: by group member j, a row of
  // inputs then its taps (AVX-512, stride 2 or 8 channels per group), or by
  // tap. Measured (bench_conv, 2 threads): by member, ResNeXt's stride-2
  // 0.32 ms against 0.35-0.60 and 8 per group at 28x28 0.19 against 0.21;
  // by tap, 4 per group at 56x56 0.19 against 0.30-0.36.
  template <int K, int S, int GW>
  static constexpr bool kRowFirst = L == 16 && T + (T - 1) * S + K + 1 <= 32 && (S > 1 || GW > 4);

  template <OutAct A>
  static void store(const GroupConvBand& r, float* out, V v, V lo, V hi) {
    I::store(out, OutActs<I>::template apply<A>(v, lo, hi));
    if (r.valid < L) I::store(out, I::load_n(out, r.valid));  // the padding lanes zero
  }

  // Output pixels [ox, ox + n) of one row, n <= T, ox counted from the
  // strip's first, from the ring's rows (row[ky]: input row iy0 + ky). All
  // T are computed (the ring is wide enough), n stored at out. (Inputs as
  // the multiply-adds' memory operands: the T accumulators independent.)
  template <int K, int S, int GW, OutAct A>
  __attribute__((always_inline)) static void tile(const GroupConvBand& r, const float* const* row, int ox, int n,
                                                  float* out, V lo, V hi) {
    V acc[T];
    const V b = I::load(r.bias);
    for (int t = 0; t < T; ++t) acc[t] = b;
    for (int ky = 0; ky < K; ++ky) {
      const float* x = row[ky] + static_cast<std::ptrdiff_t>(ox) * S * GW * L;
      const float* f = r.w + ky * K * GW * L;
      if constexpr (kRowFirst<K, S, GW>) {
        for (int j = 0; j < GW; ++j) {
          V in[(T - 1) * S + K];
          for (int i = 0; i < (T - 1) * S + K; ++i) in[i] = I::load(x + (i * GW + j) * L);
          for (int kx = 0; kx < K; ++kx) {
            const V wv = I::load(f + (kx * GW + j) * L);
            for (int t = 0; t < T; ++t) acc[t] = I::fmadd(in[t * S + kx], wv, acc[t]);
          }
        }
      } else {
        for (int kx = 0; kx < K; ++kx)
          for (int j = 0; j < GW; ++j) {
            const V wv = I::load(f + (kx * GW + j) * L);
            for (int t = 0; t < T; ++t) acc[t] = I::fmadd(I::load(x + ((t * S + kx) * GW + j) * L), wv, acc[t]);
          }
      }
    }
    for (int t = 0; t < T; ++t)
      if (t < n) store<A>(r, out + t * L, acc[t], lo, hi);
  }

  // The same one pixel at a time, for a kernel size or stride without a
  // tile form.
  template <OutAct A>
  static void pixels(const GroupConvBand& r, const float* const* row, int ox, int n, float* out, V lo, V hi) {
    const GroupConvGeometry& g = *r.g;
    for (int p = 0; p < n; ++p) {
      V acc = I::load(r.bias);
      for (int ky = 0; ky < g.k; ++ky)
        for (int kx = 0; kx < g.k; ++kx)
          for (int j = 0; j < g.gw; ++j)
            acc = I::fmadd(I::load(row[ky] + ((static_cast<std::ptrdiff_t>(ox + p) * g.stride + kx) * g.gw + j) * L),
                           I::load(r.w + ((ky * g.k + kx) * g.gw + j) * L), acc);
      store<A>(r, out + p * L, acc, lo, hi);
    }
  }

  // Input row iy, columns [ix0, ix0 + ring_width) (zeros outside the map),
  // into its ring slot: each pixel's vector as gw permutations.
  template <int GW>
  static void fill(const GroupConvBand& r, int iy, int ix0, const typename I::Idx* idx) {
    const GroupConvGeometry& g = *r.g;
    const int width = ring_width(g), gw = GW ? GW : g.gw;
    float* slot = r.ring + static_cast<std::ptrdiff_t>(ring_slot(g, iy)) * width * gw * L;
    const bool in_map = iy >= 0 && iy < g.h;
    const int a = in_map ? std::clamp(-ix0, 0, width) : width, e = in_map ? std::clamp(g.w - ix0, a, width) : width;
    // (zeros by vector stores: these are a pixel or two, not worth a call)
    for (int i = 0; i < a * gw; ++i) I::store(slot + i * L, I::zero());
    for (int i = e * gw; i < width * gw; ++i) I::store(slot + i * L, I::zero());
    if (a == e) return;
    const float* x = r.src + (static_cast<std::ptrdiff_t>(iy) * g.w + ix0 + a) * L;  // column a
    for (int c = a; c < e; ++c) {
      const V v = I::load(x + (c - a) * L);
      for (int j = 0; j < gw; ++j) I::store(slot + (c * gw + j) * L, I::permute(v, idx[j]));
    }
  }

  template <int K, int S, int GW, OutAct A>
  static void band(const GroupConvBand& r) {
    const GroupConvGeometry& g = *r.g;
    const V lo = I::set1(r.lo), hi = I::set1(r.hi);
    const int gw = GW ? GW : g.gw, strip = strip_outputs(g);
    const std::ptrdiff_t row_floats = static_cast<std::ptrdiff_t>(ring_width(g)) * gw * L;
    typename I::Idx idx[8];
    for (int j = 0; j < gw; ++j) idx[j] = I::load_idx(r.perm + j * L);
    const float* row[kMaxGroupConvKernel];
    for (int sx = 0; sx < g.ow; sx += strip) {
      const int ix0 = sx * g.stride - g.pad_l, sn = std::min(strip, g.ow - sx);
      int next = r.oy0 * g.stride - g.pad_t;  // the next input row to fill
      for (int oy = r.oy0; oy < r.oy1; ++oy) {
        const int iy0 = oy * g.stride - g.pad_t;
        for (next = std::max(next, iy0); next < iy0 + g.k; ++next) fill<GW>(r, next, ix0, idx);
        for (int ky = 0; ky < g.k; ++ky) row[ky] = r.ring + ring_slot(g, iy0 + ky) * row_floats;
        float* out = r.dst + (static_cast<std::ptrdiff_t>(oy - r.oy0) * g.ow + sx) * L;
        for (int ox = 0; ox < sn; ox += T) {
          const int n = std::min(T, sn - ox);
          if constexpr (K == 0) pixels<A>(r, row, ox, n, out + ox * L, lo, hi);
          else tile<K, S, GW, A>(r, row, ox, n, out + ox * L, lo, hi);
        }
      }
    }
  }

  // Column ix0 + i of an input row x (starting at column ix0): zeros
  // outside the map where Edge (a masked load, which touches no memory).
  template <bool Edge>
  __attribute__((always_inline)) static V load_column(const float* x, int i, int ix0, int w) {
    if constexpr (Edge) return I::load_n(x + i * L, ix0 + i >= 0 && ix0 + i < w ? L : 0);
    else return I::load(x + i * L);
  }

  // The band's output rows in tiles of TW pixels, each computed by
  // tile(edge, iy0, ky0, ky1, ix0, n, out) from the input read in place:
  // rows iy0 + [ky0, ky1) of a K-tall window (the rest is padding), columns
  // from ix0 on; edge (std::true_type) where the window leaves the map.
  template <int K, int S, int TW, class Tile>
  __attribute__((always_inline)) static void in_place_band(const GroupConvBand& r, const Tile& tile) {
    const GroupConvGeometry& g = *r.g;
    for (int oy = r.oy0; oy < r.oy1; ++oy) {
      const int iy0 = oy * S - g.pad_t, ky0 = std::max(0, -iy0), ky1 = std::min(K, g.h - iy0);
      float* out = r.dst + static_cast<std::ptrdiff_t>(oy - r.oy0) * g.ow * L;
      for (int ox = 0; ox < g.ow; ox += TW) {
        const int n = std::min(TW, g.ow - ox), ix0 = ox * S - g.pad_l;
        if (n == TW && ix0 >= 0 && ix0 + (TW - 1) * S + K <= g.w)
          tile(std::false_type{}, iy0, ky0, ky1, ix0, n, out + ox * L);
        else
          tile(std::true_type{}, iy0, ky0, ky1, ix0, n, out + ox * L);
      }
    }
  }

  // Depthwise (one channel per group): TW outputs of a row read straight
  // from the input (a ring, as above, only copied the rows: on large maps
  // at stride 2 its copies took as long as the multiply-adds). With 32
  // registers a row's inputs are loaded once into registers and each
  // filter vector once per tap (TW = 6 at stride 2, so that they fit); else
  // the inputs are the multiply-adds' memory operands. Where the tile's
  // window leaves the map (Edge), the columns outside read as zeros by
  // masked loads, which touch no memory.
  template <int S>
  static constexpr int kDepthwiseTile = L == 16 && S == 2 ? 6 : 8;

  template <int K, int S, OutAct A, bool Edge>
  __attribute__((always_inline)) static void depthwise_tile(const GroupConvBand& r, int iy0, int ky0, int ky1, int ix0,
                                                            int n, float* out, V lo, V hi) {
    const GroupConvGeometry& g = *r.g;
    constexpr int TW = kDepthwiseTile<S>, NI = (TW - 1) * S + K;
    V acc[TW];
    const V b = I::load(r.bias);
    for (int t = 0; t < TW; ++t) acc[t] = b;
    auto input = [&](const float* x, int i) { return load_column<Edge>(x, i, ix0, g.w); };
    for (int ky = ky0; ky < ky1; ++ky) {
      const float* x = r.src + (static_cast<std::ptrdiff_t>(iy0 + ky) * g.w + ix0) * L;
      const float* f = r.w + ky * K * L;
      if constexpr (L == 16) {
        V in[NI];
        for (int i = 0; i < NI; ++i) in[i] = input(x, i);
        for (int kx = 0; kx < K; ++kx) {
          const V wv = I::load(f + kx * L);
          for (int t = 0; t < TW; ++t) acc[t] = I::fmadd(in[t * S + kx], wv, acc[t]);
        }
      } else {
        for (int kx = 0; kx < K; ++kx) {
          const V wv = I::load(f + kx * L);
          for (int t = 0; t < TW; ++t) acc[t] = I::fmadd(input(x, t * S + kx), wv, acc[t]);
        }
      }
    }
    for (int t = 0; t < TW; ++t)
      if (!Edge || t < n) store<A>(r, out + t * L, acc[t], lo, hi);
  }

  template <int K, int S, OutAct A>
  static void depthwise_band(const GroupConvBand& r) {
    const V lo = I::set1(r.lo), hi = I::set1(r.hi);
    in_place_band<K, S, kDepthwiseTile<S>>(r, [&](auto edge, int iy0, int ky0, int ky1, int ix0, int n, float* out) {
      depthwise_tile<K, S, A, decltype(edge)::value>(r, iy0, ky0, ky1, ix0, n, out, lo, hi);
    });
  }

  // The rotated form (group_conv.hpp): partial q of a pixel sums each input
  // lane times its weight for the output q members back in its group; the
  // output is partial 0 (with the bias) plus each other partial permuted
  // within groups. Inputs read in place (masked loads outside the map), TW
  // pixels x GW partials in registers (24 of AVX-512's 32, 8 of AVX2's 16).
  template <int GW>
  static constexpr int kRotTile = (L == 16 ? 24 : 8) / GW > 0 ? (L == 16 ? 24 : 8) / GW : 1;

  template <int K, int S, int GW, OutAct A, bool Edge>
  __attribute__((always_inline)) static void rotated_tile(const GroupConvBand& r, const typename I::Idx* rot, int iy0,
                                                          int ky0, int ky1, int ix0, int n, float* out, V lo, V hi) {
    const GroupConvGeometry& g = *r.g;
    constexpr int TW = kRotTile<GW>;
    V acc[TW][GW];
    const V b = I::load(r.bias);
    for (int t = 0; t < TW; ++t) {
      acc[t][0] = b;
      for (int q = 1; q < GW; ++q) acc[t][q] = I::zero();
    }
    for (int ky = ky0; ky < ky1; ++ky) {
      const float* x = r.src + (static_cast<std::ptrdiff_t>(iy0 + ky) * g.w + ix0) * L;
      const float* f = r.w + ky * K * GW * L;
      for (int kx = 0; kx < K; ++kx) {
        V in[TW];
        for (int t = 0; t < TW; ++t) in[t] = load_column<Edge>(x, t * S + kx, ix0, g.w);
        for (int q = 0; q < GW; ++q) {
          const V wv = I::load(f + (kx * GW + q) * L);
          for (int t = 0; t < TW; ++t) acc[t][q] = I::fmadd(in[t], wv, acc[t][q]);
        }
      }
    }
    for (int t = 0; t < TW; ++t) {
      if (Edge && t >= n) break;
      V v = acc[t][0];
      for (int q = 1; q < GW; ++q) v = I::add(v, I::permute(acc[t][q], rot[q]));
      store<A>(r, out + t * L, v, lo, hi);
    }
  }

  template <int K, int S, int GW, OutAct A>
  static void rotated_band(const GroupConvBand& r) {
    const V lo = I::set1(r.lo), hi = I::set1(r.hi);
    typename I::Idx rot[GW];
    for (int q = 0; q < GW; ++q) rot[q] = I::load_idx(r.perm + q * L);
    in_place_band<K, S, kRotTile<GW>>(r, [&](auto edge, int iy0, int ky0, int ky1, int ix0, int n, float* out) {
      rotated_tile<K, S, GW, A, decltype(edge)::value>(r, rot, iy0, ky0, ky1, ix0, n, out, lo, hi);
    });
  }

  template <int GW, OutAct A>
  static void band_for(const GroupConvBand& r) {
    const int k = r.g->k, s = r.g->stride;
    if constexpr (GW > 1) {
      if (r.rotated && k == 3 && s == 1) return rotated_band<3, 1, GW, A>(r);
      if (r.rotated && k == 3 && s == 2) return rotated_band<3, 2, GW, A>(r);
    }
    if constexpr (GW == 1) {
      if (k == 3 && s == 1) return depthwise_band<3, 1, A>(r);
      if (k == 3 && s == 2) return depthwise_band<3, 2, A>(r);
      if (k == 5 && s == 1) return depthwise_band<5, 1, A>(r);
      if (k == 5 && s == 2) return depthwise_band<5, 2, A>(r);
      return band<0, 1, 0, A>(r);
    }
    if (k == 3 && s == 1) band<3, 1, GW, A>(r);
    else if (k == 3 && s == 2) band<3, 2, GW, A>(r);
    else band<0, 1, 0, A>(r);
  }

  template <OutAct A>
  static void band_for(const GroupConvBand& r) {
    switch (r.g->gw) {
      case 1: return band_for<1, A>(r);
      case 2: return band_for<2, A>(r);
      case 4: return band_for<4, A>(r);
      default: return band_for<8, A>(r);
    }
  }

  static void run_band(const GroupConvBand& r) {
    if (r.act == OutAct::Swish) band_for<OutAct::Swish>(r);
    else if (r.act == OutAct::HardSwish) band_for<OutAct::HardSwish>(r);
    else band_for<OutAct::Clamp>(r);
  }
};

}  // namespace vinfer::cpu
