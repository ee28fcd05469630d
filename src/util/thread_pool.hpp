// Internal: a small persistent thread pool for splitting image rows.
#pragma once
#include <functional>

namespace vinfer::detail {

// Runs fn(begin, end) over [0, n) split into at most `threads` contiguous
// chunks; the calling thread takes the first chunk. threads <= 1 runs inline.
// Workers persist for the process, so a call costs a wake-up, not a spawn.
void parallel_for(int n, int threads, const std::function<void(int, int)>& fn);

// The threads to use by default: the CPUs this process may use (cpu_grant.hpp).
int hardware_threads();

}  // namespace vinfer::detail
