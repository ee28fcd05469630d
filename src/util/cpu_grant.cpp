#include "util/cpu_grant.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace vinfer::detail {
namespace {

bool read_text(const std::string& path, std::string& out) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return true;
}

// The quota in CPUs that one cgroup directory's files set (0: none).
double quota_in(const std::string& dir, bool v2) {
  std::string a, b;
  if (v2) {
    if (!read_text(dir + "/cpu.max", a)) return 0;
    std::istringstream in(a);
    std::string quota;
    double period = 0;
    if (!(in >> quota >> period) || quota == "max" || period <= 0) return 0;
    try {
      const double q = std::stod(quota);
      return q > 0 ? q / period : 0;
    } catch (...) {
      return 0;
    }
  }
  if (!read_text(dir + "/cpu.cfs_quota_us", a) || !read_text(dir + "/cpu.cfs_period_us", b)) return 0;
  try {
    const double q = std::stod(a), p = std::stod(b);
    return q > 0 && p > 0 ? q / p : 0;
  } catch (...) {
    return 0;
  }
}

// The smallest quota from `dir` + path up to `dir` itself.
double smallest_along(const std::string& dir, std::string path, bool v2) {
  double best = 0;
  for (;;) {
    const double q = quota_in(dir + (path == "/" ? "" : path), v2);
    if (q > 0 && (best == 0 || q < best)) best = q;
    if (path.empty() || path == "/") break;
    const std::size_t slash = path.rfind('/');
    path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
  }
  return best;
}

}  // namespace

double cgroup_cpu_quota(const std::string& root, const std::string& proc_self_cgroup) {
  double best = 0;
  auto take = [&](double q) {
    if (q > 0 && (best == 0 || q < best)) best = q;
  };
  std::istringstream lines(proc_self_cgroup);
  for (std::string line; std::getline(lines, line);) {
    // "hierarchy-id:controllers:path"; v2's is "0::path".
    const std::size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (path.empty() || path[0] != '/') continue;
    if (controllers.empty()) {
      take(smallest_along(root, path, true));
      continue;
    }
    std::istringstream c(controllers);
    bool cpu = false;
    for (std::string name; std::getline(c, name, ',');) cpu = cpu || name == "cpu";
    if (!cpu) continue;
    for (const char* mount : {"/cpu", "/cpu,cpuacct", "/cpuacct,cpu"}) take(smallest_along(root + mount, path, false));
  }
  return best;
}

CpuGrant grant_of(int logical, int affinity, double quota) {
  CpuGrant g;
  g.logical = std::max(1, logical);
  g.affinity = std::clamp(affinity, 1, g.logical);
  g.quota = quota > 0 ? quota : 0;
  g.cpus = g.affinity;
  if (g.quota > 0) g.cpus = std::min(g.cpus, std::max(1, static_cast<int>(std::ceil(g.quota - 1e-9))));
  return g;
}

std::string CpuGrant::why() const {
  char line[160];
  if (quota > 0)
    std::snprintf(line, sizeof line, "%d (the CPUs granted: affinity %d of %d logical cores, cgroup CPU quota %.2f)", cpus, affinity,
                  logical, quota);
  else
    std::snprintf(line, sizeof line, "%d (the CPUs granted: affinity %d of %d logical cores, no cgroup CPU quota)", cpus, affinity,
                  logical);
  return line;
}

CpuGrant read_cpu_grant() {
  const int logical = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int affinity = logical;
  double quota = 0;
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) affinity = CPU_COUNT(&set);
  std::string self;
  if (read_text("/proc/self/cgroup", self)) quota = cgroup_cpu_quota("/sys/fs/cgroup", self);
#endif
  return grant_of(logical, affinity, quota);
}

const CpuGrant& cpu_grant() {
  static const CpuGrant g = read_cpu_grant();
  return g;
}

std::pair<std::uint64_t, std::uint64_t> IdleMeter::jiffies(const std::string& proc_stat, const std::vector<int>& cpus) {
  std::uint64_t idle = 0, total = 0;
  std::istringstream in(proc_stat);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu", 0) != 0 || line.size() < 4 || !std::isdigit(static_cast<unsigned char>(line[3]))) continue;
    std::istringstream f(line.substr(3));
    int cpu = -1;
    f >> cpu;
    if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) continue;
    std::uint64_t v = 0;
    for (int field = 0; field < 8 && (f >> v); ++field) {  // user nice system idle iowait irq softirq steal
      total += v;
      if (field == 3 || field == 4) idle += v;
    }
  }
  return {idle, total};
}

double IdleMeter::idle_cpus() {
#if defined(__linux__)
  if (cpus_.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus_.push_back(c);
  }
  std::ifstream f("/proc/stat");
  if (!f) return -1;
  std::string text, line;
  while (std::getline(f, line) && line.rfind("cpu", 0) == 0) text += line + "\n";  // the cpu lines come first
  const auto [idle, total] = jiffies(text, cpus_);
  const bool known = have_ && total > total_ && idle >= idle_;
  const double share = known ? static_cast<double>(idle - idle_) / static_cast<double>(total - total_) : 0;
  idle_ = idle, total_ = total, have_ = true;
  return known ? share * static_cast<double>(cpus_.size()) : -1;
#else
  return -1;
#endif
}

}  // namespace vinfer::detail
