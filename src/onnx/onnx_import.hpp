// Internal: ONNX ModelProto -> vinfer::Graph.
#pragma once
#include <cstdint>
#include <string>

#include "vinfer/graph.hpp"

namespace vinfer::detail {

// `dir` is the model's folder, for external data (which may not leave it).
Graph import_onnx(const std::uint8_t* data, std::size_t size, const std::string& name, const std::string& dir,
                  const GraphLimits& limits);

}  // namespace vinfer::detail
