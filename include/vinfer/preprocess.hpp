// vinfer/preprocess.hpp: a framework's whole preprocessing pipeline, by name.
//
// A preset reproduces, value for value, what a framework's documented image
// pipeline produces from the same file:
//   torchvision       PIL open -> Resize([S,S]) -> ToTensor -> Normalize(ImageNet)   1x3xSxS
//   torchvision-crop  PIL open -> Resize(S*256/224) -> CenterCrop(S) -> ToTensor -> Normalize
//   keras-caffe       load_img(target_size=(S,S)) -> img_to_array -> preprocess_input(mode="caffe")  1xSxSx3, BGR
//   keras-torch       ... preprocess_input(mode="torch")  (Keras DenseNet)
//   keras-tf          ... preprocess_input(mode="tf")     (x / 127.5 - 1)
//
//   vinfer::Preprocessor pre(vinfer::preset("torchvision"));
//   std::vector<float> tensor;
//   pre.run_file("photo.jpg", tensor);  // 1x3x224x224, identical to torchvision's
#pragma once
#include <array>
#include <memory>
#include <string>
#include <utility>
#include <string_view>
#include <vector>

#include "vinfer/decode.hpp"
#include "vinfer/image.hpp"
#include "vinfer/resize.hpp"

namespace vinfer {

enum class Layout { NCHW, NHWC };

// Per-channel value mapping u8 -> float, in the framework's float32 order of operations.
enum class NormalizeMode {
  TorchMeanStd,  // (v / 255 - mean) / std              (ToTensor + Normalize; Keras "torch")
  CaffeBgr,      // v - mean, channels reversed to BGR   (Keras "caffe")
  TfSymmetric,   // v / 127.5 - 1                        (Keras "tf")
};

struct Preset {
  std::string name;
  int size = 224;           // output is size x size
  int resize_shorter = 0;   // > 0: resize the shorter side to this, keep aspect, then centre-crop `size`
  ResizeSpec resize;        // how the decoded image is resized
  NormalizeMode normalize = NormalizeMode::TorchMeanStd;
  std::array<float, 3> mean{0.485f, 0.456f, 0.406f};
  std::array<float, 3> std{0.229f, 0.224f, 0.225f};
  Layout layout = Layout::NCHW;
  // Fast, inexact: let the JPEG decoder shrink by 1/2..1/8 (Pillow's draft() rule) before resizing.
  bool fast_decode = false;
};

// Throws InvalidArgument for an unknown name; `size` overrides the default 224.
Preset preset(std::string_view name, int size = 224);
std::vector<std::string> preset_names();

// Maps a u8 image (3 channels, RGB) into the preset's float tensor layout.
void normalize_to_tensor(const ImageView<std::uint8_t>& rgb, const Preset& p, float* out);

// Runs a preset: decode -> resize (-> crop) -> normalize. Reuses its buffers;
// no allocation per call once warm. One Preprocessor per thread.
class Preprocessor {
 public:
  // threads > 1 (or 0: one per CPU granted, default_threads()): the resize splits its rows, and on
  // large JPEGs the resize and the normalization run beside the decode,
  // row by row (same bytes; the timings then count that part as decode).
  explicit Preprocessor(Preset preset, int threads = 1);
  ~Preprocessor();
  Preprocessor(Preprocessor&&) noexcept = default;
  Preprocessor& operator=(Preprocessor&&) noexcept = default;
  const Preset& preset() const { return preset_; }
  // Output element count (1 x 3 x size x size).
  std::size_t tensor_size() const { return static_cast<std::size_t>(3) * preset_.size * preset_.size; }
  std::vector<std::size_t> tensor_shape() const;

  void run(const ImageView<std::uint8_t>& rgb, float* out);
  void run_file(const std::string& path, float* out);
  void run_memory(const std::uint8_t* data, std::size_t size, const std::string& name, float* out);
  // Read and decode only (with the preset's decode options: fast mode's DCT
  // scaling included), for a caller that resizes elsewhere (Model::run_image
  // on a GPU). Times read and decode; resize and normalize read 0.
  void decode_file(const std::string& path, ImageU8& out);

  // The stages of the last run_file call, for the benchmark.
  struct Timings { double read_ms = 0, decode_ms = 0, resize_ms = 0, normalize_ms = 0; };
  const Timings& last_timings() const { return timings_; }
  DecodeOptions& decode_options() { return decode_; }

 private:
  struct Stream;
  struct StreamDeleter {
    void operator()(Stream* s) const;
  };
  std::pair<int, int> resize_target(int width, int height) const;
  DecodeOptions preset_decode_options() const;
  // The part of a resized image that becomes the tensor, and its first row.
  std::pair<ImageView<std::uint8_t>, int> crop(const ImageView<std::uint8_t>& resized) const;
  // streamed: rows of resized_ already made (and normalized) beside the decode, or -1.
  void finish(const ImageView<std::uint8_t>& rgb, int streamed, float* out);

  Preset preset_;
  int threads_ = 1;
  std::unique_ptr<Stream, StreamDeleter> stream_;
  DecodeOptions decode_;
  Resizer resizer_;
  Resizer small_resizer_;  // on one thread, for images under 0.25 MP (waking another costs what it saves)
  ImageU8 decoded_, resized_;
  std::vector<std::uint8_t> bytes_;
  Timings timings_;
};

}  // namespace vinfer
