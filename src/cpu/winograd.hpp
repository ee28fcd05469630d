// Internal: Winograd F(4x4, 3x3) for stride-1 3x3 convolutions on
// channel-blocked tensors (nChw8c / nChw16c, batch 1), vinfer's own kernel for
// machines where oneDNN 2.6 has no Winograd (AVX2). A 6x6 input tile gives a
// 4x4 output tile with 36 multiplications per channel pair instead of 144
// (4x fewer); the transforms are adds and a few multiplies.
//
// Each thread takes an equal run of tiles, in chunks of at most two GEMM
// register tiles of rows, each chunk through all three steps while its
// scratch stays in L2: input transform (V = B^T d B),
// 36 small GEMMs against the weights transformed once at load (U = G g G^T),
// output transform (Y = A^T M A) with bias and clamp, written into dst.
#pragma once
#include <cstdint>
#include <limits>
#include <vector>

#include "cpu/aligned.hpp"

namespace vinfer::cpu {

struct WinogradGeometry {
  int ic = 0, oc = 0;        // channels (multiples of the block)
  int h = 0, w = 0;          // input size
  int oh = 0, ow = 0;        // output size
  int pad_t = 0, pad_l = 0;  // leading padding (0..2)
  int block = 8;             // channel block of src and dst (8 or 16)
};

// One chunk of tiles [tile0, tile0 + T) through the three steps; v and m are
// the thread's scratch (36 x T x ic and 36 x T x oc floats).
using WinogradChunkFn = void (*)(const WinogradGeometry& g, int tiles_w, int tile0, int T, const float* src,
                                 const float* u, bool prefetch_u, const float* bias, float lo, float hi, float* v, float* m, float* dst);
void winograd_chunk_avx2(const WinogradGeometry& g, int tiles_w, int tile0, int T, const float* src,
                         const float* u, bool prefetch_u, const float* bias, float lo, float hi, float* v, float* m, float* dst);
void winograd_chunk_avx512(const WinogradGeometry& g, int tiles_w, int tile0, int T, const float* src,
                           const float* u, bool prefetch_u, const float* bias, float lo, float hi, float* v, float* m, float* dst);

class WinogradF43 {
 public:

  // Whether a kernel for the block runs here (8: AVX2 + FMA, 16: AVX-512)
  // and handles this geometry.
  static bool supports(const WinogradGeometry& g);

  // weights: OIHW (oc x ic x 3 x 3); bias: oc values or null. Output values
  // are clamped to [lo, hi] (ReLU: lo = 0; Clip: its bounds).
  WinogradF43(const WinogradGeometry& g, const float* weights, const float* bias,
              float lo = -std::numeric_limits<float>::infinity(), float hi = std::numeric_limits<float>::infinity());

  // src, dst: blocked tensors of the geometry. Runs on the current OpenMP
  // threads; allocates only when more threads run it than ever before.
  void run(const float* src, float* dst);

  // The same on caller-provided scratch (64-byte aligned, scratch_bytes(threads)
  // long), with at most `threads` threads: a network's Winograd layers then share
  // one scratch buffer, which stays in cache from layer to layer.
  std::size_t scratch_bytes(int threads) const;
  void run(const float* src, float* dst, void* scratch, int threads);

  const WinogradGeometry& geometry() const { return g_; }

 private:
  WinogradGeometry g_;
  int tiles_w_ = 0, tiles_ = 0;
  int rows_ = 12;        // the GEMM's register-tile rows
  int max_chunk_ = 24;   // tiles per chunk (the last of a thread takes up to rows_ - 1 more)
  WinogradChunkFn chunk_ = nullptr;
  Block u_;                  // [36][ic][oc]
  std::vector<float> bias_;  // oc
  float lo_, hi_;
  Block own_scratch_;  // for run(src, dst): per thread V [36][T][ic] then M [36][T][oc]
  int own_threads_ = 0;

  std::size_t thread_floats() const;
};

}  // namespace vinfer::cpu
