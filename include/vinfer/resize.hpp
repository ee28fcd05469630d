// vinfer/resize.hpp: image resizing that reproduces each framework's rule by name.
//
// A ResizeSpec names the framework (compat) and the filter; the result is the
// one that framework computes: identical bytes for Pillow, OpenCV and PyTorch
// (F.interpolate on a uint8 tensor) on uint8, within 1e-4 (on a 0-255 scale) of
// PyTorch and TensorFlow on float32. docs/compat.md has the details.
//
//   vinfer::ResizeSpec spec;
//   spec.compat = vinfer::Compat::Pil;
//   spec.filter = vinfer::Filter::Bilinear;  // Pillow's BILINEAR: antialiased
//   vinfer::Resizer resizer(spec);           // caches coefficients and scratch
//   resizer.run(src.view(), 224, 224, dst);  // no allocation once warm
//
// Which (compat, filter) pairs exist and what each means:
//   Torch  (F.interpolate):   Nearest (legacy floor rule), NearestExact, Bilinear,
//                             Bicubic (align_corners, antialias), Area (adaptive avg pool)
//   Tf     (tf.image.resize): Nearest, Bilinear, Bicubic (antialias), Area,
//                             Lanczos3 (always scale_and_translate)
//   Pil    (Image.resize):    Nearest, Box, Bilinear, Hamming, Bicubic, Lanczos (always antialiased)
//   OpenCv (cv::resize):      Nearest, NearestExact, Bilinear (INTER_LINEAR), Bicubic, Area
#pragma once
#include <memory>
#include <optional>
#include <string_view>

#include "vinfer/image.hpp"

namespace vinfer {

enum class Compat { Torch, Tf, Pil, OpenCv };
enum class Filter { Nearest, NearestExact, Bilinear, Bicubic, Area, Box, Hamming, Lanczos };

struct ResizeSpec {
  Compat compat = Compat::Pil;
  Filter filter = Filter::Bilinear;
  bool antialias = false;      // Torch, Tf: bilinear/bicubic only. Pil always antialiases.
  bool align_corners = false;  // Torch only
  // Torch only: the scale_factor passed to F.interpolate. When set, PyTorch
  // maps coordinates with 1/scale instead of in/out; the output size must
  // still be given (floor(in * scale), as PyTorch computes it).
  std::optional<double> torch_scale_x, torch_scale_y;
  int threads = 1;  // worker threads for large images (0 = all cores)
};

Compat parse_compat(std::string_view name);  // torch | tf | pil | opencv
// The framework's own default: torch nearest, tf bilinear, pil bicubic, opencv bilinear.
Filter default_filter(Compat c);
Filter parse_filter(std::string_view name);  // nearest | nearest-exact | bilinear | ...
std::string_view to_string(Compat c);
std::string_view to_string(Filter f);

// Throws InvalidArgument when the pair is not one the framework offers.
void validate(const ResizeSpec& spec);

// Resizes interleaved images with 1, 3 or 4 channels. Keeps coefficient tables
// for the last geometry and its scratch buffers, so repeated calls with the
// same sizes do not allocate. Not thread-safe: use one Resizer per thread.
class Resizer {
 public:
  explicit Resizer(const ResizeSpec& spec);
  ~Resizer();
  Resizer(Resizer&&) noexcept;
  Resizer& operator=(Resizer&&) noexcept;

  void run(const ImageView<std::uint8_t>& in, int out_width, int out_height, ImageU8& out);
  // u8 in, float out: the frameworks' float path on an image converted to float.
  void run(const ImageView<std::uint8_t>& in, int out_width, int out_height, ImageF32& out);
  void run(const ImageView<float>& in, int out_width, int out_height, ImageF32& out);

  const ResizeSpec& spec() const;

  // Streaming, for overlapping a resize with the decode that produces its
  // input (Preprocessor does this): where can_stream() says yes (Pillow's
  // or PyTorch's rules on u8, horizontal pass first, both passes needed), stream_rows()
  // runs the horizontal pass of source rows [y0, y1) as soon as they exist,
  // from any one thread; stream_vertical() makes the output rows from y0 on
  // whose taps lie in the first `rows` source rows (all of those through
  // stream_rows() already) and returns where the final rows end now (y0 = 0
  // sizes `out`); stream_finish() makes output rows [y0, out_height) once
  // every source row went through stream_rows(). Same result as run(), to the bit.
  bool can_stream(int in_width, int in_height, int out_width, int out_height, int channels);
  void stream_rows(const ImageView<std::uint8_t>& in, int out_width, int out_height, int y0, int y1);
  int stream_vertical(int out_width, int out_height, int rows, ImageU8& out, int y0);
  void stream_finish(int out_width, int out_height, ImageU8& out, int y0 = 0);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Plain, unoptimised reference implementation of the same rules: the oracle
// that the fast path is tested against. Slow; for tests and debugging.
void resize_reference(const ImageView<std::uint8_t>& in, int out_width, int out_height,
                      const ResizeSpec& spec, ImageU8& out);
void resize_reference(const ImageView<float>& in, int out_width, int out_height,
                      const ResizeSpec& spec, ImageF32& out);

}  // namespace vinfer
