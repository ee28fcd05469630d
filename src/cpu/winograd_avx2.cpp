// Winograd F(4x4, 3x3) with AVX2 + FMA (compiled with -mavx2 -mfma for this
// file only; WinogradF43::supports checks the CPU first). Vectors hold 8
// channels of one pixel, so every transform works on 8 channels at once.
// Points 0, +-1, +-2 (Lavin and Gray):
//   B^T = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1]
//   G   = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1]
//   A^T = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1]
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "cpu/winograd.hpp"

namespace vinfer::cpu {
namespace {

// r = B^T z for six vectors z (one column or row of a tile).
inline void bt6(const __m256 z[6], __m256 r[6]) {
  const __m256 four = _mm256_set1_ps(4.f), five = _mm256_set1_ps(5.f), two = _mm256_set1_ps(2.f);
  const __m256 t0 = _mm256_fnmadd_ps(four, z[2], z[4]);  // z4 - 4 z2
  const __m256 t1 = _mm256_fnmadd_ps(four, z[1], z[3]);  // z3 - 4 z1
  const __m256 t2 = _mm256_sub_ps(z[4], z[2]);
  const __m256 t3 = _mm256_mul_ps(two, _mm256_sub_ps(z[3], z[1]));
  r[0] = _mm256_fmadd_ps(four, z[0], _mm256_fnmadd_ps(five, z[2], z[4]));
  r[1] = _mm256_add_ps(t0, t1);
  r[2] = _mm256_sub_ps(t0, t1);
  r[3] = _mm256_add_ps(t2, t3);
  r[4] = _mm256_sub_ps(t2, t3);
  r[5] = _mm256_fmadd_ps(four, z[1], _mm256_fnmadd_ps(five, z[3], z[5]));
}

// r = A^T m: four outputs from six vectors.
inline void at6(const __m256 m[6], __m256 r[4]) {
  const __m256 a = _mm256_add_ps(m[1], m[2]), b = _mm256_sub_ps(m[1], m[2]);
  const __m256 c = _mm256_add_ps(m[3], m[4]), d = _mm256_sub_ps(m[3], m[4]);
  r[0] = _mm256_add_ps(_mm256_add_ps(m[0], a), c);
  r[1] = _mm256_fmadd_ps(_mm256_set1_ps(2.f), d, b);
  r[2] = _mm256_fmadd_ps(_mm256_set1_ps(4.f), c, a);
  r[3] = _mm256_add_ps(_mm256_fmadd_ps(_mm256_set1_ps(8.f), d, b), m[5]);
}

// Offset of (channel c, pixel p) in a blocked tensor with hw pixels per plane.
inline std::size_t at(int c, std::size_t p, std::size_t hw, int block) {
  return ((static_cast<std::size_t>(c / block)) * hw + p) * block + c % block;
}

// B^T d B for one 6x6 tile of 8 channels: d at p, rows `row` floats apart,
// pixels `px` apart; the 36 results go to v, `pos_stride` floats apart.
inline void tile_transform(const float* p, std::size_t row, std::size_t px, float* v, std::size_t pos_stride) {
  __m256 tmp[6][6];  // d B, row by row
  for (int i = 0; i < 6; ++i) {
    __m256 z[6];
    for (int j = 0; j < 6; ++j) z[j] = _mm256_loadu_ps(p + i * row + j * px);
    bt6(z, tmp[i]);
  }
  for (int j = 0; j < 6; ++j) {  // B^T (d B), column by column
    __m256 z[6], r[6];
    for (int i = 0; i < 6; ++i) z[i] = tmp[i][j];
    bt6(z, r);
    for (int i = 0; i < 6; ++i) _mm256_storeu_ps(v + (i * 6 + j) * pos_stride, r[i]);
  }
}

// V[pos][t][ic] for tiles [tile0, tile0 + T); tiles past the end are zero.
void input_transform(const WinogradGeometry& g, int tiles_w, int tiles, int tile0, int T, const float* src, float* v) {
  const int H = g.h, W = g.w, B = g.block, IC = g.ic;
  const std::size_t hw = static_cast<std::size_t>(H) * W;
  const std::size_t pos_stride = static_cast<std::size_t>(T) * IC;
  alignas(32) float patch[36 * 8];  // a border tile, zero-padded, 8 channels per pixel
  for (int t = 0; t < T; ++t) {
    const int ti = tile0 + t;
    float* vt = v + static_cast<std::size_t>(t) * IC;
    if (ti >= tiles) {
      for (int pos = 0; pos < 36; ++pos) std::memset(vt + pos * pos_stride, 0, sizeof(float) * IC);
      continue;
    }
    const int y0 = (ti / tiles_w) * 4 - g.pad_t, x0 = (ti % tiles_w) * 4 - g.pad_l;
    const bool inside = y0 >= 0 && x0 >= 0 && y0 + 6 <= H && x0 + 6 <= W;
    for (int c = 0; c < IC; c += 8) {
      const float* plane = src + (static_cast<std::size_t>(c / B) * hw) * B + c % B;
      if (inside) {
        tile_transform(plane + (static_cast<std::size_t>(y0) * W + x0) * B, static_cast<std::size_t>(W) * B, B, vt + c,
                       pos_stride);
        continue;
      }
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) {
          const int y = y0 + i, x = x0 + j;
          const __m256 d = y >= 0 && y < H && x >= 0 && x < W
                               ? _mm256_loadu_ps(plane + (static_cast<std::size_t>(y) * W + x) * B)
                               : _mm256_setzero_ps();
          _mm256_store_ps(patch + (i * 6 + j) * 8, d);
        }
      tile_transform(patch, 6 * 8, 8, vt + c, pos_stride);
    }
  }
}

// C[T][n] = A[T][k] x B[k][n] (row-major), n a multiple of 8, in micro-tiles
// of 6 rows x 16 (or 8) columns. Named accumulators: with arrays GCC kept them
// on the stack and stored all twelve every step.
#define VINFER_ROW6(X) X(0) X(1) X(2) X(3) X(4) X(5)
inline void micro16(const float* a, const float* b, float* c, int k, int n) {
#define DECL(r) __m256 c##r##0 = _mm256_setzero_ps(), c##r##1 = _mm256_setzero_ps();
  VINFER_ROW6(DECL)
#undef DECL
  for (int i = 0; i < k; ++i, b += n) {
    const __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
#define STEP(r)                                                                \
  {                                                                            \
    const __m256 av = _mm256_broadcast_ss(a + static_cast<std::size_t>(r) * k + i); \
    c##r##0 = _mm256_fmadd_ps(av, b0, c##r##0);                                \
    c##r##1 = _mm256_fmadd_ps(av, b1, c##r##1);                                \
  }
    VINFER_ROW6(STEP)
#undef STEP
  }
#define STORE(r)                                                 \
  _mm256_storeu_ps(c + static_cast<std::size_t>(r) * n, c##r##0); \
  _mm256_storeu_ps(c + static_cast<std::size_t>(r) * n + 8, c##r##1);
  VINFER_ROW6(STORE)
#undef STORE
}

inline void micro8(const float* a, const float* b, float* c, int k, int n) {
#define DECL(r) __m256 c##r = _mm256_setzero_ps();
  VINFER_ROW6(DECL)
#undef DECL
  for (int i = 0; i < k; ++i, b += n) {
    const __m256 b0 = _mm256_loadu_ps(b);
#define STEP(r) c##r = _mm256_fmadd_ps(_mm256_broadcast_ss(a + static_cast<std::size_t>(r) * k + i), b0, c##r);
    VINFER_ROW6(STEP)
#undef STEP
  }
#define STORE(r) _mm256_storeu_ps(c + static_cast<std::size_t>(r) * n, c##r);
  VINFER_ROW6(STORE)
#undef STORE
}
#undef VINFER_ROW6

void gemm_chunk(const float* a, const float* b, float* c, int k, int n, int T) {
  for (int row0 = 0; row0 < T; row0 += 6) {
    int col = 0;
    const float* ar = a + static_cast<std::size_t>(row0) * k;
    float* cr = c + static_cast<std::size_t>(row0) * n;
    for (; col + 16 <= n; col += 16) micro16(ar, b + col, cr + col, k, n);
    if (col < n) micro8(ar, b + col, cr + col, k, n);
  }
}

// Y = A^T M A per tile and 8 output channels, plus bias, clamped, into dst.
void output_transform(const WinogradGeometry& g, int tiles_w, int tiles, int tile0, int T, const float* m,
                      const float* bias, float lo, float hi, float* dst) {
  const std::size_t ohw = static_cast<std::size_t>(g.oh) * g.ow;
  const std::size_t pos_stride = static_cast<std::size_t>(T) * g.oc;
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  for (int t = 0; t < T && tile0 + t < tiles; ++t) {
    const int ti = tile0 + t;
    const int y0 = (ti / tiles_w) * 4, x0 = (ti % tiles_w) * 4;
    for (int c = 0; c < g.oc; c += 8) {
      __m256 tmp[4][6];  // A^T M, column by column
      for (int j = 0; j < 6; ++j) {
        __m256 col[6], r[4];
        for (int i = 0; i < 6; ++i) col[i] = _mm256_loadu_ps(m + (i * 6 + j) * pos_stride + t * g.oc + c);
        at6(col, r);
        for (int i = 0; i < 4; ++i) tmp[i][j] = r[i];
      }
      const __m256 b = _mm256_loadu_ps(bias + c);
      for (int i = 0; i < 4; ++i) {
        if (y0 + i >= g.oh) break;
        __m256 r[4];
        at6(tmp[i], r);
        for (int j = 0; j < 4 && x0 + j < g.ow; ++j) {
          const __m256 y = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(r[j], b), vlo), vhi);
          _mm256_storeu_ps(dst + at(c, static_cast<std::size_t>(y0 + i) * g.ow + x0 + j, ohw, g.block), y);
        }
      }
    }
  }
}

}  // namespace

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
    const int tile0 = chunk * T;
    input_transform(g_, tiles_w_, tiles_, tile0, T, src, v);
    for (int pos = 0; pos < 36; ++pos)
      gemm_chunk(v + static_cast<std::size_t>(pos) * T * g_.ic, u_.data() + static_cast<std::size_t>(pos) * g_.ic * g_.oc,
                 m + static_cast<std::size_t>(pos) * T * g_.oc, g_.ic, g_.oc, T);
    output_transform(g_, tiles_w_, tiles_, tile0, T, m, bias_.data(), lo_, hi_, dst);
  }
}

}  // namespace vinfer::cpu
