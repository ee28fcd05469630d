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

void normalize_rows(const ImageView<std::uint8_t>& rgb, const Preset& p, float* out, int y0, int y1) {
  struct Cache {
    Preset last;
    std::array<std::array<float, 256>, 3> table;
    bool ready = false;
  };
  thread_local Cache tls;
  Cache& c = tls;  // one lookup: each use of a thread_local in a shared library is a call
  if (!c.ready || c.last.normalize != p.normalize || c.last.mean != p.mean || c.last.std != p.std) {
    c.table = normalize_table(p);
    c.last = p;
    c.ready = true;
  }
  const bool bgr = p.normalize == NormalizeMode::CaffeBgr;
  const float* t0 = c.table[0].data();
  const float* t1 = c.table[1].data();
  const float* t2 = c.table[2].data();
  const int W = rgb.width, r = bgr ? 2 : 0, b = bgr ? 0 : 2;
  const std::size_t plane = static_cast<std::size_t>(W) * rgb.height;
  for (int y = y0; y < y1; ++y) {
    const std::uint8_t* s = rgb.row(y);
    if (p.layout == Layout::NCHW) {
      float* d0 = out + static_cast<std::size_t>(y) * W;
      float* d1 = d0 + plane;
      float* d2 = d1 + plane;
      for (int x = 0; x < W; ++x, s += 3) {
        d0[x] = t0[s[r]];
        d1[x] = t1[s[1]];
        d2[x] = t2[s[b]];
      }
    } else {
      float* d = out + static_cast<std::size_t>(y) * W * 3;
      for (int x = 0; x < W; ++x, s += 3, d += 3) {
        d[0] = t0[s[r]];
        d[1] = t1[s[1]];
        d[2] = t2[s[b]];
      }
    }
  }
}

}  // namespace detail

void normalize_to_tensor(const ImageView<std::uint8_t>& rgb, const Preset& p, float* out) {
  if (rgb.channels != 3) throw Error(ErrorKind::InvalidArgument, "normalize: expects an RGB image");
  detail::normalize_rows(rgb, p, out, 0, rgb.height);
}

}  // namespace vinfer
