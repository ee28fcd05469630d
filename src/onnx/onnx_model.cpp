// Model's ONNX entry points: the importer makes the graph, the runtime
// compiles it (the runtime itself knows no importer).
#include <filesystem>

#include "onnx/onnx_import.hpp"
#include "util/load_stats.hpp"
#include "vinfer/engine.hpp"

namespace vinfer {

Model Model::load_onnx_memory(const std::uint8_t* data, std::size_t size, const std::string& name, const EngineOptions& options) {
  detail::StageTimes times;
  Graph g = detail::import_onnx(data, size, name, {}, options.limits, &times);
  return from_graph(std::move(g), name, options, std::move(times));
}

Model Model::load_onnx(const std::string& path, const EngineOptions& options) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  const std::string dir = parent.empty() ? std::string(".") : parent;
  detail::StageTimes times;
  Graph g = detail::import_onnx_file(path, dir, options.limits, static_cast<std::uint64_t>(options.max_file_bytes), &times);
  return from_graph(std::move(g), path, options, std::move(times));
}

}  // namespace vinfer
