// Internal: a 1x1 convolution (stride 1 or 2) on channel-blocked tensors
// (nChw8c / nChw16c, batch 1) that can apply a per-channel scale, shift and
// optional ReLU to its input as it reads it, and add a residual as it
// writes: DenseNet's BatchNorm -> ReLU -> Conv1x1 on the concatenated
// features, without writing the normalized copy of the whole concatenation to
// memory and reading it back (the separate pass was ~10 % of DenseNet121's
// forward pass).
//
// Per register tile of pixels (12 with AVX-512, 6 with AVX2) the input is
// normalized into a small packed buffer (rows of ic floats, in L1/L2), then
// multiplied by the weights (packed once at load, per 2 vectors of output
// channels: [oc / 2L][ic][2L]) in the same GEMM register tiles as Winograd's;
// bias, the residual and the output clamp are applied as the accumulators are
// stored. Without a pre-activation it runs ResNet's 1x1s on small maps, where
// it lets the layer prefetch the next layers' weights (prefetch.hpp), and,
// packing each pixel's 3x3 window into its row (im2col), ResNet's stride-2
// 3x3s.
#pragma once
#include <cstddef>
#include <limits>
#include <vector>

#include "cpu/aligned.hpp"
#include "cpu/out_act.hpp"
#include "cpu/prefetch.hpp"

namespace vinfer::cpu {

struct Conv1x1Geometry {
  // Channels: any (the input's last block is read up to ic, its padding
  // lanes ignored; the output's last block is written whole, zeros on its
  // padding lanes).
  int ic = 0, oc = 0;
  int hw = 0;          // output pixels
  int block = 8;       // channel block of src and dst (8 or 16)
  // Stride 2 (ResNet's downsampling shortcuts): the input is in_h x in_w and
  // the output ow pixels wide. Stride 1: the input has the output's pixels.
  int stride = 1, in_h = 0, in_w = 0, ow = 0;
  // A 3x3 window (kernel 3, padding pad) as a GEMM: each pixel's packed row
  // holds its 9 taps' channels (im2col), ic x 9 long.
  int kernel = 1, pad = 0;
  bool gathers() const { return stride != 1 || kernel != 1; }
  std::size_t in_pixels() const { return gathers() ? static_cast<std::size_t>(in_h) * in_w : static_cast<std::size_t>(hw); }
  int ic_blocks() const { return (ic + block - 1) / block * block; }  // ic, rounded up to the block
  // The GEMM's k: ic itself for a plain 1x1 (24 input channels cost 24
  // multiply-adds per output, not 32); with a gather, each tap's channels
  // rounded up to the block (zero weights on the padding).
  int depth() const { return gathers() ? ic_blocks() * kernel * kernel : ic; }
};

// The most pixels a kernel call packs (conv1x1.cpp's blocks).
constexpr int kMaxBlockPixels = 64;

// The packed input's row stride for a GEMM depth k: k rounded up to 16 (the
// packing stores whole vectors) plus one cache line, so that a register
// tile's rows do not all fall in one L1 set when it is a multiple of 4 KiB.
inline int packed_ld(int k) { return (k + 15) / 16 * 16 + 16; }

// The normalization applied to each input channel: max(x * scale + shift, lo).
// No scale: none (the input is used as it is). per_image: a scale only,
// given to run() per image (squeeze-and-excite's, x * s with s computed
// from the image), not here.
struct PreActivation {
  const float* scale = nullptr;
  const float* shift = nullptr;
  float lo = -std::numeric_limits<float>::infinity();  // 0 for a ReLU
  bool per_image = false;
};

// What one call of a kernel reads and writes: dst = act(W x pre(src) + bias
// (+ res)), act the clamp to [lo, hi] or `act`. res: a tensor of dst's layout
// added before it (a residual connection), or null.
struct Conv1x1Call {
  const float* src = nullptr;
  const float* w = nullptr;  // packed
  const float* bias = nullptr;
  const float* pre_scale = nullptr;  // null: no pre-activation
  const float* pre_shift = nullptr;
  float pre_lo = 0, lo = 0, hi = 0;
  OutAct act = OutAct::Clamp;
  const float* res = nullptr;
  float* dst = nullptr;
};

// Pixels [p0, p0 + rows), output channels [oc0, oc1) (multiples of the
// block). packed: rows x ic floats of scratch; pf: what to prefetch meanwhile
// (or null).
using Conv1x1RowsFn = void (*)(const Conv1x1Geometry& g, const Conv1x1Call& c, int p0, int rows, int oc0, int oc1,
                               float* packed, PrefetchCursor* pf);
void conv1x1_rows_avx2(const Conv1x1Geometry& g, const Conv1x1Call& c, int p0, int rows, int oc0, int oc1, float* packed,
                       PrefetchCursor* pf);
void conv1x1_rows_avx512(const Conv1x1Geometry& g, const Conv1x1Call& c, int p0, int rows, int oc0, int oc1,
                         float* packed, PrefetchCursor* pf);

class Conv1x1Pre {
 public:
  // Whether a kernel for the block runs here and handles this geometry.
  static bool supports(const Conv1x1Geometry& g);

  // weights: OIHW (oc x ic x 1 x 1); bias: oc values or null; pre: ic scales
  // and shifts, or none. Outputs are clamped to [lo, hi], or (act not Clamp)
  // go through act; a residual is added only with Clamp.
  Conv1x1Pre(const Conv1x1Geometry& g, const float* weights, const float* bias, const PreActivation& pre,
             float lo = -std::numeric_limits<float>::infinity(), float hi = std::numeric_limits<float>::infinity(),
             OutAct act = OutAct::Clamp);

  // src, dst: blocked tensors of the geometry; scratch: 64-byte aligned,
  // scratch_bytes(threads) long. Runs on at most `threads` OpenMP threads,
  // which meanwhile prefetch `prefetch` (the next layers' weights) into L2.
  // residual: a tensor like dst added before the clamp (ResNet's shortcut), or null.
  // images: a batch, src_image and dst_image floats apart (residual as dst);
  // each thread keeps its share of the weights for all of them.
  // scale (PreActivation::per_image): each image's input channel scales,
  // ic rounded up to the block (the padding any finite value), scale_image
  // floats apart.
  std::size_t scratch_bytes(int threads) const;
  void run(const float* src, float* dst, void* scratch, int threads, const std::vector<ByteSpan>* prefetch = nullptr,
           const float* residual = nullptr, int images = 1, std::size_t src_image = 0, std::size_t dst_image = 0,
           const float* scale = nullptr, std::size_t scale_image = 0) const;

  // Pixels [p0, p1) and output channels [oc0, oc1) (multiples of the
  // block, up to oc rounded up to it) of one image, on this thread (no
  // per-image scale), fetching what pf hands out (or nothing: null; not
  // the layer's own weights); packed: scratch_bytes(1) bytes of it.
  void run_pixels(const float* src, float* dst, const float* residual, int p0, int p1, int oc0, int oc1,
                  float* packed, PrefetchCursor* pf = nullptr) const;
  // About how many register tiles run_pixels runs for `pixels` pixels of
  // oc1 - oc0 channels (PrefetchCursor's calls).
  long tiles(int pixels, int channels) const;

  // (oc rounded up to the block)
  const Conv1x1Geometry& geometry() const { return g_; }

  // The packed weights (depth x oc floats).
  const void* packed_weights() const { return w_.get(); }
  std::size_t packed_weight_bytes() const { return sizeof(float) * g_.depth() * g_.oc; }

 private:
  // Register tiles of pixels per block (one packing, one pass over the
  // weights); a small map with large weights is one block (constructor).
  static constexpr int kTiles = 4;
  Conv1x1Geometry g_;  // oc rounded up to the block (zero weights and bias there)
  int rows_ = 12;  // the GEMM's register-tile rows
  int block_px_ = 48;  // pixels per block
  Conv1x1RowsFn rows_fn_ = nullptr;
  Block w_;  // [oc / 2L][ic][2L], a last group of L where oc is an odd number of vectors
  std::vector<float> bias_, scale_, shift_;  // (per_image: shift_ zeros, scale_ empty)
  float pre_lo_, lo_, hi_;
  OutAct act_;
  bool own_next_ = true;  // PrefetchCursor::own_next
};

}  // namespace vinfer::cpu
