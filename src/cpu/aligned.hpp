// Internal: what vinfer's own engine kernels (Winograd, 1x1 convolution)
// share: zeroed, 64-byte aligned heap blocks (whole cache lines, so that
// vector loads never split a line and no two buffers share one), and which
// channel block's kernels run on this CPU.
#pragma once
#include <algorithm>
#include <memory>
#include <new>
#include <string>

#include "util/cpu_features.hpp"

namespace vinfer::cpu {

struct AlignedFree {
  std::size_t mapped = 0;       // bytes mapped on their own (0: aligned_alloc or a chunk)
  std::shared_ptr<void> chunk;  // the shared huge-page chunk the block is in, if any
  void operator()(void* p) const;
};
using Block = std::unique_ptr<void, AlignedFree>;

// From this size on, blocks are asked to be backed by transparent huge pages
// (where the kernel offers them only on request, as Debian's does:
// "madvise"): large ones mapped on their own on 2 MiB boundaries, the others
// carved out of shared 32 MiB chunks. Weights are streamed from memory once
// per image; with 4 KiB pages ResNet50's 100 MB are 25,000 pages, each a TLB
// miss and a page walk, and the hardware prefetchers stop at every page
// boundary.
constexpr std::size_t kHugeBlockBytes = std::size_t{64} << 10;

// A zeroed block of at least `bytes`, 64-byte aligned (in huge pages where
// possible from kHugeBlockBytes on, unless the environment has
// VINFER_HUGE_PAGES=0).
Block aligned_block(std::size_t bytes);

// What aligned_block does about huge pages here, in words, for `vinfer info`:
// on, off (VINFER_HUGE_PAGES=0), or asked for but not given (the kernel's
// transparent huge pages set to "never", or none at all).
std::string huge_page_state();

// Kernels for channel block 8 need AVX2 + FMA, for block 16 AVX-512.
inline bool simd_block_runs(int block) {
  const detail::CpuFeatures& f = detail::cpu_features();
  return (block == 8 && f.avx2) || (block == 16 && f.avx512);
}

}  // namespace vinfer::cpu
