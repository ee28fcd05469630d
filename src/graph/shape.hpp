// Internal: per-node shape inference (used by importers and passes).
#pragma once
#include "vinfer/graph.hpp"

namespace vinfer::detail {

// Checks one node and sets its outputs' shapes and types from its inputs.
void infer_node(Graph& g, Node& n, const GraphLimits& limits);
std::vector<std::int64_t> axes_of(const Graph& g, const Node& n, std::size_t input_index);
// Transpose's permutation (default: reversed axes), validated.
std::vector<std::int64_t> transpose_perm(const Node& n, std::size_t rank);
// Pad's amounts ([begin..., end...]) from its input (opset >= 11) or attribute, and its fill value.
std::vector<std::int64_t> pad_amounts(const Graph& g, const Node& n);
float pad_value(const Graph& g, const Node& n);
std::vector<std::int64_t> reshape_target(const Node& n, const Shape& in, const TensorData& spec);
// Whether every dimension is non-negative and the product of the non-zero
// ones stays within `limit`: then no product of any of them overflows.
bool dims_fit(const Shape& s, std::int64_t limit);

}  // namespace vinfer::detail
