// Internal: how many CPUs this process may use: the machine's logical cores,
// cut to its affinity mask (taskset, a container's cpuset) and to its cgroup's
// CPU quota (a container's --cpus, a Kubernetes CPU limit). Threads beyond
// that wait for one another at every barrier instead of working.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace vinfer::detail {

struct CpuGrant {
  int cpus = 1;      // min(affinity, quota rounded up), at least 1
  int logical = 1;   // the machine's logical cores
  int affinity = 1;  // CPUs in the affinity mask
  double quota = 0;  // the cgroup quota in CPUs (0: none)
  // "2 (the CPUs granted: affinity 2 of 2 logical cores, no cgroup CPU quota)"
  std::string why() const;
};

// The cgroup CPU quota in CPUs (0: none) of the cgroup that `proc_self_cgroup`
// (the text of /proc/self/cgroup) names, from the files under `root`
// (/sys/fs/cgroup): v2's cpu.max, v1's cpu.cfs_quota_us / cpu.cfs_period_us,
// the smallest along the path up to the root. Absent, unreadable or
// unlimited ("max", -1) files count as no quota.
double cgroup_cpu_quota(const std::string& root, const std::string& proc_self_cgroup);

// min(affinity, quota): the pure rule.
CpuGrant grant_of(int logical, int affinity, double quota);

// This process's, read now.
CpuGrant read_cpu_grant();

// How many of the CPUs this process may use sat idle, on average, between two
// calls: from their idle and iowait jiffies in /proc/stat. Negative where
// unknown (the first call, no /proc, no time passed).
class IdleMeter {
 public:
  double idle_cpus();
  // The pure part: each "cpuN ..." line of `proc_stat` whose N is in `cpus`
  // adds to {idle + iowait, all} jiffies.
  static std::pair<std::uint64_t, std::uint64_t> jiffies(const std::string& proc_stat, const std::vector<int>& cpus);

 private:
  std::vector<int> cpus_;
  std::uint64_t idle_ = 0, total_ = 0;
  bool have_ = false;
};

// This process's, read at the first call (a default thread count per model
// or resize must not read /proc each time).
const CpuGrant& cpu_grant();

}  // namespace vinfer::detail
