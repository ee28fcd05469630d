// libFuzzer: ONNX import, passes and the CPU backend, then one run.
#include <cstdint>
#include <vector>

#include "vinfer/engine.hpp"
#include "vinfer/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  vinfer::EngineOptions o;
  o.threads = 1;
  o.limits.max_nodes = 2000;
  o.limits.max_tensor_elements = 1 << 22;
  o.limits.max_total_bytes = 64 << 20;
  try {
    vinfer::Model m = vinfer::Model::load_onnx_memory(data, size, "fuzz.onnx", o);
    if (m.input_size() <= (1u << 20) && m.output_size() <= (1u << 20)) {
      std::vector<float> x(m.input_size(), 0.5f), y(m.output_size());
      m.run(x.data(), y.data());
    }
  } catch (const vinfer::Error&) {
  }
  return 0;
}
