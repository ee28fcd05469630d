// Internal: a preset's resize (+ centre crop) and normalize for one source
// size as one per-pixel formula, for a backend that runs it as a single
// kernel straight into the network's input (the CUDA backend). Only presets
// whose resize is Pillow's fuse (its 22-bit fixed-point convolution, or
// NEAREST as one tap of weight 1.0); the formula recomputes the first pass's
// u8 values for each output row instead of storing them, and its results are
// the same bytes and floats as Preprocessor::run's (tested on the host).
//
// The formula itself is in fused_prep_kernel.hpp (host and device code).
#pragma once
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "image/fused_prep_kernel.hpp"
#include "vinfer/preprocess.hpp"

namespace vinfer::detail {

// A preset's resize target for a source size (torchvision's Resize(int) rule
// when it resizes the shorter side), and the top-left corner of its centre
// crop in the resized image (throws InvalidArgument when it is smaller).
std::pair<int, int> preset_resize_target(const Preset& p, int src_w, int src_h);
std::pair<int, int> preset_crop(const Preset& p, int resized_w, int resized_h);

// The framework's float32 value for each u8 value, per output channel (the
// table normalize_to_tensor uses): output channel c of value v is table[c][v].
std::array<std::array<float, 256>, 3> normalize_table(const Preset& p);
// normalize_to_tensor's rows [y0, y1) of `rgb` (the whole image; rows of
// `out` as in the whole tensor), with no checks: for a caller that
// normalizes rows as they become final.
void normalize_rows(const ImageView<std::uint8_t>& rgb, const Preset& p, float* out, int y0, int y1);

// The tables of one (preset, source size), on the host.
struct FusedPrep {
  int src_w = 0, src_h = 0;
  FusedPrepArgs shape;  // sizes and flags; every pointer null
  std::vector<std::int32_t> start_x, weight_x, start_y, weight_y;
  std::vector<float> table;  // 3 x 256
  // shape with the pointers into this object's tables and the given image and output.
  FusedPrepArgs args(const ImageView<std::uint8_t>& rgb, float* out) const;
};

// Whether two presets preprocess alike (what a cached plan depends on; the
// decode options aside).
bool same_preprocessing(const Preset& a, const Preset& b);
// Whether the preset's resize has the fused form (Pillow's rules).
bool can_fuse(const Preset& p);
// Throws InvalidArgument for a size the preset cannot take (as Preprocessor does).
FusedPrep make_fused_prep(const Preset& p, int src_w, int src_h);
// The formula on the host, every pixel: what the device kernel computes.
void fused_prep_host(const FusedPrep& f, const ImageView<std::uint8_t>& rgb, float* out);

}  // namespace vinfer::detail
