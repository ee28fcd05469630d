// Aligned, zeroed blocks for vinfer's kernels and packed weights (aligned.hpp).
#include "cpu/aligned.hpp"
#include "util/debug_env.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace vinfer::cpu {

namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kChunk = std::size_t{32} << 20;  // what the pool maps at a time

#if defined(__linux__) && defined(MADV_HUGEPAGE)
// Maps `bytes` (rounded up to 4 KiB) starting on a 2 MiB boundary, asking for
// huge pages: maps 2 MiB more, then unmaps the unaligned head and the tail.
// Anonymous memory is zeroed by the kernel. Null if mmap fails.
void* map_huge(std::size_t bytes, std::size_t& mapped) {
  const std::size_t len = (bytes + 4095) / 4096 * 4096;
  void* raw = mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t start = (base + kHugePage - 1) / kHugePage * kHugePage;
  if (start > base) munmap(raw, start - base);
  const std::uintptr_t end = base + len + kHugePage;
  if (end > start + len) munmap(reinterpret_cast<void*>(start + len), end - (start + len));
  void* p = reinterpret_cast<void*>(start);
  madvise(p, len, MADV_HUGEPAGE);  // advice only: without THP the block still works
  mapped = len;
  return p;
}

// Blocks smaller than a chunk are carved one after another out of shared
// chunks, so that weights of a few hundred KiB (most of DenseNet's) sit in
// huge pages too; never reused, so still zero. A chunk is unmapped when the
// pool has moved on and its last block is freed.
struct Chunk {
  char* base = nullptr;
  std::size_t mapped = 0;
  ~Chunk() { munmap(base, mapped); }
};

std::shared_ptr<Chunk> current;  // guarded by pool_mutex
std::size_t used = 0;
std::mutex pool_mutex;

void* from_pool(std::size_t bytes, std::shared_ptr<void>& owner) {
  const std::size_t n = (bytes + 63) / 64 * 64;
  std::lock_guard<std::mutex> lock(pool_mutex);
  if (!current || used + n > current->mapped) {
    auto c = std::make_shared<Chunk>();
    c->base = static_cast<char*>(map_huge(kChunk, c->mapped));
    if (!c->base) return nullptr;
    current = std::move(c), used = 0;
  }
  void* p = current->base + used;
  used += n;
  owner = current;
  return p;
}
#endif
}  // namespace

void AlignedFree::operator()(void* p) const {
  if (chunk) return;  // the chunk goes with its last block (this deleter's reference)
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (mapped > 0) {
    munmap(p, mapped);
    return;
  }
#endif
  std::free(p);
}

namespace {
bool huge_pages_wanted() {
  return !detail::debug_env_is(detail::DebugVar::HugePages, "0");
}
}  // namespace

std::string huge_page_state() {
  if (!huge_pages_wanted()) return "off (VINFER_HUGE_PAGES=0)";
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  std::string modes;
  std::getline(std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled"), modes);
  const auto open = modes.find('['), close = modes.find(']');
  const std::string mode = open != std::string::npos && close > open ? modes.substr(open + 1, close - open - 1) : "";
  if (mode.empty()) return "asked for, but this kernel has no transparent huge pages";
  if (mode == "never") return "asked for, but not given (transparent huge pages: never)";
  return "on for blocks from 64 KiB (transparent huge pages: " + mode + ")";
#else
  return "not available on this system";
#endif
}

Block aligned_block(std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (huge_pages_wanted() && bytes >= kHugeBlockBytes) {
    AlignedFree d;
    if (bytes >= kChunk / 2) {
      if (void* p = map_huge(bytes, d.mapped)) return Block(p, d);
    } else if (void* p = from_pool(bytes, d.chunk)) {
      return Block(p, d);
    }
  }
#endif
  const std::size_t n = (std::max<std::size_t>(bytes, 64) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, n);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, n);
  return Block(p);
}

}  // namespace vinfer::cpu
