// Internal: the few instructions that spin-waits and the kernel tuner need,
// for each architecture (x86-64 and AArch64; elsewhere they do nothing).
#pragma once
#include <cstddef>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace vinfer::detail {

// A spin-wait's hint (x86 pause, Arm yield): the sibling hyper-thread gets
// the core, and the loop draws less power.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Writes [p, p + bytes) back and drops it from every cache level (x86
// clflush; Arm dc civac, which Linux lets user code run), so that a timed
// kernel reads its weights from memory as a network's first pass does.
inline void evict_lines(const void* p, std::size_t bytes) {
  const char* c = static_cast<const char*>(p);
#if defined(__x86_64__) || defined(__i386__)
  for (std::size_t i = 0; i < bytes; i += 64) _mm_clflush(c + i);
  _mm_mfence();
#elif defined(__aarch64__)
  for (std::size_t i = 0; i < bytes; i += 64) asm volatile("dc civac, %0" ::"r"(c + i) : "memory");
  asm volatile("dsb ish" ::: "memory");
#else
  (void)c, (void)bytes;
#endif
}

}  // namespace vinfer::detail
