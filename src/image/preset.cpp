#include <chrono>
#include <cmath>
#include <cstring>
#include <string>

#include "util/file_io.hpp"
#include "vinfer/error.hpp"
#include "vinfer/preprocess.hpp"

namespace vinfer {

std::vector<std::string> preset_names() {
  return {"torchvision", "torchvision-crop", "keras-caffe", "keras-torch", "keras-tf"};
}

Preset preset(std::string_view name, int size) {
  if (size < 8 || size > 4096)
    throw Error(ErrorKind::InvalidArgument, "preset size " + std::to_string(size) + " is out of range (8..4096)");
  Preset p;
  p.name = std::string(name);
  p.size = size;
  if (name == "torchvision" || name == "torchvision-crop") {
    p.resize.compat = Compat::Pil;
    p.resize.filter = Filter::Bilinear;  // transforms.Resize on a PIL image
    if (name == "torchvision-crop") p.resize_shorter = size * 256 / 224;
    return p;
  }
  if (name == "keras-caffe" || name == "keras-torch" || name == "keras-tf") {
    p.resize.compat = Compat::Pil;
    p.resize.filter = Filter::Nearest;  // load_img's default interpolation
    p.layout = Layout::NHWC;
    if (name == "keras-caffe") {
      p.normalize = NormalizeMode::CaffeBgr;
      p.mean = {103.939f, 116.779f, 123.68f};
      p.std = {1.f, 1.f, 1.f};
    } else if (name == "keras-tf") {
      p.normalize = NormalizeMode::TfSymmetric;
    }
    return p;
  }
  std::string all;
  for (const auto& n : preset_names()) all += (all.empty() ? "" : ", ") + n;
  throw Error(ErrorKind::InvalidArgument, "unknown preset '" + std::string(name) + "' (" + all + ")");
}

Preprocessor::Preprocessor(Preset p, int threads) : preset_(std::move(p)), resizer_([&] {
  ResizeSpec s = preset_.resize;
  s.threads = threads;
  return s;
}()) {
  decode_.format = PixelFormat::RGB;
}

std::vector<std::size_t> Preprocessor::tensor_shape() const {
  const std::size_t s = static_cast<std::size_t>(preset_.size);
  if (preset_.layout == Layout::NCHW) return {1, 3, s, s};
  return {1, s, s, 3};
}

namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }
}  // namespace

void Preprocessor::run(const ImageView<std::uint8_t>& rgb, float* out) {
  const auto t0 = Clock::now();
  const int S = preset_.size;
  if (preset_.resize_shorter > 0) {
    // torchvision Resize(int): shorter side to N, the other int(N * long / short); then CenterCrop.
    const int n = preset_.resize_shorter;
    int w, h;
    if (rgb.width <= rgb.height) {
      w = n;
      h = static_cast<int>(static_cast<long long>(n) * rgb.height / rgb.width);
    } else {
      h = n;
      w = static_cast<int>(static_cast<long long>(n) * rgb.width / rgb.height);
    }
    if (w == rgb.width && h == rgb.height) {
      resized_.reshape(w, h, 3);
      for (int y = 0; y < h; ++y) std::memcpy(resized_.row(y), rgb.row(y), static_cast<std::size_t>(w) * 3);
    } else {
      resizer_.run(rgb, w, h, resized_);
    }
    if (w < S || h < S) throw Error(ErrorKind::InvalidArgument, "preset: image smaller than the crop");
    // Python's round() rounds half to even, as std::nearbyint does by default.
    const int top = static_cast<int>(std::nearbyint((h - S) / 2.0));
    const int left = static_cast<int>(std::nearbyint((w - S) / 2.0));
    const ImageView<std::uint8_t> crop{resized_.row(top) + left * 3, S, S, 3, static_cast<std::ptrdiff_t>(w) * 3};
    timings_.resize_ms = ms_since(t0);
    const auto t1 = Clock::now();
    normalize_to_tensor(crop, preset_, out);
    timings_.normalize_ms = ms_since(t1);
    return;
  }
  ImageView<std::uint8_t> src = rgb;
  if (rgb.width != S || rgb.height != S) {  // Pillow (and load_img) skip a resize to the same size
    resizer_.run(rgb, S, S, resized_);
    src = resized_.view();
  }
  timings_.resize_ms = ms_since(t0);
  const auto t1 = Clock::now();
  normalize_to_tensor(src, preset_, out);
  timings_.normalize_ms = ms_since(t1);
}

void Preprocessor::run_memory(const std::uint8_t* data, std::size_t size, const std::string& name, float* out) {
  const auto t0 = Clock::now();
  DecodeOptions opt = decode_;
  opt.format = PixelFormat::RGB;
  if (preset_.fast_decode) {
    const int target = preset_.resize_shorter > 0 ? preset_.resize_shorter : preset_.size;
    opt.target_width = opt.target_height = target;
  }
  decode_memory(data, size, opt, decoded_, name);
  timings_.decode_ms = ms_since(t0);
  run(decoded_.view(), out);
}

void Preprocessor::run_file(const std::string& path, float* out) {
  const auto t0 = Clock::now();
  detail::read_file(path, bytes_, 1ULL << 31);
  timings_.read_ms = ms_since(t0);
  run_memory(bytes_.data(), bytes_.size(), path, out);
}

}  // namespace vinfer
