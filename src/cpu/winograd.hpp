// Internal: Winograd F(4x4, 3x3) for stride-1 3x3 convolutions on
// channel-blocked tensors (nChw8c / nChw16c, batch 1), vinfer's own kernel for
// machines where oneDNN 2.6 has no Winograd (AVX2). A 6x6 input tile gives a
// 4x4 output tile with 36 multiplications per channel pair instead of 144
// (4x fewer); the transforms are adds and a few multiplies.
//
// Three steps: input transform (V = B^T d B), 36 GEMMs against the weights
// transformed once at load (U = G g G^T), output transform (Y = A^T M A)
// with bias and clamp, written into dst. Two ways to split them:
// - by tiles: each thread takes an equal run of tiles, in chunks of at most
//   two GEMM register tiles of rows, each chunk through all three steps while
//   its scratch stays in L2. Each chunk reads all of U: good while U is small
//   next to the work of a chunk (DenseNet's 128 -> 32 layers on large maps).
// - by positions: all threads transform their share of all tiles, then each
//   multiplies its share of the 36 positions for all tiles (reading only its
//   share of U, once), then each transforms its tiles' outputs; two barriers.
//   For wide layers on small maps (U over 1 MiB, at most 64 tiles: VGG19's
//   and ResNet50's 28x28 and 14x14 layers).
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "cpu/aligned.hpp"
#include "cpu/prefetch.hpp"

namespace vinfer::cpu {

struct WinogradGeometry {
  int ic = 0, oc = 0;        // channels (multiples of the block)
  int h = 0, w = 0;          // input size
  int oh = 0, ow = 0;        // output size
  int pad_t = 0, pad_l = 0;  // leading padding (0..2)
  int block = 8;             // channel block of src and dst (8 or 16)
};

// The distance (in floats) between the 36 positions of V or M for `floats`
// per position: whole cache lines, an odd number of them, so that the 36
// lines a tile's transform stores (or the output transform loads) fall in 36
// different L1 sets. With 196 x 128 floats (DenseNet's 56x56 layers) the
// positions were 0x800 bytes apart modulo 4 KiB (two sets for 36 lines), with
// 24 x 128 (a chunk) all in one set (that layer, split by tiles, 2 threads:
// 0.27 ms then, 0.19 now).
inline std::size_t position_stride(std::size_t floats) {
  const std::size_t lines = (floats + 15) / 16;
  return (lines | 1) * 16;
}

// The kernels of one ISA. chunk: tiles [tile0, tile0 + T) through the three
// steps, v and m the thread's scratch (36 x T x ic and 36 x T x oc floats,
// positions position_stride() apart). input / gemm / output: one step each,
// on V[36][tiles][ic] and M[36][tiles][oc], positions v_stride / m_stride
// floats apart (v and m point at tile0's row), with pf_bytes at pf prefetched
// into L2 during the input transform; gemm: C[T][n] = A[T][k] x B[k][n].
// chunk and gemm prefetch what pf hands out (or nothing: null).
struct WinogradKernelFns {
  void (*chunk)(const WinogradGeometry& g, int tiles_w, int tile0, int T, const float* src, const float* u,
                bool prefetch_u, const float* bias, float lo, float hi, float* v, float* m, float* dst,
                PrefetchCursor* pf);
  void (*input)(const WinogradGeometry& g, int tiles_w, int tile0, int T, std::size_t v_stride, const float* src,
                float* v, const float* pf, std::size_t pf_bytes);
  void (*gemm)(const float* a, const float* b, float* c, int k, int n, int T, PrefetchCursor* pf);
  void (*output)(const WinogradGeometry& g, int tiles_w, int tile0, int T, std::size_t m_stride, const float* m,
                 const float* bias, float lo, float hi, float* dst);
};
extern const WinogradKernelFns winograd_avx2;
extern const WinogradKernelFns winograd_avx512;

class WinogradF43 {
 public:
  // How threads share the work (above); Auto: choose_split(g).
  enum class Split { Auto, Tiles, Positions };

  // Whether a kernel for the block runs here (8: AVX2 + FMA, 16: AVX-512)
  // and handles this geometry.
  static bool supports(const WinogradGeometry& g);

  // weights: OIHW (oc x ic x 3 x 3); bias: oc values or null. Output values
  // are clamped to [lo, hi] (ReLU: lo = 0; Clip: its bounds).
  WinogradF43(const WinogradGeometry& g, const float* weights, const float* bias,
              float lo = -std::numeric_limits<float>::infinity(), float hi = std::numeric_limits<float>::infinity(),
              Split split = Split::Auto);

  // src, dst: blocked tensors of the geometry. Runs on the current OpenMP
  // threads; allocates only when more threads run it than ever before.
  void run(const float* src, float* dst);

  // The same on caller-provided scratch (64-byte aligned, scratch_bytes(threads)
  // long), with at most `threads` threads: a network's Winograd layers then share
  // one scratch buffer, which stays in cache from layer to layer. The threads
  // meanwhile prefetch `prefetch` (the next layers' weights) into L2.
  std::size_t scratch_bytes(int threads) const;
  void run(const float* src, float* dst, void* scratch, int threads, const std::vector<ByteSpan>* prefetch = nullptr);

  const WinogradGeometry& geometry() const { return g_; }

  Split split() const { return split_; }
  // Changes how threads share the work (not Auto); the transformed weights
  // serve both ways, so trying both costs one transform.
  void set_split(Split split) {
    if (split != split_) split_ = split, release_scratch();
  }
  // Frees the scratch run(src, dst) allocated for itself.
  void release_scratch() { own_scratch_.reset(), own_threads_ = 0; }
  // The transformed weights (36 x ic x oc floats).
  const void* transformed_weights() const { return u_.get(); }
  std::size_t transformed_weight_bytes() const { return sizeof(float) * 36 * g_.ic * g_.oc; }
  // Chooses by shape; VINFER_WINOGRAD_SPLIT=tiles|positions overrides.
  static Split choose_split(const WinogradGeometry& g);

 private:
  WinogradGeometry g_;
  Split split_ = Split::Tiles;
  int tiles_w_ = 0, tiles_ = 0;
  int rows_ = 12;        // the GEMM's register-tile rows
  int max_chunk_ = 24;   // tiles per chunk (the last of a thread takes up to rows_ - 1 more)
  const WinogradKernelFns* fns_ = nullptr;
  Block u_;                  // [36][oc / 2L][ic][2L]
  std::vector<float> bias_;  // oc
  float lo_, hi_;
  Block own_scratch_;  // for run(src, dst)
  int own_threads_ = 0;

  std::size_t thread_floats() const;
  void run_by_positions(const float* src, float* dst, float* scratch, int max_threads,
                        const std::vector<ByteSpan>* prefetch);
};

}  // namespace vinfer::cpu
