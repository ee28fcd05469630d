// Internal: the 1x1 convolution with a pre-activation (conv1x1.hpp), written
// once over an ISA's vector type (the same ISA structs and GEMM register tiles
// as Winograd's), included by simd_avx2.cpp and simd_avx512.cpp. A vector
// holds L channels of one pixel, one channel block (block == L).
#pragma once
#include <algorithm>
#include <utility>

#include "cpu/conv1x1.hpp"

namespace vinfer::cpu {

template <class I>
struct Conv1x1Kernels {
  using V = typename I::V;
  static constexpr int L = I::L;

  // Calls body(load) with a load of the channel block at c: whole, or (the
  // input's last, partial block) its first ic - c lanes and zeros, so that
  // the padding lanes (any values) meet the zero weights as zeros.
  template <class Body>
  static void with_block_load(const Conv1x1Geometry& g, int c, Body body) {
    const int valid = g.ic - c;
    if (valid >= L) body([](const float* p) { return I::load(p); });
    else body([valid](const float* p) { return I::load_n(p, valid); });
  }

  // packed[r][k] = max(x * scale + shift, pre_lo) (or x) for pixels [p0, p0 + n).
  static void pack(const Conv1x1Geometry& g, const Conv1x1Call& a, int p0, int n, float* packed) {
    if (g.gathers()) return pack_gathered(g, a, p0, n, packed);
    const int K = g.ic_blocks(), ld = packed_ld(g.depth());
    const std::size_t plane = g.in_pixels() * L;
    const V plo = I::set1(a.pre_lo);
    for (int c = 0; c < K; c += L) {
      const float* x = a.src + (c / L) * plane + static_cast<std::size_t>(p0) * L;
      with_block_load(g, c, [&](auto load) {
        if (!a.pre_scale) {
          for (int r = 0; r < n; ++r) I::store(packed + r * ld + c, load(x + r * L));
          return;
        }
        const V s = I::load(a.pre_scale + c), t = I::load(a.pre_shift + c);
        for (int r = 0; r < n; ++r) I::store(packed + r * ld + c, I::max(I::fmadd(load(x + r * L), s, t), plo));
      });
    }
  }

  // The same for a stride of 2 or a 3x3 window (im2col): k = tap x
  // ic_blocks + channel, zero where the tap falls on the padding.
  static void pack_gathered(const Conv1x1Geometry& g, const Conv1x1Call& a, int p0, int n, float* packed) {
    const int IC = g.ic_blocks(), ld = packed_ld(g.depth()), taps = g.kernel * g.kernel;
    const std::size_t plane = g.in_pixels() * L;
    // Where each output pixel's taps are (in pixels of the input map; -1: padding).
    std::ptrdiff_t at[kMaxBlockPixels * 9];
    for (int r = 0; r < n; ++r) {
      const int oy = (p0 + r) / g.ow, ox = (p0 + r) % g.ow;
      for (int t = 0; t < taps; ++t) {
        const int iy = oy * g.stride + t / g.kernel - g.pad, ix = ox * g.stride + t % g.kernel - g.pad;
        at[r * taps + t] = iy >= 0 && iy < g.in_h && ix >= 0 && ix < g.in_w ? static_cast<std::ptrdiff_t>(iy) * g.in_w + ix : -1;
      }
    }
    const V plo = I::set1(a.pre_lo), zero = I::zero();
    for (int c = 0; c < IC; c += L) {
      const float* x = a.src + (c / L) * plane;
      const V s = a.pre_scale ? I::load(a.pre_scale + c) : zero, t = a.pre_scale ? I::load(a.pre_shift + c) : zero;
      with_block_load(g, c, [&](auto load) {
        for (int r = 0; r < n; ++r)
          for (int tap = 0; tap < taps; ++tap) {
            const std::ptrdiff_t i = at[r * taps + tap];
            float* out = packed + r * ld + tap * IC + c;
            if (i < 0) I::store(out, zero);
            else if (!a.pre_scale) I::store(out, load(x + i * L));
            else I::store(out, I::max(I::fmadd(load(x + i * L), s, t), plo));
          }
      });
    }
  }

  // Output channels [col, col + 2L or L) of pixels [p0, p0 + N) from their
  // packed rows; Res: with a.res added; A: the output function (conv1x1.hpp).
  template <int N, bool Res, OutAct A>
  static void tile(const Conv1x1Geometry& g, const Conv1x1Call& a, int p0, int col, int width, const float* packed,
                   V vlo, V vhi, PrefetchCursor* pf, const char* own_at, int own_step) {
    const int K = g.depth();
    const std::size_t plane = static_cast<std::size_t>(g.hw) * L;
    const std::size_t at = (col / L) * plane + static_cast<std::size_t>(p0) * L;
    float* const o0 = a.dst + at;
    float* const o1 = o0 + plane;
    const float* const r0 = Res ? a.res + at : nullptr;
    const float* const r1 = Res ? r0 + plane : nullptr;
    const V bias0 = I::load(a.bias + col), bias1 = width == 2 * L ? I::load(a.bias + col + L) : bias0;
    // Inlined by force: GCC otherwise called it once per accumulator (24 calls
    // per tile, each reloading the captures), ~10-20 % of a short k loop.
    auto out = [&](int r, int half, V acc) __attribute__((always_inline)) {
      V v = I::add(acc, half ? bias1 : bias0);
      if constexpr (Res) v = I::add(v, I::load((half ? r1 : r0) + r * L));
      I::store((half ? o1 : o0) + r * L, OutActs<I>::template apply<A>(v, vlo, vhi));
    };
    const char* pf_at = idle_prefetch_line();
    int pf_step = 0;
    if (pf) pf->next(K, pf_at, pf_step);
    // Weight groups of 2L output channels: [ic][2L] each, K * 2L floats
    // apart (the last one L wide where oc is an odd number of vectors); a
    // tile of one vector may start in the middle of a group.
    const int start = col / (2 * L) * (2 * L), stride = std::min(2 * L, g.oc - start);
    const float* b = a.w + static_cast<std::size_t>(start) * K + (col - start);
    const int ld = packed_ld(K);
    if (own_step > 0) {
      if (width == 2 * L) I::template micro2<N, true>(packed, ld, b, K, 2 * L, out, pf_at, pf_step, own_at, own_step);
      else I::template micro1<N, true>(packed, ld, b, K, stride, out, pf_at, pf_step, own_at, own_step);
    } else if (width == 2 * L) {
      I::template micro2<N>(packed, ld, b, K, 2 * L, out, pf_at, pf_step);
    } else {
      I::template micro1<N>(packed, ld, b, K, stride, out, pf_at, pf_step);
    }
  }

  template <bool Res, OutAct A, int... N>
  static void tail(int n, const Conv1x1Geometry& g, const Conv1x1Call& a, int p0, int col, int width,
                   const float* packed, V vlo, V vhi, PrefetchCursor* pf, const char* own_at, int own_step,
                   std::integer_sequence<int, N...>) {
    ((n == N + 1 ? tile<N + 1, Res, A>(g, a, p0, col, width, packed, vlo, vhi, pf, own_at, own_step) : void()), ...);
  }

  template <bool Res, OutAct A>
  static void tiles(const Conv1x1Geometry& g, const Conv1x1Call& a, int p0, int n, int oc0, int oc1,
                    const float* packed, PrefetchCursor* pf) {
    const V vlo = I::set1(a.lo), vhi = I::set1(a.hi);
    // Register tiles of equal rows, +-1 (49 pixels as 10+10+10+10+9, not
    // 12+12+12+12+1: a tile of one row is bound by its FMA latency and
    // costs as much as four).
    const int row_tiles = (n + I::R - 1) / I::R;
    const int K = g.depth();
    for (int col = oc0, width; col < oc1; col += width) {
      // (a whole group, or the part of one in [oc0, oc1))
      width = std::min(std::min(2 * L, g.oc - col / (2 * L) * (2 * L)) - col % (2 * L), oc1 - col);
      const int next = std::min(2 * L, oc1 - col - width);  // the thread's next group: its channels (<= 0: none)
      for (int i = 0; i < row_tiles; ++i) {
        const int r = n * i / row_tiles, rows = n * (i + 1) / row_tiles - r;
        const float* p = packed + static_cast<std::size_t>(r) * packed_ld(g.depth());
        const char* own_at = nullptr;
        int own_step = 0;
        if (pf && pf->own_next && next > 0)
          own_share(a.w + static_cast<std::size_t>(col + width) * K, sizeof(float) * K * next, K, i, row_tiles, own_at,
                    own_step);
        if (rows == I::R) tile<I::R, Res, A>(g, a, p0 + r, col, width, p, vlo, vhi, pf, own_at, own_step);
        else tail<Res, A>(rows, g, a, p0 + r, col, width, p, vlo, vhi, pf, own_at, own_step,
                       std::make_integer_sequence<int, I::R - 1>());
      }
    }
  }

  // Conv1x1RowsFn: pixels [p0, p0 + n), any n. The block's input is packed
  // once; each weight group then serves all its register tiles while it is
  // in L1 (2L columns x ic floats).
  static void run_rows(const Conv1x1Geometry& g, const Conv1x1Call& a, int p0, int n, int oc0, int oc1, float* packed,
                       PrefetchCursor* pf) {
    pack(g, a, p0, n, packed);
    // (a residual comes with a clamp only: ResNet's; MobileNet's and
    // EfficientNet's are added after a convolution without activation)
    if (a.res) tiles<true, OutAct::Clamp>(g, a, p0, n, oc0, oc1, packed, pf);
    else if (a.act == OutAct::Swish) tiles<false, OutAct::Swish>(g, a, p0, n, oc0, oc1, packed, pf);
    else if (a.act == OutAct::HardSwish) tiles<false, OutAct::HardSwish>(g, a, p0, n, oc0, oc1, packed, pf);
    else tiles<false, OutAct::Clamp>(g, a, p0, n, oc0, oc1, packed, pf);
  }
};

}  // namespace vinfer::cpu
