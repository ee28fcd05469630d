// Internal: Winograd kernels (winograd.hpp) written once over an ISA's vector
// type, included by simd_avx2.cpp and simd_avx512.cpp (each compiled
// for its ISA). A vector holds L channels of one pixel, so every transform
// works on L channels at once. F(4x4, 3x3) for stride 1, points 0, +-1, +-2
// (Lavin and Gray):
//   B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
//   G   = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1]
//   A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
// F(2x2, 3x3), points 0, +-1:
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
//   G   = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]
//   A^T = [1 1 1 0; 0 1 -1 -1]
// Stride 2, per dimension on x0..x4 (F(2,2) on the even samples, the odd ones
// as they are):
//   B^T = [1 0 -1 0 0; 0 0 1 0 0; 0 0 -1 0 1; 0 1 0 0 0; 0 0 0 1 0]
//   G   = [1 0 0; 1 0 1; 0 0 1; 0 1 0] (the last row serves both odd samples)
//   A^T = [1 1 0 1 0; 0 1 1 0 1]
// I: the ISA (vector type V, lanes L, ops, and the GEMM micro-kernels).
#pragma once
#include <algorithm>
#include <type_traits>
#include <utility>

#include <immintrin.h>

#include "cpu/winograd.hpp"

namespace vinfer::cpu {

template <class I>
struct WinogradKernels {
  using V = typename I::V;
  static constexpr int L = I::L;

  // r = B^T z for six vectors z (one column or row of a tile).
  static void bt6(const V z[6], V r[6]) {
    const V four = I::set1(4.f), five = I::set1(5.f), two = I::set1(2.f);
    const V t0 = I::fnmadd(four, z[2], z[4]);  // z4 - 4 z2
    const V t1 = I::fnmadd(four, z[1], z[3]);  // z3 - 4 z1
    const V t2 = I::sub(z[4], z[2]);
    const V t3 = I::mul(two, I::sub(z[3], z[1]));
    r[0] = I::fmadd(four, z[0], I::fnmadd(five, z[2], z[4]));
    r[1] = I::add(t0, t1);
    r[2] = I::sub(t0, t1);
    r[3] = I::add(t2, t3);
    r[4] = I::sub(t2, t3);
    r[5] = I::fmadd(four, z[1], I::fnmadd(five, z[3], z[5]));
  }

  // r = A^T m: four outputs from six vectors.
  static void at6(const V m[6], V r[4]) {
    const V a = I::add(m[1], m[2]), b = I::sub(m[1], m[2]);
    const V c = I::add(m[3], m[4]), d = I::sub(m[3], m[4]);
    r[0] = I::add(I::add(m[0], a), c);
    r[1] = I::fmadd(I::set1(2.f), d, b);
    r[2] = I::fmadd(I::set1(4.f), c, a);
    r[3] = I::add(I::fmadd(I::set1(8.f), d, b), m[5]);
  }

  // The three forms (winograd.hpp): input tile side N, output tile side M,
  // stride S (the input tiles are M x S pixels apart), the 1D transforms, and
  // where transformed sample (i, j) of a tile goes: pos[i * N + j], in floats
  // from the tile's row of V (or M).
  struct F43 {
    static constexpr int N = 6, M = 4, S = 1;
    static void bt(const V z[6], V r[6]) { bt6(z, r); }
    static void at(const V m[6], V r[4]) { at6(m, r); }
    static void positions(const WinogradLayout& l, std::size_t pos[36]) { std::copy(l.at.begin(), l.at.end(), pos); }
  };
  struct F23 {
    static constexpr int N = 4, M = 2, S = 1;
    static void bt(const V z[4], V r[4]) {
      r[0] = I::sub(z[0], z[2]), r[1] = I::add(z[1], z[2]), r[2] = I::sub(z[2], z[1]), r[3] = I::sub(z[1], z[3]);
    }
    static void at(const V m[4], V r[2]) {
      r[0] = I::add(I::add(m[0], m[1]), m[2]);
      r[1] = I::sub(I::sub(m[1], m[2]), m[3]);
    }
    static void positions(const WinogradLayout& l, std::size_t pos[16]) { std::copy_n(l.at.begin(), 16, pos); }
  };
  // Stride 2: x0..x4 -> E0 = x0 - x2, E1 = x2, E2 = x4 - x2 (F(2,2) on the
  // even samples), O0 = x1, O1 = x3 (the odd ones); y0 = E0 + E1 + O0,
  // y1 = E1 + E2 + O1 of the products. Weight position per dimension: E0, E1,
  // E2, or 3 for both odd samples (one run of rows each, pitch apart).
  struct S2 {
    static constexpr int N = 5, M = 2, S = 2;
    static void bt(const V z[5], V r[5]) {
      r[0] = I::sub(z[0], z[2]), r[1] = z[2], r[2] = I::sub(z[4], z[2]), r[3] = z[1], r[4] = z[3];
    }
    static void at(const V m[5], V r[2]) {
      r[0] = I::add(I::add(m[0], m[1]), m[3]);
      r[1] = I::add(I::add(m[1], m[2]), m[4]);
    }
    static void positions(const WinogradLayout& l, std::size_t pos[25]) {
      for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 5; ++j) {
          const int pi = std::min(i, 3), pj = std::min(j, 3);
          const int run = (i < 3 ? 0 : i - 3) * (pj == 3 ? 2 : 1) + (j < 3 ? 0 : j - 3);
          pos[i * 5 + j] = l.at[static_cast<std::size_t>(pi * 4 + pj)] + static_cast<std::size_t>(run) * l.pitch;
        }
    }
  };
  template <int Stride, int Tile>
  using Form = std::conditional_t<Stride == 2, S2, std::conditional_t<Tile == 4, F43, F23>>;

  // Offset of (channel c, pixel p) in a blocked tensor with hw pixels per plane.
  static std::size_t at(int c, std::size_t p, std::size_t hw, int block) {
    return ((static_cast<std::size_t>(c / block)) * hw + p) * block + c % block;
  }

  // B^T d B for one NxN tile of L channels. Pixel (i, j) of the tile is at
  // base + at + i * row + j * px; on a Border tile only where bit i of rows_in
  // and bit j of cols_in are set (the rest is padding, zero). Result (i, j)
  // goes to v + pos[i * N + j]. Partial: only the first `valid` channels are
  // read, the rest taken as zero (a last block's padding lanes, any values).
  template <class F, bool Border, bool Partial>
  static void tile_transform(const float* base, std::ptrdiff_t at, std::ptrdiff_t row, std::ptrdiff_t px, unsigned rows_in,
                             unsigned cols_in, float* v, const std::size_t* pos, int valid) {
    constexpr int N = F::N;
    auto load = [valid](const float* p) { return Partial ? I::load_n(p, valid) : I::load(p); };
    V tmp[N][N];  // d B, row by row
    for (int i = 0; i < N; ++i) {
      V z[N];
      for (int j = 0; j < N; ++j)
        z[j] = !Border || ((rows_in >> i) & (cols_in >> j) & 1u) ? load(base + (at + i * row + j * px)) : I::zero();
      F::bt(z, tmp[i]);
    }
    for (int j = 0; j < N; ++j) {  // B^T (d B), column by column
      V z[N], r[N];
      for (int i = 0; i < N; ++i) z[i] = tmp[i][j];
      F::bt(z, r);
      for (int i = 0; i < N; ++i) I::store(v + pos[i * N + j], r[i]);
    }
  }

  // V for tiles [tile0, tile0 + T) of the batch in layout lv (v points at
  // tile0's row). Meanwhile, when pf_bytes > 0, the bytes at pf are
  // prefetched into L2, spread over the tiles' transforms.
  template <class F>
  static void input_transform(const WinogradGeometry& g, int tiles_w, int per_image, int tile0, int T,
                              const WinogradLayout& lv, const float* src, float* v, const float* pf_at,
                              std::size_t pf_bytes) {
    constexpr int N = F::N, step = F::M * F::S;
    std::size_t pos[N * N];
    F::positions(lv, pos);
    const int H = g.h, W = g.w, B = g.block, IC = g.ic_blocks();
    const std::ptrdiff_t plane = static_cast<std::ptrdiff_t>(H) * W * B, row = static_cast<std::ptrdiff_t>(W) * B;
    const std::size_t transforms = static_cast<std::size_t>(T) * (IC / L);
    const std::size_t pf_step = transforms ? (pf_bytes / 64 + transforms - 1) / transforms * 64 : 0;  // bytes per transform
    const char* pf = reinterpret_cast<const char*>(pf_at);
    const char* const pf_end = pf + pf_bytes;
    for (int t = 0; t < T; ++t) {
      const int ti = (tile0 + t) % per_image;
      const float* image = src + static_cast<std::size_t>((tile0 + t) / per_image) * g.src_stride();
      float* vt = v + static_cast<std::size_t>(t) * IC;
      const int y0 = (ti / tiles_w) * step - g.pad_t, x0 = (ti % tiles_w) * step - g.pad_l;
      unsigned rows_in = 0, cols_in = 0;
      for (int i = 0; i < N; ++i) {
        rows_in |= (y0 + i >= 0 && y0 + i < H ? 1u : 0u) << i;
        cols_in |= (x0 + i >= 0 && x0 + i < W ? 1u : 0u) << i;
      }
      const bool inside = rows_in == (1u << N) - 1 && cols_in == (1u << N) - 1;
      for (int c = 0; c < IC; c += L) {  // B == L: one channel block per vector
        for (const char* q = pf, *e = std::min(pf + pf_step, pf_end); q < e; q += 64) _mm_prefetch(q, _MM_HINT_T1);
        pf = std::min(pf + pf_step, pf_end);
        const std::ptrdiff_t at = (c / B) * plane + y0 * row + static_cast<std::ptrdiff_t>(x0) * B;
        const int valid = g.ic - c;
        if (valid < L) {
          if (inside) tile_transform<F, false, true>(image, at, row, B, rows_in, cols_in, vt + c, pos, valid);
          else tile_transform<F, true, true>(image, at, row, B, rows_in, cols_in, vt + c, pos, valid);
        } else if (inside) {
          tile_transform<F, false, false>(image, at, row, B, rows_in, cols_in, vt + c, pos, L);
        } else {
          tile_transform<F, true, false>(image, at, row, B, rows_in, cols_in, vt + c, pos, L);
        }
      }
    }
  }

  // Y = A^T M A per tile and L output channels, plus bias, through act, into dst
  // (a last partial block's padding lanes zero); M in layout lm (m points at
  // tile0's row).
  template <class F>
  static void output_transform(const WinogradGeometry& g, int tiles_w, int per_image, int tile0, int T,
                               const WinogradLayout& lm, const float* m, const float* bias, float lo, float hi,
                               OutAct act, Residual residual, const float* res, float* dst) {
    if (!res) residual = Residual::None;
    auto with = [&](auto a, auto r) {
      output_tiles<F, decltype(a)::value, decltype(r)::value>(g, tiles_w, per_image, tile0, T, lm, m, bias, lo, hi, res, dst);
    };
    using Clamp = std::integral_constant<OutAct, OutAct::Clamp>;
    using Swish = std::integral_constant<OutAct, OutAct::Swish>;
    auto by_residual = [&](auto a) {
      if (residual == Residual::BeforeAct) with(a, std::integral_constant<Residual, Residual::BeforeAct>{});
      else if (residual == Residual::AfterAct) with(a, std::integral_constant<Residual, Residual::AfterAct>{});
      else with(a, std::integral_constant<Residual, Residual::None>{});
    };
    if (act == OutAct::Swish) by_residual(Swish{});
    else by_residual(Clamp{});
  }
  template <class F, OutAct A, Residual R>
  static void output_tiles(const WinogradGeometry& g, int tiles_w, int per_image, int tile0, int T,
                           const WinogradLayout& lm, const float* m, const float* bias, float lo, float hi,
                           const float* res, float* dst) {
    constexpr int N = F::N, M = F::M;
    std::size_t pos[N * N];
    F::positions(lm, pos);
    const std::size_t ohw = static_cast<std::size_t>(g.oh) * g.ow;
    const V vlo = I::set1(lo), vhi = I::set1(hi);
    const int OC = g.oc_blocks();
    for (int t = 0; t < T; ++t) {
      const int ti = (tile0 + t) % per_image;
      const std::size_t image_at = static_cast<std::size_t>((tile0 + t) / per_image) * g.dst_stride();
      float* image = dst + image_at;
      const int y0 = (ti / tiles_w) * M, x0 = (ti % tiles_w) * M;
      for (int c = 0; c < OC; c += L) {
        const int valid = g.oc - c;
        V tmp[M][N];  // A^T M, column by column
        const float* mt = m + static_cast<std::size_t>(t) * OC + c;
        for (int j = 0; j < N; ++j) {
          V col[N], r[M];
          for (int i = 0; i < N; ++i) col[i] = I::load(mt + pos[i * N + j]);
          F::at(col, r);
          for (int i = 0; i < M; ++i) tmp[i][j] = r[i];
        }
        const V b = I::load(bias + c);
        for (int i = 0; i < M; ++i) {
          if (y0 + i >= g.oh) break;
          V r[M];
          F::at(tmp[i], r);
          for (int j = 0; j < M && x0 + j < g.ow; ++j) {
            const std::size_t o = at(c, static_cast<std::size_t>(y0 + i) * g.ow + x0 + j, ohw, g.block);
            V y = I::add(r[j], b);
            if constexpr (R == Residual::BeforeAct) y = I::add(y, I::load(res + image_at + o));
            y = OutActs<I>::template apply<A>(y, vlo, vhi);
            if constexpr (R == Residual::AfterAct) y = I::add(y, I::load(res + image_at + o));
            float* out = image + o;
            if (valid < L) {  // the padding lanes zero
              I::store(out, y);
              y = I::load_n(out, valid);
            }
            I::store(out, y);
          }
        }
      }
    }
  }

  // C[T][n] = A[T][k] x B[k][n] in the ISA's register tiles, B stored as
  // panels of 2L columns ([n / 2L][k][2L], a last one of L where n is an odd
  // number of vectors) so that each panel is one contiguous stream (a row of
  // B n floats apart defeated the prefetchers once U came from memory). Each
  // panel serves all rows while it is in L1/L2.
  template <int N>
  static void gemm_tile(const float* a, const float* panel, float* c, int k, int n, int col, int width, PrefetchCursor* pf,
                        const char* own_at, int own_step) {
    auto out = [&](int r, int half, V acc) { I::store(c + static_cast<std::size_t>(r) * n + col + half * L, acc); };
    const char* pf_at = idle_prefetch_line();
    int pf_step = 0;
    if (pf) pf->next(k, pf_at, pf_step);
    if (own_step > 0) {
      if (width == 2 * L) I::template micro2<N, true>(a, k, panel, k, 2 * L, out, pf_at, pf_step, own_at, own_step);
      else I::template micro1<N, true>(a, k, panel, k, L, out, pf_at, pf_step, own_at, own_step);
    } else if (width == 2 * L) {
      I::template micro2<N>(a, k, panel, k, 2 * L, out, pf_at, pf_step);
    } else {
      I::template micro1<N>(a, k, panel, k, L, out, pf_at, pf_step);
    }
  }
  template <int... N>
  static void gemm_tail(int rows, const float* a, const float* panel, float* c, int k, int n, int col, int width,
                        PrefetchCursor* pf, const char* own_at, int own_step, std::integer_sequence<int, N...>) {
    ((rows == N + 1 ? gemm_tile<N + 1>(a, panel, c, k, n, col, width, pf, own_at, own_step) : void()), ...);
  }
  // One panel's columns; own_next: what to fetch meanwhile (a panel's bytes), or null.
  static void gemm_panel(const float* a, const float* panel, float* c, int k, int n, int col, int width, int T,
                         PrefetchCursor* pf, const float* own_next) {
    const int row_tiles = (T + I::R - 1) / I::R;  // of equal rows, +-1: no tile of 1 row to pay a pass over B
    for (int i = 0; i < row_tiles; ++i) {
      const int row0 = T * i / row_tiles, rows = T * (i + 1) / row_tiles - row0;
      const std::size_t r = static_cast<std::size_t>(row0);
      const char* own_at = nullptr;
      int own_step = 0;
      if (own_next) own_share(own_next, sizeof(float) * 2 * L * k, k, i, row_tiles, own_at, own_step);
      if (rows == I::R) gemm_tile<I::R>(a + r * k, panel, c + r * n, k, n, col, width, pf, own_at, own_step);
      else
        gemm_tail(rows, a + r * k, panel, c + r * n, k, n, col, width, pf, own_at, own_step,
                  std::make_integer_sequence<int, I::R - 1>());
    }
  }
  static void gemm(const float* a, const float* b, float* c, int k, int n, int T, PrefetchCursor* pf) {
    for (int col = 0; col < n; col += 2 * L) {
      const int width = std::min(2 * L, n - col);
      const float* panel = b + static_cast<std::size_t>(col) * k;
      // The next panel; after the last one, the next position's first
      // (U's positions are contiguous), which the caller multiplies next.
      gemm_panel(a, panel, c, k, n, col, width, T, pf,
                 pf && pf->own_next ? panel + static_cast<std::size_t>(width) * k : nullptr);
    }
  }

  static void combine(const float* w, std::size_t stride, const float coef[3], float* out1, float* out2,
                      std::size_t count) {
    const V c0 = I::set1(coef[0]), c1 = I::set1(coef[1]), c2 = I::set1(coef[2]);
    const float* w1 = w + stride;
    const float* w2 = w + 2 * stride;
    for (std::size_t i = 0; i < count; i += L) {
      const V t = I::fmadd(c2, I::load(w2 + i), I::mul(c0, I::load(w + i))), x = I::load(w1 + i);
      I::store(out1 + i, I::fmadd(c1, x, t));
      I::store(out2 + i, I::fnmadd(c1, x, t));
    }
  }
};

}  // namespace vinfer::cpu

namespace vinfer::cpu {
// The kernels' entry points for one ISA (I), stride and (stride 1) output tile side.
template <class I, int Stride, int Tile = 2>
constexpr WinogradKernelFns winograd_kernel_fns() {
  using K = WinogradKernels<I>;
  using F = typename K::template Form<Stride, Tile>;
  return {K::template input_transform<F>, K::gemm, K::gemm_panel, K::combine, K::template output_transform<F>};
}
}  // namespace vinfer::cpu
