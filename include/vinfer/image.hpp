// vinfer/image.hpp: interleaved images and views.
//
// Pixels are stored row-major with channels interleaved (HWC), the layout that
// decoders produce and that Pillow, OpenCV and numpy use. An Image owns its
// pixels and reuses its allocation when it is reshaped to a size that fits, so
// a loop that decodes or resizes into the same Image allocates only once.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace vinfer {

// Read-only view of interleaved pixels; stride is in elements, not bytes.
template <typename T>
struct ImageView {
  const T* data = nullptr;
  int width = 0;
  int height = 0;
  int channels = 0;
  std::ptrdiff_t stride = 0;  // elements between the starts of two rows

  const T* row(int y) const { return data + static_cast<std::ptrdiff_t>(y) * stride; }
};

// Owning image with tightly packed rows (stride == width * channels).
template <typename T>
class Image {
 public:
  Image() = default;
  Image(int width, int height, int channels) { reshape(width, height, channels); }
  Image(Image&&) noexcept = default;
  Image& operator=(Image&&) noexcept = default;
  Image(const Image& other) { *this = other; }
  Image& operator=(const Image& other);

  // Sets the shape; keeps the allocation when it is large enough. Contents are unspecified.
  void reshape(int width, int height, int channels);

  int width() const { return width_; }
  int height() const { return height_; }
  int channels() const { return channels_; }
  std::size_t size() const { return static_cast<std::size_t>(width_) * height_ * channels_; }
  bool empty() const { return size() == 0; }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  T* row(int y) { return data_.get() + static_cast<std::ptrdiff_t>(y) * width_ * channels_; }
  const T* row(int y) const { return data_.get() + static_cast<std::ptrdiff_t>(y) * width_ * channels_; }
  std::span<T> pixels() { return {data(), size()}; }
  std::span<const T> pixels() const { return {data(), size()}; }
  ImageView<T> view() const {
    return {data(), width_, height_, channels_, static_cast<std::ptrdiff_t>(width_) * channels_};
  }

 private:
  struct FreeDeleter { void operator()(T* p) const; };
  std::unique_ptr<T[], FreeDeleter> data_;
  std::size_t capacity_ = 0;
  int width_ = 0, height_ = 0, channels_ = 0;
};

using ImageU8 = Image<std::uint8_t>;
using ImageF32 = Image<float>;

extern template class Image<std::uint8_t>;
extern template class Image<float>;

}  // namespace vinfer
