#include <cstdlib>
#include <cstring>
#include <new>

#include "vinfer/error.hpp"
#include "vinfer/image.hpp"

namespace vinfer {

template <typename T>
void Image<T>::FreeDeleter::operator()(T* p) const {
  std::free(p);
}

template <typename T>
void Image<T>::reshape(int width, int height, int channels) {
  if (width < 0 || height < 0 || channels < 0) throw Error(ErrorKind::InvalidArgument, "image: negative size");
  const std::size_t n = static_cast<std::size_t>(width) * height * channels;
  if (n > capacity_) {
    // 64-byte aligned, padded so that SIMD loads past the last pixel stay in bounds.
    const std::size_t bytes = ((n * sizeof(T) + 64) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, bytes);
    if (!p) throw std::bad_alloc();
    data_.reset(static_cast<T*>(p));
    capacity_ = n;
  }
  width_ = width;
  height_ = height;
  channels_ = channels;
}

template <typename T>
Image<T>& Image<T>::operator=(const Image& other) {
  if (this == &other) return *this;
  reshape(other.width_, other.height_, other.channels_);
  if (other.size()) std::memcpy(data(), other.data(), other.size() * sizeof(T));
  return *this;
}

template class Image<std::uint8_t>;
template class Image<float>;

}  // namespace vinfer
