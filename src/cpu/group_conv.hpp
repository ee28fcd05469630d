// Internal: a grouped convolution whose groups are narrower than a channel
// block (gw = 1, 2, 4 or 8 input and output channels per group, gw dividing
// the block: depthwise, ResNeXt's 4 and 8, RegNet's 8), on
// channel-blocked tensors (nChw8c / nChw16c), any square kernel, stride and
// padding, no dilation, with its bias and output function applied as it
// stores. oneDNN 2.6 has no blocked kernel for such groups and ran them
// channels-last at a fifth of its dense convolutions' speed, plus a layout
// conversion before and after each.
//
// Output lane l of a block belongs to group l / gw, whose inputs are lanes
// (l / gw) x gw + j of the same block, j < gw. 3x3 kernels of stride 1 or 2
// (ResNeXt's, RegNet's) run in the rotated form: the input read in place,
// each input lane multiplied into gw partial sums, partial r holding what
// the lane gives the output r members back in its group (weights packed
// so); the output is partial 0 plus each other partial permuted within
// groups once: gw - 1 permutations per output pixel. Other kernels permute
// each input vector gw times (input j of each lane's group moved to the
// lane) as its row is copied into a ring of k rows (with zero columns for
// the padding and past the last register tile); then each output is gw x k
// x k multiply-adds of whole vectors, in register tiles of T pixels, the
// filter vector loaded once per tile. (The ring form's permutations, gw per
// input pixel, cost as much as the multiply-adds at stride 2: ResNeXt50's
// 256 channels of 8 from 56x56, bench_conv, Zen 4, 2 threads, 0.53 ms
// against the rotated form's 0.20; at stride 1 0.25-0.27 against 0.15-0.20.)
//
// Depthwise (gw = 1) needs no permutation: 3x3 and 5x5 of stride 1 and 2
// read the input rows in place (group_conv_impl.hpp).
#pragma once
#include <cstddef>
#include <limits>

#include "cpu/aligned.hpp"
#include "cpu/out_act.hpp"

namespace vinfer::cpu {

struct GroupConvGeometry {
  int c = 0;                  // channels in and out (the last block's padding lanes are written as zeros)
  int gw = 2;                 // channels per group (1, 2, 4, 8; dividing block and c)
  int h = 0, w = 0;           // input map
  int oh = 0, ow = 0;         // output map
  int k = 3, stride = 1;      // square filter and stride
  int pad_t = 0, pad_l = 0;   // padding before the map (after it: implied by oh, ow)
  int block = 8;              // channel block of src and dst (8 or 16)
  int blocks() const { return (c + block - 1) / block; }
};

// Whether the geometry runs in the rotated form (above).
inline bool rotated_form(const GroupConvGeometry& g) { return g.gw > 1 && g.k == 3 && g.stride <= 2; }

// The register tile (pixels); the ring's width allows for it.
constexpr int kGroupConvTile = 8;
constexpr int kMaxGroupConvKernel = 11;

// A band is computed in strips of output columns, each with its ring of
// input rows: k rows (input row iy in slot ring_slot), each ring_width
// pixels from the strip's first input column on, each pixel gw permuted
// vectors, about 24 KiB in all, so that the ring stays in L1 as it is
// written and read (a ring of whole rows, gw times the input's rows, did
// not: its writes then took as long as the multiply-adds).
inline int ring_slot(const GroupConvGeometry& g, int iy) { return ((iy % g.k) + g.k) % g.k; }
inline int strip_outputs(const GroupConvGeometry& g) {
  const int budget = 24 * 1024 / (4 * g.k * g.gw * g.block);  // input pixels per ring row
  const int fit = budget >= g.k ? (budget - g.k) / g.stride + 1 : 1;
  const int tiles = fit / kGroupConvTile > 1 ? fit / kGroupConvTile : 1;
  const int all = (g.ow + kGroupConvTile - 1) / kGroupConvTile;
  return (tiles < all ? tiles : all) * kGroupConvTile;
}
inline int ring_width(const GroupConvGeometry& g) { return (strip_outputs(g) - 1) * g.stride + g.k; }
inline std::size_t ring_floats(const GroupConvGeometry& g) {
  return static_cast<std::size_t>(g.k) * ring_width(g) * g.gw * g.block;
}

// Output rows [oy0, oy1) of one channel block.
struct GroupConvBand {
  const GroupConvGeometry* g = nullptr;
  const float* src = nullptr;   // the block's input plane (h x w x block floats)
  const float* w = nullptr;     // the block's filters: [ky][kx][j][lane]
  const float* bias = nullptr;  // block floats
  const int* perm = nullptr;    // gw x block lane indices: (lane / gw) x gw + j (rotated: + (lane % gw + j) % gw)
  bool rotated = false;         // the rotated form (rotated_form), w as [ky][kx][r][lane]
  float lo = 0, hi = 0;         // the clamp, for OutAct::Clamp
  OutAct act = OutAct::Clamp;
  int valid = 0;                // the block's real channels (< block: the last, partial one)
  int oy0 = 0, oy1 = 0;
  float* dst = nullptr;         // output row oy0 (ow x block floats; the next rows after it)
  float* ring = nullptr;        // scratch: ring_floats(g)
};

void group_conv_band_avx2(const GroupConvBand& r);
void group_conv_band_avx512(const GroupConvBand& r);

class GroupConv {
 public:
  // Whether a kernel for the block runs here and handles this geometry.
  static bool supports(const GroupConvGeometry& g);

  // weights: c x gw x k x k (ONNX's layout for group = c / gw); bias: c
  // values or null. Outputs are clamped to [lo, hi] (which must hold 0: the
  // padding lanes), or (act not Clamp) go through act.
  GroupConv(const GroupConvGeometry& g, const float* weights, const float* bias,
            float lo = -std::numeric_limits<float>::infinity(), float hi = std::numeric_limits<float>::infinity(),
            OutAct act = OutAct::Clamp);

  // src, dst: blocked tensors of the geometry, `images` of them, src_image
  // and dst_image floats apart (0: their size). scratch: 64-byte aligned,
  // scratch_bytes(threads) long. Runs on at most `threads` OpenMP threads.
  std::size_t scratch_bytes(int threads) const;
  void run(const float* src, float* dst, void* scratch, int threads, int images = 1, std::size_t src_image = 0,
           std::size_t dst_image = 0) const;

  // Output rows [oy0, oy1) of channel block blk of one image (src, dst:
  // the image's tensors), on this thread; ring: ring_floats_per_thread()
  // floats of this thread's scratch (64-byte aligned).
  void run_band(const float* src, float* dst, int blk, int oy0, int oy1, float* ring) const;
  std::size_t ring_floats_per_thread() const;

  const GroupConvGeometry& geometry() const { return g_; }
  const void* packed_weights() const { return w_.get(); }
  std::size_t packed_weight_bytes() const {
    return sizeof(float) * static_cast<std::size_t>(g_.blocks()) * g_.block * g_.gw * g_.k * g_.k;
  }

 private:
  GroupConvGeometry g_;
  Block w_;     // [block][ky][kx][j][lane] (rotated form: j the partial), zero on the padding lanes
  Block bias_;  // blocks x block floats, zero on the padding lanes
  int perm_[8 * 16];
  float lo_, hi_;
  OutAct act_;
  bool rotated_;
};

}  // namespace vinfer::cpu
