#include <algorithm>
#include <cmath>
#include <numeric>

#include "vinfer/stats.hpp"

namespace vinfer {

LatencySummary summarize(std::vector<double> v) {
  LatencySummary s;
  s.count = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto pct = [&](double q) {
    const double pos = q * static_cast<double>(v.size() - 1);
    const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  s.p50 = pct(0.5);
  s.p90 = pct(0.9);
  s.p99 = pct(0.99);
  s.min = v.front();
  s.max = v.back();
  return s;
}

}  // namespace vinfer
