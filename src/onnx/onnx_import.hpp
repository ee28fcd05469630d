// Internal: ONNX ModelProto -> vinfer::Graph.
#pragma once
#include <cstdint>
#include <string>

#include "util/load_stats.hpp"

#include "vinfer/graph.hpp"

namespace vinfer::detail {

// `dir` is the model's folder, for external data (which may not leave it).
// `times` (optional) gets the stages "read", "check" and "convert".
Graph import_onnx(const std::uint8_t* data, std::size_t size, const std::string& name, const std::string& dir,
                  const GraphLimits& limits, StageTimes* times = nullptr);
// The same from a file, parsed as it is read (no copy of the whole file held
// beside the parsed model: VGG19's is 548 MB); at most max_file_bytes.
Graph import_onnx_file(const std::string& path, const std::string& dir, const GraphLimits& limits,
                       std::uint64_t max_file_bytes, StageTimes* times = nullptr);

}  // namespace vinfer::detail
