// Internal: what vinfer's own engine kernels (Winograd, 1x1 convolution)
// share: zeroed, 64-byte aligned heap blocks (whole cache lines, so that
// vector loads never split a line and no two buffers share one), and which
// channel block's kernels run on this CPU.
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

// Kernels for channel block 8 need AVX2 + FMA, for block 16 AVX-512.
inline bool simd_block_runs(int block) {
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  return (block == 8 && avx2) || (block == 16 && avx512);
}

}  // namespace vinfer::cpu
