// What loading costs: named stage times and the process's resident memory.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace vinfer::detail {

// The peak resident set (VmHWM) and the current one (VmRSS) in bytes, from
// /proc/self/status; 0 where unknown.
std::int64_t peak_rss_bytes();
std::int64_t current_rss_bytes();

// Named stages and their time in ms, in order.
using StageTimes = std::vector<std::pair<std::string, double>>;

// Appends the time since the last lap (or construction) under a name; does
// nothing without a list.
class StageClock {
 public:
  explicit StageClock(StageTimes* out) : out_(out) {}
  void lap(const char* name) {
    const auto now = std::chrono::steady_clock::now();
    if (out_) out_->emplace_back(name, std::chrono::duration<double, std::milli>(now - t_).count());
    t_ = now;
  }

 private:
  StageTimes* out_;
  std::chrono::steady_clock::time_point t_ = std::chrono::steady_clock::now();
};


}  // namespace vinfer::detail
