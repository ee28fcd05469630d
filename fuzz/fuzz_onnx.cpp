// libFuzzer: ONNX import, passes and the CPU backend, then one run of every
// input to every output (the general API), and of the image API where the
// graph is one float32 input to one float32 output.
#include <cstdint>
#include <map>
#include <string>
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
    std::map<std::string, vinfer::Tensor> feeds;
    std::int64_t elements = 0;
    for (const vinfer::TensorInfo& in : m.inputs()) {
      vinfer::Tensor t;
      t.type = in.type;
      t.shape = in.shape;
      const std::int64_t n = vinfer::numel(in.shape);
      elements += n;
      if (elements > (1 << 20)) return 0;
      if (in.type == vinfer::ElementType::Float32) t.f.assign(static_cast<std::size_t>(n), 0.5f);
      else t.i.assign(static_cast<std::size_t>(n), 1);
      feeds.emplace(in.name, std::move(t));
    }
    for (const vinfer::TensorInfo& out : m.outputs())
      if (vinfer::numel(out.shape) > (1 << 20)) return 0;
    m.run(feeds);
    const bool image_api = m.inputs().size() == 1 && m.outputs().size() == 1 &&
                           m.inputs()[0].type == vinfer::ElementType::Float32 && m.outputs()[0].type == vinfer::ElementType::Float32;
    if (image_api) {
      std::vector<float> x(m.input_size(), 0.5f), y(m.output_size());
      m.run(x.data(), y.data());
    }
  } catch (const vinfer::Error&) {
  }
  return 0;
}
