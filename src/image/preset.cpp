#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "image/fused_prep.hpp"
#include "util/file_io.hpp"
#include "util/thread_pool.hpp"
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

// The resize and the normalization on a second thread while the decoder
// produces rows: the horizontal pass of each row as it is final
// (Resizer::stream_rows), each output row once its taps are there
// (stream_vertical), and its tensor row. Entropy decoding is serial, so on a
// large JPEG nearly all of the rest hides behind it. One job at a time; the
// decoding thread publishes how many rows are final, the worker catches up.
struct Preprocessor::Stream {
  std::mutex m;
  std::condition_variable cv;
  bool active = false, declined = false, stop = false;
  int ready = 0, done = 0, ow = 0, oh = 0;
  int resized = 0;  // rows of the resized image that are final (and normalized where they are in the crop)
  ImageView<std::uint8_t> view{};
  std::function<void(int, int)> work;  // source rows [a, b) are final: take them as far as they go
  std::exception_ptr error;
  std::thread worker;

  Stream() : worker([this] { loop(); }) {}
  ~Stream() {
    {
      std::lock_guard l(m);
      stop = true;
    }
    cv.notify_all();
    worker.join();
  }

  void loop() {
    std::unique_lock l(m);
    for (;;) {
      cv.wait(l, [&] { return stop || (active && ready > done); });
      if (stop) return;
      const int a = done, b = ready;
      l.unlock();
      try {
        work(a, b);
      } catch (...) {
        l.lock();
        if (!error) error = std::current_exception();
        l.unlock();
      }
      l.lock();
      done = b;
      cv.notify_all();
    }
  }

  void reset(std::function<void(int, int)> w) {
    std::lock_guard l(m);
    work = std::move(w);  // the Preprocessor may have moved since the last image
    active = declined = false;
    ready = done = resized = 0;
    error = nullptr;
  }

  // Waits until the worker has every published row; returns whether it streamed.
  bool finish() {
    std::unique_lock l(m);
    cv.wait(l, [&] { return !active || done == ready; });
    const bool streamed = active;
    active = false;
    if (error) std::rethrow_exception(error);
    return streamed;
  }
};

void Preprocessor::StreamDeleter::operator()(Stream* s) const { delete s; }

namespace {
// Below this many source pixels a second thread is not worth waking for the
// resize (the pool sleeps during a decode; waking it took 0.1-0.25 ms against
// a 0.12 ms resize of a 451x300 PNG) nor for streaming beside the decode.
constexpr long long kWakeWorthPixels = 512 * 512;

ResizeSpec with_threads(ResizeSpec s, int threads) {
  s.threads = threads;
  return s;
}
}  // namespace

Preprocessor::Preprocessor(Preset p, int threads)
    : preset_(std::move(p)), resizer_(with_threads(preset_.resize, threads)), small_resizer_(with_threads(preset_.resize, 1)) {
  decode_.format = PixelFormat::RGB;
  threads_ = threads <= 0 ? detail::hardware_threads() : threads;
  decode_.threads = threads_;
}

Preprocessor::~Preprocessor() = default;

std::pair<int, int> Preprocessor::resize_target(int w, int h) const { return detail::preset_resize_target(preset_, w, h); }

namespace detail {
std::pair<int, int> preset_resize_target(const Preset& p, int w, int h) {
  if (p.resize_shorter <= 0) return {p.size, p.size};
  // torchvision Resize(int): shorter side to N, the other int(N * long / short); then CenterCrop.
  const long long n = p.resize_shorter;
  if (w <= h) return {static_cast<int>(n), static_cast<int>(n * h / w)};
  return {static_cast<int>(n * w / h), static_cast<int>(n)};
}

std::pair<int, int> preset_crop(const Preset& p, int w, int h) {
  const int S = p.size;
  if (p.resize_shorter <= 0) return {0, 0};
  if (w < S || h < S) throw Error(ErrorKind::InvalidArgument, "preset: image smaller than the crop");
  // Python's round() rounds half to even, as std::nearbyint does by default.
  return {static_cast<int>(std::nearbyint((w - S) / 2.0)), static_cast<int>(std::nearbyint((h - S) / 2.0))};
}
}  // namespace detail

std::vector<std::size_t> Preprocessor::tensor_shape() const {
  const std::size_t s = static_cast<std::size_t>(preset_.size);
  if (preset_.layout == Layout::NCHW) return {1, 3, s, s};
  return {1, s, s, 3};
}

namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }
}  // namespace

void Preprocessor::run(const ImageView<std::uint8_t>& rgb, float* out) { finish(rgb, -1, out); }

std::pair<ImageView<std::uint8_t>, int> Preprocessor::crop(const ImageView<std::uint8_t>& resized) const {
  if (preset_.resize_shorter <= 0) return {resized, 0};
  const int S = preset_.size;
  const auto [left, top] = detail::preset_crop(preset_, resized.width, resized.height);
  return {ImageView<std::uint8_t>{resized.row(top) + left * 3, S, S, 3, resized.stride}, top};
}

// Resize (or what is left of it after the stream), crop, normalize.
void Preprocessor::finish(const ImageView<std::uint8_t>& rgb, int streamed, float* out) {
  const auto t0 = Clock::now();
  const auto [w, h] = resize_target(rgb.width, rgb.height);
  ImageView<std::uint8_t> src = rgb;
  if (w != rgb.width || h != rgb.height) {  // Pillow (and load_img) skip a resize to the same size
    if (streamed >= 0) resizer_.stream_finish(w, h, resized_, streamed);
    else if (static_cast<long long>(rgb.width) * rgb.height < kWakeWorthPixels) small_resizer_.run(rgb, w, h, resized_);
    else resizer_.run(rgb, w, h, resized_);
    src = resized_.view();
  }
  const auto [tensor_rows, top] = crop(src);
  timings_.resize_ms = ms_since(t0);
  const auto t1 = Clock::now();
  if (streamed < 0) normalize_to_tensor(tensor_rows, preset_, out);
  else detail::normalize_rows(tensor_rows, preset_, out, std::clamp(streamed - top, 0, tensor_rows.height), tensor_rows.height);
  timings_.normalize_ms = ms_since(t1);
}

void Preprocessor::run_memory(const std::uint8_t* data, std::size_t size, const std::string& name, float* out) {
  const auto t0 = Clock::now();
  DecodeOptions opt = preset_decode_options();
  // Overlap the resize and the normalization with the decode on large images
  // when a second thread is allowed (below ~0.25 MP waking it costs what it
  // saves, unless the decoder's own helper thread does the work).
  if (threads_ >= 2 && !opt.apply_exif_orientation) {
    if (!stream_) stream_.reset(new Stream());
    Stream* st = stream_.get();
    stream_->reset([this, st, out](int a, int b) {
      resizer_.stream_rows(st->view, st->ow, st->oh, a, b);
      const int r = resizer_.stream_vertical(st->ow, st->oh, b, resized_, st->resized);
      if (r > st->resized) {
        const auto [tensor_rows, top] = crop(resized_.view());
        const int H = tensor_rows.height;
        detail::normalize_rows(tensor_rows, preset_, out, std::clamp(st->resized - top, 0, H), std::clamp(r - top, 0, H));
      }
      st->resized = r;
    });
    opt.on_rows = [this, st, caller = std::this_thread::get_id()](const ImageU8& img, int rows) {
      std::unique_lock l(st->m);
      if (!st->active && !st->declined) {
        const auto [w, h] = resize_target(img.width(), img.height());
        // Small images only stream on the decoder's helper thread (nothing to wake).
        const bool helper = std::this_thread::get_id() != caller;
        st->declined = (!helper && static_cast<long long>(img.width()) * img.height() < kWakeWorthPixels) ||
                       (w == img.width() && h == img.height()) || !resizer_.can_stream(img.width(), img.height(), w, h, 3);
        if (!st->declined) {
          st->active = true;
          st->view = img.view();
          st->ow = w;
          st->oh = h;
        }
      }
      if (!st->active) return;
      const bool last = rows == img.height();
      if ((std::this_thread::get_id() != caller || last) && st->done == st->ready) {
        // The decoder's own helper thread (two-thread JPEG decode) calls us
        // while the calling thread runs libjpeg: do the rows here rather than
        // wake a third thread on two cores. The last few rows, when the
        // worker is idle, cost less than waking it.
        const int a = st->done;
        l.unlock();
        try {
          st->work(a, rows);
        } catch (...) {
          l.lock();
          if (!st->error) st->error = std::current_exception();
          l.unlock();
        }
        l.lock();
        st->done = st->ready = rows;
        return;
      }
      // Hand over in steps of 64 rows: each hand-over may wake the worker (a futex call).
      if (rows - st->ready < 64 && !last) return;
      st->ready = rows;
      l.unlock();
      st->cv.notify_all();
    };
  }
  try {
    decode_memory(data, size, opt, decoded_, name);
  } catch (...) {
    if (stream_) {
      try {
        stream_->finish();
      } catch (...) {  // the decode's error is the one to report
      }
    }
    throw;
  }
  const bool streamed = opt.on_rows && stream_->finish();
  timings_.decode_ms = ms_since(t0);
  finish(decoded_.view(), streamed ? stream_->resized : -1, out);
}

DecodeOptions Preprocessor::preset_decode_options() const {
  DecodeOptions opt = decode_;
  opt.format = PixelFormat::RGB;
  if (preset_.fast_decode) {
    const int target = preset_.resize_shorter > 0 ? preset_.resize_shorter : preset_.size;
    opt.target_width = opt.target_height = target;
  }
  return opt;
}

void Preprocessor::decode_file(const std::string& path, ImageU8& out) {
  auto t0 = Clock::now();
  detail::read_file(path, bytes_, 1ULL << 31);
  timings_.read_ms = ms_since(t0);
  t0 = Clock::now();
  decode_memory(bytes_.data(), bytes_.size(), preset_decode_options(), out, path);
  timings_.decode_ms = ms_since(t0);
  timings_.resize_ms = timings_.normalize_ms = 0;
}

void Preprocessor::run_file(const std::string& path, float* out) {
  const auto t0 = Clock::now();
  detail::read_file(path, bytes_, 1ULL << 31);
  timings_.read_ms = ms_since(t0);
  run_memory(bytes_.data(), bytes_.size(), path, out);
}

}  // namespace vinfer
