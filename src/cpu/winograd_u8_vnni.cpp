// int8 Winograd F(2x2, 3x3) (winograd_u8.hpp): the AVX-512 VNNI kernels.
// Compiled for AVX-512 BW + VNNI; run after WinogradU8::supports().
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "cpu/winograd_u8.hpp"

namespace vinfer::cpu {
namespace {

constexpr int kRows = 12;  // GEMM register tile: 12 rows x 32 columns (24 accumulators)

std::size_t round64(std::size_t bytes) { return (bytes + 63) / 64 * 64; }

struct Scratch {
  std::int16_t* v;   // [16][ic]: one tile's V
  std::uint8_t* a;   // [16][chunk][ic]: the chunk's quantized V + 128
  float* rs;         // [16][chunk]: each row's scale
  std::int32_t* c;   // [16][chunk][32]: one panel's products
  Scratch(const WinogradU8Plan& p, char* at) {
    const auto ic = static_cast<std::size_t>(p.g.ic), t = static_cast<std::size_t>(p.chunk);
    v = reinterpret_cast<std::int16_t*>(at);
    a = reinterpret_cast<std::uint8_t*>(at += round64(16 * ic * sizeof(std::int16_t)));
    rs = reinterpret_cast<float*>(at += round64(16 * t * ic));
    c = reinterpret_cast<std::int32_t*>(at += round64(16 * t * sizeof(float)));
  }
};

// The largest of each of 16 vectors of 16-bit values (< 2^15) into
// out[16]: interleaved maxima, level by level (48 instructions; one
// reduction per vector would take about 190).
void largest_of_16(const __m512i m[16], int out[16]) {
  __m512i a[8], b[4], c[2];
  for (int i = 0; i < 8; ++i)  // word k of a 128-bit lane: position 2i + (k & 1)
    a[i] = _mm512_max_epu16(_mm512_unpacklo_epi16(m[2 * i], m[2 * i + 1]), _mm512_unpackhi_epi16(m[2 * i], m[2 * i + 1]));
  for (int i = 0; i < 4; ++i)  // position 4i + (k & 3)
    b[i] = _mm512_max_epu16(_mm512_unpacklo_epi32(a[2 * i], a[2 * i + 1]), _mm512_unpackhi_epi32(a[2 * i], a[2 * i + 1]));
  for (int i = 0; i < 2; ++i)  // position 8i + k
    c[i] = _mm512_max_epu16(_mm512_unpacklo_epi64(b[2 * i], b[2 * i + 1]), _mm512_unpackhi_epi64(b[2 * i], b[2 * i + 1]));
  // Lanes 0 and 1 of c[0] and c[1], then 2 and 3: then each pair of lanes.
  const __m512i v = _mm512_max_epu16(_mm512_shuffle_i64x2(c[0], c[1], 0x44), _mm512_shuffle_i64x2(c[0], c[1], 0xEE));
  const __m512i z = _mm512_max_epu16(v, _mm512_shuffle_i64x2(v, v, 0xB1));  // lane 0: positions 0-7, lane 2: 8-15
  alignas(64) std::uint16_t w[32];
  _mm512_store_si512(w, z);
  for (int k = 0; k < 8; ++k) out[k] = w[k], out[8 + k] = w[16 + k];
}

// V of tiles [t0, t0 + T), quantized per row, into s.a ([16][T][ic]) and s.rs.
void input_tiles(const WinogradU8Plan& p, const std::uint8_t* src, int t0, int T, const Scratch& s) {
  const int IC = p.g.ic, H = p.g.h, W = p.g.w;
  const std::ptrdiff_t row = static_cast<std::ptrdiff_t>(W) * IC;
  const std::size_t apos = static_cast<std::size_t>(T) * IC;
  const __m512i zero = _mm512_setzero_si512(), offset = _mm512_set1_epi16(128);
  for (int t = 0; t < T; ++t) {
    const int n = (t0 + t) / p.per_image, ti = (t0 + t) % p.per_image;
    const int y0 = (ti / p.tiles_w) * 2 - 1, x0 = (ti % p.tiles_w) * 2 - 1;
    const std::uint8_t* image = src + static_cast<std::size_t>(n) * p.src_stride();
    const std::ptrdiff_t tile = y0 * row + static_cast<std::ptrdiff_t>(x0) * IC;  // (may be before the image: padding)
    bool in[4][4];
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) in[i][j] = y0 + i >= 0 && y0 + i < H && x0 + j >= 0 && x0 + j < W;
    __m512i most[16];
    for (__m512i& m : most) m = zero;
    for (int c = 0; c < IC; c += 32) {
      __m512i r[4][4];  // d B, row by row
      for (int i = 0; i < 4; ++i) {
        __m512i d[4];
        for (int j = 0; j < 4; ++j)
          d[j] = in[i][j] ? _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(image + (tile + i * row + j * IC + c))))
                          : zero;
        r[i][0] = _mm512_sub_epi16(d[0], d[2]), r[i][1] = _mm512_add_epi16(d[1], d[2]);
        r[i][2] = _mm512_sub_epi16(d[2], d[1]), r[i][3] = _mm512_sub_epi16(d[1], d[3]);
      }
      for (int j = 0; j < 4; ++j) {
        const __m512i v[4] = {_mm512_sub_epi16(r[0][j], r[2][j]), _mm512_add_epi16(r[1][j], r[2][j]),
                              _mm512_sub_epi16(r[2][j], r[1][j]), _mm512_sub_epi16(r[1][j], r[3][j])};
        for (int i = 0; i < 4; ++i) {
          const int q = i * 4 + j;
          _mm512_store_si512(s.v + q * IC + c, v[i]);
          most[q] = _mm512_max_epu16(most[q], _mm512_abs_epi16(v[i]));
        }
      }
    }
    int largest[16];
    largest_of_16(most, largest);
    for (int q = 0; q < 16; ++q) {
      const int m = largest[q] <= 127 ? 0 : 127 * 32768 / largest[q];
      s.rs[q * T + t] = m ? p.s_in * (32768.f / static_cast<float>(m)) : p.s_in;
      const std::int16_t* v = s.v + q * IC;
      std::uint8_t* a = s.a + q * apos + static_cast<std::size_t>(t) * IC;
      const __m512i mul = _mm512_set1_epi16(static_cast<short>(m));
      for (int c = 0; c < IC; c += 32) {
        __m512i x = _mm512_load_si512(v + c);
        if (m) x = _mm512_mulhrs_epi16(x, mul);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(a + c), _mm512_cvtepi16_epi8(_mm512_add_epi16(x, offset)));
      }
    }
  }
}

// C[R][32] = A[R][ic] x B (one panel: [ic / 4][32][4]) - 128 x B's column
// sums. Named accumulators and one row pointer per group of three (as in
// gemm_micro.inc: with an array GCC kept them on the stack).
#define VINFER_U8_ROWS(X)                                                                                         \
  X(0, 0, 0) X(1, 0, 1) X(2, 0, 2) X(3, 3, 0) X(4, 3, 1) X(5, 3, 2) X(6, 6, 0) X(7, 6, 1) X(8, 6, 2) X(9, 9, 0) \
      X(10, 9, 1) X(11, 9, 2)
inline __m512i broadcast4(const std::uint8_t* at) {
  std::int32_t four;
  std::memcpy(&four, at, 4);
  return _mm512_set1_epi32(four);
}
template <int R>
void gemm_rows(const std::uint8_t* a, int ic, const std::int8_t* b, const std::int32_t* neg_comp, std::int32_t* c) {
  const __m512i c0 = _mm512_loadu_si512(neg_comp), c1 = _mm512_loadu_si512(neg_comp + 16);
#define DECL(r, g, m) __m512i acc##r##0 = c0, acc##r##1 = c1;
  VINFER_U8_ROWS(DECL)
#undef DECL
  const std::size_t lda = static_cast<std::size_t>(ic);
  const std::uint8_t *a0 = a, *a3 = a + 3 * lda, *a6 = a + 6 * lda, *a9 = a + 9 * lda;
  (void)a3, (void)a6, (void)a9;
  for (int k = 0; k < ic; k += 4, b += 128, a0 += 4, a3 += 4, a6 += 4, a9 += 4) {
    const __m512i b0 = _mm512_load_si512(b), b1 = _mm512_load_si512(b + 64);
#define STEP(r, g, m)                                   \
  if constexpr (r < R) {                                \
    const __m512i x = broadcast4(a##g + m * lda);       \
    acc##r##0 = _mm512_dpbusd_epi32(acc##r##0, x, b0); \
    acc##r##1 = _mm512_dpbusd_epi32(acc##r##1, x, b1); \
  }
    VINFER_U8_ROWS(STEP)
#undef STEP
  }
#define OUT(r, g, m)                                   \
  if constexpr (r < R) {                               \
    _mm512_store_si512(c + r * 32, acc##r##0);       \
    _mm512_store_si512(c + r * 32 + 16, acc##r##1);  \
  }
  VINFER_U8_ROWS(OUT)
#undef OUT
}
#undef VINFER_U8_ROWS

template <int... N>
void gemm_tail(int rows, const std::uint8_t* a, int ic, const std::int8_t* b, const std::int32_t* neg_comp,
               std::int32_t* c, std::integer_sequence<int, N...>) {
  ((rows == N + 1 ? gemm_rows<N + 1>(a, ic, b, neg_comp, c) : void()), ...);
}

// One panel's 16 GEMMs for the chunk's T rows, in row tiles of equal size (+-1).
void gemm_panel(const WinogradU8Plan& p, int panel, int T, const Scratch& s) {
  const int IC = p.g.ic, OC = p.g.oc, panels = OC / 32;
  const int tiles = (T + kRows - 1) / kRows;
  for (int q = 0; q < 16; ++q) {
    const std::int8_t* b = p.u + (static_cast<std::size_t>(q) * panels + panel) * IC * 32;
    const std::int32_t* comp = p.neg_comp + q * OC + panel * 32;
    const std::uint8_t* a = s.a + static_cast<std::size_t>(q) * T * IC;
    std::int32_t* c = s.c + static_cast<std::size_t>(q) * T * 32;
    for (int i = 0; i < tiles; ++i) {
      const int r0 = T * i / tiles, rows = T * (i + 1) / tiles - r0;
      const std::uint8_t* ar = a + static_cast<std::size_t>(r0) * IC;
      if (rows == kRows) gemm_rows<kRows>(ar, IC, b, comp, c + r0 * 32);
      else gemm_tail(rows, ar, IC, b, comp, c + r0 * 32, std::make_integer_sequence<int, kRows - 1>());
    }
  }
}

// Y = A^T M A of the panel's 32 channels for the chunk's tiles, with bias,
// ReLU and the output's form.
void output_panel(const WinogradU8Plan& p, int panel, int t0, int T, const Scratch& s, void* dst) {
  const int OC = p.g.oc, H = p.g.h, W = p.g.w;
  const __m512 zero = _mm512_setzero_ps(), top = _mm512_set1_ps(255.f), inv = _mm512_set1_ps(p.inv_s_out);
  for (int t = 0; t < T; ++t) {
    const int n = (t0 + t) / p.per_image, ti = (t0 + t) % p.per_image;
    const int oy = (ti / p.tiles_w) * 2, ox = (ti % p.tiles_w) * 2;
    const std::size_t image = static_cast<std::size_t>(n) * p.dst_stride();
    for (int h = 0; h < 2; ++h) {
      const int o = panel * 32 + h * 16;
      __m512 m[16];
      for (int q = 0; q < 16; ++q) {
        const __m512i acc = _mm512_load_si512(s.c + (static_cast<std::size_t>(q) * T + t) * 32 + h * 16);
        m[q] = _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(acc), _mm512_loadu_ps(p.su + q * OC + o)),
                             _mm512_set1_ps(s.rs[q * T + t]));
      }
      __m512 r[4][2];
      for (int i = 0; i < 4; ++i) {
        r[i][0] = _mm512_add_ps(_mm512_add_ps(m[i * 4], m[i * 4 + 1]), m[i * 4 + 2]);
        r[i][1] = _mm512_sub_ps(_mm512_sub_ps(m[i * 4 + 1], m[i * 4 + 2]), m[i * 4 + 3]);
      }
      const __m512 b = _mm512_loadu_ps(p.bias + o);
      for (int i = 0; i < 2 && oy + i < H; ++i)
        for (int j = 0; j < 2 && ox + j < W; ++j) {
          __m512 y = i == 0 ? _mm512_add_ps(_mm512_add_ps(r[0][j], r[1][j]), r[2][j])
                            : _mm512_sub_ps(_mm512_sub_ps(r[1][j], r[2][j]), r[3][j]);
          y = _mm512_add_ps(y, b);
          if (p.relu) y = _mm512_max_ps(y, zero);
          const std::size_t at = image + (static_cast<std::size_t>(oy + i) * W + ox + j) * OC + o;
          if (p.inv_s_out > 0) {
            y = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(y, inv), zero), top);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<std::uint8_t*>(dst) + at),
                             _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(y)));
          } else {
            _mm512_storeu_ps(static_cast<float*>(dst) + at, y);
          }
        }
    }
  }
}

// Tiles [begin, end) through panels [p0, p1), in chunks of equal size (+-1).
void run_range(const WinogradU8Plan& p, const std::uint8_t* src, void* dst, const Scratch& s, int begin, int end, int p0,
               int p1) {
  const int chunks = (end - begin + p.chunk - 1) / p.chunk;
  for (int k = 0; k < chunks; ++k) {
    const int t0 = begin + (end - begin) * k / chunks, T = begin + (end - begin) * (k + 1) / chunks - t0;
    input_tiles(p, src, t0, T, s);
    for (int panel = p0; panel < p1; ++panel) {
      gemm_panel(p, panel, T, s);
      output_panel(p, panel, t0, T, s, dst);
    }
  }
}

}  // namespace

void winograd_u8_run_vnni(const WinogradU8Plan& p, const std::uint8_t* src, void* dst, void* scratch, int threads,
                          int images) {
  const int tiles = images * p.per_image, panels = p.g.oc / 32;
  // Few tiles (under a chunk a thread): the threads share the panels, each
  // transforming all of the input, and read only their share of U.
  const bool by_panels = tiles < threads * p.chunk && panels >= threads;
#pragma omp parallel num_threads(threads)
  {
    const int id = omp_get_thread_num(), nt = omp_get_num_threads();
    const Scratch s(p, static_cast<char*>(scratch) + p.thread_bytes() * static_cast<std::size_t>(id));
    if (by_panels) run_range(p, src, dst, s, 0, tiles, panels * id / nt, panels * (id + 1) / nt);
    else run_range(p, src, dst, s, tiles * id / nt, tiles * (id + 1) / nt, 0, panels);
  }
}

}  // namespace vinfer::cpu
