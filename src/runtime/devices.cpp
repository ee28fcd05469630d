// vinfer::backends(): the CPU backend always, the CUDA backend where built in.
#include <fstream>
#include <string>
#include <thread>

#include <oneapi/dnnl/dnnl.hpp>

#include "vinfer/devices.hpp"
#include "util/cpu_grant.hpp"
#ifdef VINFER_HAS_CUDA
#include "cuda/cuda_backend.hpp"
#endif

namespace vinfer {
namespace {

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "unknown CPU";
}

std::string isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::avx512_core_amx: return "AVX-512 + AMX";
    case dnnl::cpu_isa::avx512_core_bf16: return "AVX-512 (bf16)";
    case dnnl::cpu_isa::avx512_core_vnni: return "AVX-512 (VNNI)";
    case dnnl::cpu_isa::avx512_core: return "AVX-512";
    case dnnl::cpu_isa::avx2_vnni: return "AVX2 (VNNI)";
    case dnnl::cpu_isa::avx2: return "AVX2";
    case dnnl::cpu_isa::avx: return "AVX";
    case dnnl::cpu_isa::sse41: return "SSE4.1";
    default: return "baseline";
  }
}

}  // namespace

int default_threads(std::string* why) {
  const detail::CpuGrant& g = detail::cpu_grant();
  if (why) *why = g.why();
  return g.cpus;
}

std::vector<BackendInfo> backends() {
  std::vector<BackendInfo> out;
  BackendInfo cpu;
  cpu.name = "cpu";
  cpu.compiled_in = true;
  const dnnl_version_t* v = dnnl_version();
  cpu.versions = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  DeviceInfo d;
  d.name = cpu_model();
  d.details = std::to_string(std::thread::hardware_concurrency()) + " logical cores, oneDNN kernels: " +
              isa_name(dnnl::get_effective_cpu_isa());
  cpu.devices.push_back(d);
  out.push_back(cpu);
#ifdef VINFER_HAS_CUDA
  out.push_back(cuda::probe());
#else
  BackendInfo cu;
  cu.name = "cuda";
  cu.note = "not compiled in (configure with -DVINFER_CUDA=ON where CUDA and cuDNN 9 are installed)";
  out.push_back(cu);
#endif
  return out;
}

}  // namespace vinfer
