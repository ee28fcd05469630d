#include <sys/utsname.h>

#include <fstream>
#include <string>
#include <thread>

#include <hwy/highway.h>
#include <hwy/targets.h>

#include "vinfer/stats.hpp"

namespace vinfer {

MachineInfo machine_info() {
  MachineInfo m;
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto p = line.find(':');
      if (p != std::string::npos) m.cpu = line.substr(p + 2);
      break;
    }
  }
  m.logical_cores = static_cast<int>(std::thread::hardware_concurrency());
  const std::int64_t targets = hwy::SupportedTargets() & HWY_TARGETS;
  m.simd = hwy::TargetName(targets & -targets);  // the lowest bit is the best target
  utsname u{};
  if (uname(&u) == 0) m.os = std::string(u.sysname) + " " + u.release + " " + u.machine;
  return m;
}

std::string version() { return VINFER_VERSION; }

}  // namespace vinfer
