// Internal: one arena for every intermediate tensor. Buffers whose lifetimes
// do not overlap share memory; a buffer may be a view (alias) into another at
// a byte offset, which is how concatenations become free.
#pragma once
#include <cstdint>
#include <vector>

namespace vinfer::detail {

struct PlanBuffer {
  std::int64_t bytes = 0;
  int alias_of = -1;          // another buffer this one lives inside
  std::int64_t offset = 0;    // byte offset inside alias_of
  int first = -1, last = -1;  // first and last step that touch it (-1: never used)
};

struct MemoryPlan {
  std::vector<std::int64_t> address;  // byte offset of each buffer in the arena (-1: unused)
  std::int64_t arena_bytes = 0;       // peak
  std::int64_t naive_bytes = 0;       // sum of all root buffers, no reuse
};

// Greedy by size (largest first, lowest non-conflicting address), as TFLite's
// arena planner does. Views extend their root's lifetime and size. 64-byte aligned.
MemoryPlan plan_memory(const std::vector<PlanBuffer>& buffers);

}  // namespace vinfer::detail
