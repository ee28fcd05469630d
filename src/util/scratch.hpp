// Internal: per-thread scratch buffers kept between calls, so that a loop over
// images allocates nothing, but bounded: one that grew past kScratchKeepBytes
// (a huge image) is freed after use instead of being held by the thread for
// the rest of the process.
#pragma once
#include <cstddef>
#include <tuple>
#include <vector>

namespace vinfer::detail {

constexpr std::size_t kScratchKeepBytes = std::size_t{64} << 20;

template <class T>
void trim_scratch(std::vector<T>& v) {
  if (v.capacity() * sizeof(T) > kScratchKeepBytes) std::vector<T>().swap(v);
}

// Calls trim_scratch on each buffer when the scope ends, whichever way it ends.
template <class... V>
struct ScratchTrim {
  explicit ScratchTrim(V&... v) : buffers(v...) {}
  ~ScratchTrim() {
    std::apply([](auto&... b) { (trim_scratch(b), ...); }, buffers);
  }
  std::tuple<V&...> buffers;
};

}  // namespace vinfer::detail
