#include "cpu/tune.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <limits>
#include <map>
#include <mutex>

#include <immintrin.h>

namespace vinfer::cpu {

double steady_measure(const std::function<void()>& run) {
  const auto a = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
}

TuneResult fastest(const std::vector<TuneCandidate>& candidates, double budget_ms, double margin,
                   const TuneMeasure& measure) {
  auto timed = [&](const TuneCandidate& c) {
    if (c.prepare) c.prepare();
    return measure(c.run);
  };
  TuneResult r;
  const std::size_t n = candidates.size();
  r.best_ms.assign(n, std::numeric_limits<double>::infinity());
  if (n < 2) return r;
  for (const auto& c : candidates) r.spent_ms += timed(c);  // warm-up: pages, the thread team
  for (int round = 0; round < 9 && (round < 3 || r.spent_ms < budget_ms); ++round)
    for (std::size_t k = 0; k < n; ++k) {
      const double t = timed(candidates[k]);
      r.spent_ms += t;
      r.best_ms[k] = std::min(r.best_ms[k], t);
    }
  const auto best = std::min_element(r.best_ms.begin(), r.best_ms.end()) - r.best_ms.begin();
  r.choice = r.best_ms[static_cast<std::size_t>(best)] < r.best_ms[0] * (1 - margin) ? static_cast<int>(best) : 0;
  return r;
}

void evict(const void* p, std::size_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (std::size_t i = 0; i < bytes; i += 64) _mm_clflush(c + i);
  _mm_mfence();
}

void touch(const void* p, std::size_t bytes) {
  const volatile char* c = static_cast<const volatile char*>(p);
  char sum = 0;
  for (std::size_t i = 0; i < bytes; i += 64) sum = static_cast<char>(sum + c[i]);
  (void)sum;
}

std::pair<int, bool> tuned_choice(const std::string& key, const std::function<int()>& decide) {
  static std::mutex mu;
  static std::map<std::string, int> memo;
  {
    std::lock_guard<std::mutex> lock(mu);
    const auto it = memo.find(key);
    if (it != memo.end()) return {it->second, false};
  }
  const int choice = decide();  // outside the lock: timing takes a while, and builds may run in parallel
  std::lock_guard<std::mutex> lock(mu);
  return {memo.emplace(key, choice).first->second, true};
}

}  // namespace vinfer::cpu
