// Internal: the element-wise activations in one place. Each ONNX operator
// that is one maps to a PostOp (kind and parameters) here; shape inference,
// the reference evaluator, the fusion pass and the backends read this table
// instead of naming operators, so a new activation is added here (and in
// activation_formula.hpp) and in each backend's mapping of PostOp kinds.
#pragma once
#include <string>
#include <vector>

#include "graph/activation_formula.hpp"
#include "vinfer/graph.hpp"

namespace vinfer::detail {

// The ONNX operators that are activations (Relu, Clip, HardSwish, ...).
const std::vector<std::string>& activation_ops();
bool is_activation(const std::string& op);
// The activation node n computes (attributes with ONNX's defaults, Clip's
// bounds from its constant inputs). Throws Unsupported for a variant that
// is not one (Gelu's tanh approximation, Clip with runtime bounds).
PostOp activation_of(const Graph& g, const Node& n);
// The number of inputs the operator takes at most (Clip: 3; else 1).
int activation_max_inputs(const std::string& op);

inline float apply_activation(const PostOp& p, float v) {
  return activation_formula(static_cast<int>(p.kind), p.alpha, p.beta, v);
}

}  // namespace vinfer::detail
