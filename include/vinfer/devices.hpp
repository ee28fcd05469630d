// vinfer/devices.hpp: which backends this build has and which devices they see.
//
//   for (const vinfer::BackendInfo& b : vinfer::backends())
//     std::printf("%s: %s\n", b.name.c_str(), b.compiled_in ? "yes" : "no");
//
// The CPU backend is always there. The CUDA backend is compiled in when CMake
// found CUDA and cuDNN (-DVINFER_CUDA=AUTO, the default); it then lists the
// GPUs the driver reports, or says why there are none.
#pragma once
#include <string>
#include <vector>

namespace vinfer {

struct DeviceInfo {
  int index = 0;
  std::string name;     // "NVIDIA H200", or the CPU's model name
  std::string details;  // memory, compute capability, cores, ISA
};

struct BackendInfo {
  std::string name;          // "cpu", "cuda"
  bool compiled_in = false;
  std::string versions;      // library versions it was built against / runs with
  std::vector<DeviceInfo> devices;
  std::string note;          // why no device was found, or how to build it in
};

std::vector<BackendInfo> backends();

// The threads a model and the image pipeline use by default (a thread count
// of 0): the CPUs this process may use, its affinity mask (taskset, a
// container's cpuset) cut to its cgroup's CPU quota (docker --cpus, a
// Kubernetes CPU limit), not the machine's core count. `why`, where given,
// says how it was found.
int default_threads(std::string* why = nullptr);

}  // namespace vinfer
