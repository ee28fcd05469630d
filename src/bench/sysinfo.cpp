#include <sys/utsname.h>

#include <fstream>
#include <string>
#include <thread>

#include <hwy/highway.h>
#include <hwy/targets.h>

#include "util/cpu_features.hpp"
#include "vinfer/stats.hpp"

namespace vinfer {

MachineInfo machine_info() {
  MachineInfo m;
  std::ifstream f("/proc/cpuinfo");
  std::string line, family, model, stepping;
  // The first processor's fields (the lines before the first blank one).
  while (std::getline(f, line) && !line.empty()) {
    const auto p = line.find(':');
    if (p == std::string::npos || p + 2 > line.size()) continue;
    std::string name = line.substr(0, p);
    name.erase(name.find_last_not_of(" \t") + 1);
    const std::string value = line.substr(p + 2);
    if (name == "model name") m.cpu = value;
    else if (name == "cpu family") family = value;
    else if (name == "model") model = value;
    else if (name == "stepping") stepping = value;
  }
  if (!family.empty() && !model.empty())
    m.cpu_id = "family " + family + " model " + model + (stepping.empty() ? "" : " stepping " + stepping);
  m.logical_cores = static_cast<int>(std::thread::hardware_concurrency());
  m.simd = hwy::TargetName(detail::hwy_target());
  utsname u{};
  if (uname(&u) == 0) m.os = std::string(u.sysname) + " " + u.release + " " + u.machine;
  return m;
}

}  // namespace vinfer
