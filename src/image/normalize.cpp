// u8 HWC -> float NCHW/NHWC through a 256-entry table per channel. Each table
// entry is computed with the framework's own float32 sequence of operations,
// so the tensor is bit-identical to torchvision's / Keras's, and the pass is
// a lookup and a store per value.
#include <array>

#include "image/fused_prep.hpp"
#include "vinfer/error.hpp"
#include "vinfer/preprocess.hpp"

namespace vinfer {
namespace detail {

std::array<std::array<float, 256>, 3> normalize_table(const Preset& p) {
  std::array<std::array<float, 256>, 3> t{};
  for (int c = 0; c < 3; ++c) {
    // Output channel c reads input channel src (BGR for caffe).
    const int src = p.normalize == NormalizeMode::CaffeBgr ? 2 - c : c;
    for (int v = 0; v < 256; ++v) {
      const float x = static_cast<float>(v);
      float r = 0.f;
      switch (p.normalize) {
        case NormalizeMode::TorchMeanStd: {
          volatile float a = x / 255.0f;  // volatile: keep each float32 rounding step
          volatile float b = a - p.mean[src];
          r = b / p.std[src];
          break;
        }
        case NormalizeMode::CaffeBgr: r = x - p.mean[c]; break;
        case NormalizeMode::TfSymmetric: {
          volatile float a = x / 127.5f;
          r = a - 1.0f;
          break;
        }
      }
      t[c][v] = r;
    }
  }
  return t;
}

}  // namespace detail

void normalize_to_tensor(const ImageView<std::uint8_t>& rgb, const Preset& p, float* out) {
  if (rgb.channels != 3) throw Error(ErrorKind::InvalidArgument, "normalize: expects an RGB image");
  thread_local Preset last;
  thread_local std::array<std::array<float, 256>, 3> table;
  thread_local bool ready = false;
  if (!ready || last.normalize != p.normalize || last.mean != p.mean || last.std != p.std) {
    table = detail::normalize_table(p);
    last = p;
    ready = true;
  }
  const int W = rgb.width, H = rgb.height;
  const std::size_t plane = static_cast<std::size_t>(W) * H;
  const bool bgr = p.normalize == NormalizeMode::CaffeBgr;
  for (int y = 0; y < H; ++y) {
    const std::uint8_t* s = rgb.row(y);
    if (p.layout == Layout::NCHW) {
      float* d0 = out + static_cast<std::size_t>(y) * W;
      float* d1 = d0 + plane;
      float* d2 = d1 + plane;
      for (int x = 0; x < W; ++x, s += 3) {
        d0[x] = table[0][s[bgr ? 2 : 0]];
        d1[x] = table[1][s[1]];
        d2[x] = table[2][s[bgr ? 0 : 2]];
      }
    } else {
      float* d = out + static_cast<std::size_t>(y) * W * 3;
      for (int x = 0; x < W; ++x, s += 3, d += 3) {
        d[0] = table[0][s[bgr ? 2 : 0]];
        d[1] = table[1][s[1]];
        d[2] = table[2][s[bgr ? 0 : 2]];
      }
    }
  }
}

}  // namespace vinfer
