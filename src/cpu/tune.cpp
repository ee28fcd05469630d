#include "cpu/tune.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "util/checked.hpp"
#include "util/cpu_relax.hpp"
#include "vinfer/stats.hpp"

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
  for (int round = 0; round < 15 && (round < 5 || r.spent_ms < budget_ms); ++round)
    for (std::size_t k = 0; k < n; ++k) {
      const double t = timed(candidates[k]);
      r.spent_ms += t;
      r.best_ms[k] = std::min(r.best_ms[k], t);
    }
  const auto best = std::min_element(r.best_ms.begin(), r.best_ms.end()) - r.best_ms.begin();
  r.choice = r.best_ms[static_cast<std::size_t>(best)] < r.best_ms[0] * (1 - margin) ? static_cast<int>(best) : 0;
  return r;
}

void evict(const void* p, std::size_t bytes) { detail::evict_lines(p, bytes); }

void touch(const void* p, std::size_t bytes) {
  const volatile char* c = static_cast<const volatile char*>(p);
  char sum = 0;
  for (std::size_t i = 0; i < bytes; i += 64) sum = static_cast<char>(sum + c[i]);
  (void)sum;
}

const std::string& tune_cache_cpu() {
  static const std::string cpu = [] {
    const MachineInfo m = machine_info();
    return m.cpu + (m.cpu_id.empty() ? "" : " (" + m.cpu_id + ")") + " / " + std::to_string(m.logical_cores) + " cores";
  }();
  return cpu;
}

namespace {
std::mutex mu;
std::map<std::string, int> memo;  // the process's choices by key
const char kHeader[] = "vinfer tune cache 1";

// The file's lines (after the header) split into fields; empty if it is not a cache.
std::vector<std::array<std::string, 3>> read_lines(const std::string& path) {
  std::vector<std::array<std::string, 3>> out;
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line) || line != kHeader) return out;
  while (std::getline(in, line)) {
    const auto a = line.find('\t'), b = a == std::string::npos ? a : line.find('\t', a + 1);
    if (b == std::string::npos || line.find_first_not_of("0123456789", b + 1) != std::string::npos || b + 1 == line.size())
      continue;  // not a line of ours: dropped
    out.push_back({line.substr(0, a), line.substr(a + 1, b - a - 1), line.substr(b + 1)});
  }
  return out;
}
}  // namespace

int load_tune_cache(const std::string& path) {
  int n = 0;
  std::lock_guard<std::mutex> lock(mu);
  for (const auto& [cpu, key, choice] : read_lines(path))
    if (cpu == tune_cache_cpu() && choice.size() < 4) memo.emplace(key, static_cast<int>(*detail::parse_int64(choice))), ++n;
  return n;
}

int save_tune_cache(const std::string& path) {
  std::ostringstream out;
  out << kHeader << '\n';
  int n = 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& [cpu, key, choice] : read_lines(path))
      if (cpu != tune_cache_cpu()) out << cpu << '\t' << key << '\t' << choice << '\n';
    for (const auto& [key, choice] : memo) out << tune_cache_cpu() << '\t' << key << '\t' << choice << '\n', ++n;
  }
  std::error_code ec;
  const std::filesystem::path file(path);
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!(f << out.str()) || !f.flush()) {
      std::filesystem::remove(tmp, ec);
      return 0;
    }
  }
  std::error_code renamed;
  std::filesystem::rename(tmp, file, renamed);
  if (renamed) std::filesystem::remove(tmp, ec);
  return renamed ? 0 : n;
}

std::pair<int, bool> tuned_choice(const std::string& key, const std::function<int()>& decide) {
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
