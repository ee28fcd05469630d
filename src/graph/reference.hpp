// Internal: every operator as plain loops over row-major tensors. This is the
// meaning of each op in vinfer: constant folding evaluates with it, and the
// tests hold every backend kernel to it. Not fast, by design.
#pragma once
#include <vector>

#include "vinfer/graph.hpp"

namespace vinfer::detail {

// Evaluates node `n` (including its post_ops) on `inputs` (one per n.inputs, nullptr
// for omitted ones; Sum post-op operands follow in post_op order). Output shapes are
// taken from the graph's values, which infer_node has filled.
std::vector<TensorData> eval_reference(const Graph& g, const Node& n, const std::vector<const TensorData*>& inputs);

}  // namespace vinfer::detail
