#include "backend/memory_plan.hpp"

#include <algorithm>
#include <numeric>

#include "vinfer/error.hpp"

namespace vinfer::detail {
namespace {
constexpr std::int64_t kAlign = 64;
std::int64_t align_up(std::int64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }
}  // namespace

MemoryPlan plan_memory(const std::vector<PlanBuffer>& b) {
  const std::size_t n = b.size();
  std::vector<int> root(n);
  std::vector<std::int64_t> off(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    int r = static_cast<int>(i);
    std::int64_t o = 0;
    for (std::size_t hops = 0; b[static_cast<std::size_t>(r)].alias_of >= 0; ++hops) {
      if (hops > n) throw Error(ErrorKind::Internal, "memory plan: alias cycle");
      o += b[static_cast<std::size_t>(r)].offset;
      r = b[static_cast<std::size_t>(r)].alias_of;
    }
    root[i] = r;
    off[i] = o;
  }
  // Roots' extents: union of lifetimes and sizes of everything inside them.
  std::vector<std::int64_t> size(n, 0);
  std::vector<int> first(n, -1), last(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    if (b[i].first < 0) continue;
    const auto r = static_cast<std::size_t>(root[i]);
    size[r] = std::max(size[r], off[i] + b[i].bytes);
    first[r] = first[r] < 0 ? b[i].first : std::min(first[r], b[i].first);
    last[r] = std::max(last[r], b[i].last);
  }
  MemoryPlan plan;
  plan.address.assign(n, -1);
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < n; ++i)
    if (root[i] == static_cast<int>(i) && first[i] >= 0) {
      order.push_back(i);
      plan.naive_bytes += align_up(size[i]);
    }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return size[x] > size[y]; });
  std::vector<std::size_t> placed;
  for (std::size_t i : order) {
    // Address ranges of placed buffers alive at the same time, by start.
    std::vector<std::pair<std::int64_t, std::int64_t>> busy;
    for (std::size_t j : placed)
      if (first[j] <= last[i] && first[i] <= last[j]) busy.emplace_back(plan.address[j], plan.address[j] + align_up(size[j]));
    std::sort(busy.begin(), busy.end());
    std::int64_t at = 0;
    const std::int64_t need = align_up(size[i]);
    for (const auto& [lo, hi] : busy) {
      if (at + need <= lo) break;
      at = std::max(at, hi);
    }
    plan.address[i] = at;
    plan.arena_bytes = std::max(plan.arena_bytes, at + need);
    placed.push_back(i);
  }
  for (std::size_t i = 0; i < n; ++i)
    if (b[i].first >= 0 && root[i] != static_cast<int>(i)) plan.address[i] = plan.address[static_cast<std::size_t>(root[i])] + off[i];
  return plan;
}

}  // namespace vinfer::detail
