// Internal: zeroed, 64-byte aligned heap blocks (whole cache lines, so that
// vector loads never split a line and no two buffers share one).
#pragma once
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace vinfer::cpu {

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};
using Block = std::unique_ptr<void, AlignedFree>;

inline Block aligned_block(std::size_t bytes) {
  const std::size_t n = (std::max<std::size_t>(bytes, 64) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, n);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, n);
  return Block(p);
}

}  // namespace vinfer::cpu
