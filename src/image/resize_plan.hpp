// Internal: the coefficient tables that encode each framework's resize rule.
//
// A resize is separable: every output pixel along an axis reads a contiguous
// window of source pixels [start, start + count) with per-tap weights. The
// rule of each framework (coordinate mapping, kernel, support, normalisation,
// edge handling) lives entirely in these tables; the kernels that apply them
// only differ in arithmetic (float, Pillow's 22-bit fixed point, OpenCV's
// 11-bit fixed point).
#pragma once
#include <cstdint>
#include <vector>

#include "vinfer/resize.hpp"

namespace vinfer::detail {

// A gather of a few consecutive source bytes per output of a gray row, done
// with byte shuffles instead of AVX2's slow gathers: block b (outputs 8b to
// 8b+7) loads 16 bytes at base[2b] (outputs 0-3) and 16 at base[2b+1]
// (outputs 4-7) into the two 128-bit lanes of one register, and mask (32
// bytes per block) moves each output's bytes into its slot. It covers the
// leading blocks whose windows fit (four outputs within 16 bytes, loads inside
// the row); the general kernel does the rest of the row.
struct ShuffleGather {
  int blocks = 0;
  std::vector<int> base;
  std::vector<std::int8_t> mask;
};
constexpr int kZeroByte = -128;
// pattern: one output's slot, as byte offsets from its source index xs[i]
// (kZeroByte: a zero byte); its size is the slot width (1 or 4 bytes).
ShuffleGather make_shuffle_gather(const std::vector<int>& xs, int in_size, const std::vector<int>& pattern);

struct AxisTaps {
  int in_size = 0;
  int out_size = 0;
  int max_taps = 0;              // window length, padded with zero weights
  std::vector<int> start;        // out_size: first source index (start + max_taps <= in_size)
  std::vector<int> count;        // out_size: taps that carry weight (<= max_taps)
  std::vector<double> weight;    // out_size * max_taps
  std::vector<std::int32_t> fixed;  // same layout, fixed-point weights when the arithmetic uses them
  std::vector<float> fweight;    // same layout, float weights for the float kernels
  // Pillow on u8 with <= 16 taps: weights split as hi * 2^11 + lo for the
  // 16-bit multiply-add kernel (16 per output), and how many leading outputs
  // can load 16 source pixels without reading past the row.
  std::vector<std::int16_t> split_hi, split_lo;
  int split_safe_end = 0;
  // With <= 8 taps, the same weights per block of 8 outputs as 4 registers of
  // [output j: 8 taps | output j + 4: 8 taps], for the leading blocks whose
  // 8-byte loads stay in the row.
  std::vector<std::int16_t> split8_hi, split8_lo;
  int split8_blocks = 0;
  // The same for interleaved RGB: per output, 4 groups of 16 weights laid out
  // as [w0 w1 w0 w1 w0 w1 0 0 | w2 w3 w2 w3 w2 w3 0 0] (see the RGB kernel).
  std::vector<std::int16_t> split3_hi, split3_lo;
  int split3_groups = 0, split3_safe_end = 0;
  // Pillow on RGB u8 with <= 32 taps: each weight as digits3_count signed
  // bytes (w = ... + d2 * 2^14 + d1 * 2^7 + d0; 3 when every |w| < 2^21,
  // else 4) for the AVX-512 VNNI kernel; per output digits3_regs (1 or 2) x
  // [d0 | d1 | ...] x 64 bytes, a byte per tap and channel; digits3_regs 0:
  // up to 8 taps, per pair of outputs one [d0 | d1 | ...] x 64 bytes (the
  // odd output in the upper half). Empty where the kernel does not apply.
  std::vector<std::int8_t> digits3;
  int digits3_regs = 0, digits3_count = 0;
  // OpenCV INTER_LINEAR / INTER_CUBIC on u8 only: its own taps (2 or 4 per
  // output), unmerged even where several clamp to the same edge row (its
  // vertical pass rounds per tap).
  int cv_ksize = 0;
  std::vector<int> cv_index;           // cv_ksize per output
  std::vector<std::int32_t> cv_weight;  // cv_ksize per output
  // ... and the two contiguous taps packed as 16-bit pairs for the gray gather
  // kernel (max_taps == 2), with the outputs whose 4-byte load stays in the row.
  std::vector<std::int32_t> packed2;
  int packed2_safe_end = 0;
  // Gray rows with two taps: (s[i], s[i+1]) as a 16-bit pair per 32-bit slot.
  ShuffleGather pair_shuffle;
  // Gray rows with 2 to 4 float taps: the taps' bytes in each output's 32-bit
  // slot, and the float weights per block as taps x 8 (tap-major).
  ShuffleGather tap_shuffle;
  std::vector<float> fweight_blocked;
};

// How the weights are applied. Each is bit-exact with one framework's kernel.
enum class Arith {
  Nearest,       // index tables only
  Float,         // float32 separable convolution (PyTorch, TensorFlow, float input)
  PilFixed,      // Pillow: 22-bit integer weights, u8 clipped between passes
  CvLinearFixed, // OpenCV INTER_LINEAR/INTER_AREA-upscale on u8: 11-bit weights
  CvCubicFixed,  // OpenCV INTER_CUBIC on u8: 11-bit weights
  CvAreaFloat,   // OpenCV INTER_AREA downscale on u8: float weights, rounded at the end
  CvAreaFast,    // OpenCV INTER_AREA integer factor on u8: integer sum times 1/area
};

struct ResizePlan {
  Arith arith = Arith::Float;
  AxisTaps x, y;                  // empty for Nearest
  std::vector<int> nearest_x, nearest_y;  // source index per output (Nearest)
  int nearest_gather_safe_end = 0;        // leading outputs whose 4-byte gather stays in the row
  ShuffleGather nearest_u8, nearest_f32;  // gray rows: byte slots and 32-bit slots
  bool skip_x = false, skip_y = false;    // pass left out (Pillow skips a pass whose size is unchanged)
  bool pil_vertical_first = false;  // Pillow's pass order (the u8 intermediate makes it matter)
  bool pil_premultiply = false;   // Pillow resizes RGBA as premultiplied RGBa
  int area_fast_x = 0, area_fast_y = 0;   // CvAreaFast factors
};

// Builds the plan for a geometry. u8_io selects the framework's integer path
// where it has one (Pillow, OpenCV); otherwise the float path.
ResizePlan make_resize_plan(const ResizeSpec& spec, int in_w, int in_h, int out_w, int out_h,
                            int channels, bool u8_io);

// How many leading entries of the non-decreasing `start` satisfy
// start[i] * scale + extra <= limit: the outputs a wide load may serve.
int leading_within(const std::vector<int>& start, int scale, int extra, int limit);

// Trims zero-weight taps at the window ends and pads each window to max_taps
// (moving start left near the right edge so every window stays inside the image).
void finalize_taps(AxisTaps& t);

}  // namespace vinfer::detail
