// vinfer/stats.hpp: latency statistics and a description of the machine,
// shared by every benchmark vinfer prints.
#pragma once
#include <string>
#include <vector>

namespace vinfer {

struct LatencySummary {
  std::size_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, min = 0, max = 0;
};

// Percentiles by linear interpolation between order statistics (numpy's default).
LatencySummary summarize(std::vector<double> samples);

struct MachineInfo {
  std::string cpu;      // model name from /proc/cpuinfo
  // x86: "family F model M stepping S" from /proc/cpuinfo, empty where it
  // says none. Virtual machines often show a bare "AMD EPYC" as the model
  // name for Zen 4 and Zen 5 hosts alike (half and all of a 512-bit FMA).
  std::string cpu_id;
  int logical_cores = 0;
  std::string simd;     // the Highway target chosen at runtime (e.g. AVX2)
  std::string os;
};
MachineInfo machine_info();

// The FP32 peak in GFLOP/s (2 per multiply-add) that `threads` threads of
// register-only FMAs reach, with the widest FMA the CPU has: the ceiling
// per-layer figures are compared with. About 0.2 s. gflops is 0 without FMA.
struct PeakFlops {
  double gflops = 0;
  int threads = 0;
  std::string isa;
};
PeakFlops measure_fp32_peak(int threads);

}  // namespace vinfer
