// Internal: int8 Winograd F(2x2, 3x3) for 3x3 stride-1 convolutions with
// padding 1 on u8 channels-last input (int8 precision), vinfer's own kernel
// for AVX-512 VNNI.
//
// oneDNN's int8 direct convolutions already run at the VNNI limit, and its
// int8 Winograd quantizes the transformed input by a fixed factor (4x the
// input's step: 3.4x the error). Here each 4x4 input tile d of 32 channels
// is transformed exactly in 16-bit integers (V = B^T d B: sums and
// differences of at most four u8 values, within +-1020), then each of its
// 16 positions is quantized over all input channels by its own largest
// value (as it is where that is at most 127): the step follows the
// tile's content, so smooth regions (small differences) lose nothing. The
// weights are transformed in float (U = G g G^T) and quantized per position
// and output channel. One GEMM per position multiplies u8 (V + 128) by s8
// U into int32 (VNNI; the +128 taken back by a per-column constant), each
// product is scaled back to float by its row's and column's scales, and the
// output transform (Y = A^T M A), bias, ReLU and the output's quantization
// run in float. 16 multiplications per 2x2 outputs instead of 36: 2.25x
// fewer, at VNNI's rate.
//
// Work: chunks of tiles (their transformed input, u8, stays in L2), each
// through all 32-channel panels of output: the 16 GEMMs of a panel, then
// its output transform. Two threads or more share the tiles, or, where
// there are few (14x14 maps), the panels (each transforms the input).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpu/aligned.hpp"

namespace vinfer::cpu {

struct WinogradU8Geometry {
  int ic = 0, oc = 0;  // channels (multiples of 32)
  int h = 0, w = 0;    // input and output size (stride 1, padding 1 on every side)
  std::size_t src_image = 0, dst_image = 0;  // elements from one image to the next (0: packed)
};

// What the kernels read: the geometry, the packed weights and the scales.
struct WinogradU8Plan {
  WinogradU8Geometry g;
  int tiles_w = 0, per_image = 0;  // output tiles of 2x2 per row, per image
  int chunk = 0;                   // tiles per chunk
  const std::int8_t* u = nullptr;  // [16][oc / 32][ic / 4][32][4]: each position's panels, VNNI order
  const std::int32_t* neg_comp = nullptr;  // [16][oc]: -128 x the column's sum of u
  const float* su = nullptr;               // [16][oc]: u's scales
  const float* bias = nullptr;             // [oc]
  float s_in = 1.f;      // the input's scale (value = u8 x s_in)
  float inv_s_out = 0.f; // 1 / the output's scale, u8 output; 0: float32 output
  bool relu = false;

  std::size_t src_stride() const { return g.src_image ? g.src_image : static_cast<std::size_t>(g.h) * g.w * g.ic; }
  std::size_t dst_stride() const { return g.dst_image ? g.dst_image : static_cast<std::size_t>(g.h) * g.w * g.oc; }
  // Scratch of one thread.
  std::size_t thread_bytes() const;
};

// The AVX-512 VNNI kernels (winograd_u8_vnni.cpp), and the same arithmetic
// in plain C++ (the reference the tests hold them to, bit for bit).
void winograd_u8_run_vnni(const WinogradU8Plan& p, const std::uint8_t* src, void* dst, void* scratch, int threads,
                          int images);
void winograd_u8_run_plain(const WinogradU8Plan& p, const std::uint8_t* src, void* dst, int images);

class WinogradU8 {
 public:
  // Whether the kernel runs here (AVX-512 VNNI) and takes the geometry.
  static bool supports(const WinogradU8Geometry& g);

  // weights: OIHW (oc x ic x 3 x 3), float32; bias: oc values or null.
  // s_in: the u8 input's scale. s_out: the u8 output's scale, or 0 for
  // float32 output (channels-last). relu: clamp the output at 0.
  WinogradU8(const WinogradU8Geometry& g, const float* weights, const float* bias, float s_in, float s_out, bool relu);

  // src: u8 NHWC; dst: u8 or float32 NHWC; scratch: scratch_bytes(threads),
  // 64-byte aligned. Runs on at most `threads` OpenMP threads.
  std::size_t scratch_bytes(int threads) const { return plan_.thread_bytes() * static_cast<std::size_t>(threads); }
  void run(const std::uint8_t* src, void* dst, void* scratch, int threads, int images) const {
    winograd_u8_run_vnni(plan_, src, dst, scratch, threads, images);
  }
  void run_plain(const std::uint8_t* src, void* dst, int images) const { winograd_u8_run_plain(plan_, src, dst, images); }

  const WinogradU8Plan& plan() const { return plan_; }
  void set_image_strides(std::size_t src, std::size_t dst) { plan_.g.src_image = src, plan_.g.dst_image = dst; }
  const void* packed_weights() const { return u_.get(); }
  std::size_t packed_weight_bytes() const { return u_bytes_; }

 private:
  WinogradU8Plan plan_;
  Block u_;
  std::size_t u_bytes_ = 0;
  std::vector<std::int32_t> neg_comp_;
  std::vector<float> su_, bias_;
};

}  // namespace vinfer::cpu
