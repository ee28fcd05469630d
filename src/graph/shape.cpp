// Shape inference: each node checked and its outputs shaped by its operator's
// rule in the registry (graph/ops/), and the helpers those rules share.
#include <algorithm>

#include "graph/op_params.hpp"
#include "graph/op_registry.hpp"
#include "graph/shape.hpp"
#include "vinfer/error.hpp"

namespace vinfer {
namespace {

[[noreturn]] void bad(const Node& n, const std::string& msg) { throw Error(ErrorKind::BadInput, n.label() + ": " + msg); }

}  // namespace

namespace detail {
bool dims_fit(const Shape& s, std::int64_t limit) {
  std::int64_t n = 1;
  for (std::int64_t d : s)
    if (d < 0 || __builtin_mul_overflow(n, std::max<std::int64_t>(d, 1), &n) || n > limit) return false;
  return true;
}
}  // namespace detail

namespace detail {

// Axes from an attribute (older opsets) or a constant second input (newer ones).
std::vector<std::int64_t> axes_of(const Graph& g, const Node& n, std::size_t input_index) {
  if (n.has("axes")) return n.get_ints("axes");
  if (n.inputs.size() > input_index && n.inputs[input_index] >= 0) {
    const TensorData* t = g.constant(n.inputs[input_index]);
    if (!t) throw Error(ErrorKind::Unsupported, n.label() + ": axes computed at run time are not supported (only constant ones)");
    if (t->dtype != DType::I64) bad(n, "axes must be an int64 tensor");
    return t->i;
  }
  return {};
}

std::vector<std::int64_t> transpose_perm(const Node& n, std::size_t rank) {
  std::vector<std::int64_t> perm = n.get_ints("perm");
  if (perm.empty())
    for (std::size_t i = rank; i-- > 0;) perm.push_back(static_cast<std::int64_t>(i));
  std::vector<bool> seen(rank, false);
  if (perm.size() != rank) bad(n, "perm has " + std::to_string(perm.size()) + " values for rank " + std::to_string(rank));
  for (std::int64_t p : perm) {
    if (p < 0 || p >= static_cast<std::int64_t>(rank) || seen[static_cast<std::size_t>(p)]) bad(n, "perm is not a permutation");
    seen[static_cast<std::size_t>(p)] = true;
  }
  return perm;
}

std::vector<std::int64_t> pad_amounts(const Graph& g, const Node& n) {
  if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
    const TensorData* t = g.constant(n.inputs[1]);
    if (!t || t->dtype != DType::I64) throw Error(ErrorKind::Unsupported, n.label() + ": pads must be a constant int64 tensor");
    return t->i;
  }
  return n.get_ints("pads");
}

float pad_value(const Graph& g, const Node& n) {
  if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
    const TensorData* t = g.constant(n.inputs[2]);
    if (t && t->dtype == DType::F32 && !t->f.empty()) return t->f[0];
  }
  return n.get_float("value", 0.f);
}

std::vector<std::int64_t> reshape_target(const Node& n, const Shape& in, const TensorData& spec) {
  if (spec.dtype != DType::I64 || spec.shape.size() != 1) bad(n, "shape must be a 1-D int64 tensor");
  Shape out = spec.i;
  const bool allowzero = n.get_int("allowzero", 0) != 0;
  int infer = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allowzero) {
      if (i >= in.size()) bad(n, "shape copies dimension " + std::to_string(i) + " that the input lacks");
      out[i] = in[i];
    }
    if (out[i] == -1) {
      if (infer >= 0) bad(n, "shape has more than one -1");
      infer = static_cast<int>(i);
    } else if (out[i] < 0) {
      bad(n, "negative dimension in shape " + shape_str(spec.i));
    } else if (__builtin_mul_overflow(known, out[i], &known)) {
      bad(n, "cannot reshape " + shape_str(in) + " to " + shape_str(spec.i));
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel(in) % known != 0) bad(n, "cannot reshape " + shape_str(in) + " to " + shape_str(spec.i));
    out[static_cast<std::size_t>(infer)] = numel(in) / known;
  }
  if (numel(out) != numel(in)) bad(n, "cannot reshape " + shape_str(in) + " to " + shape_str(spec.i));
  return out;
}

void infer_node(Graph& g, Node& n, const GraphLimits& limits) {
  const OpDef* def = find_op(n.op);
  if (!def) throw Error(ErrorKind::Unsupported, "unsupported operator " + n.label());
  // (Every operator's first output is required; the kernels write it.)
  if (n.outputs.empty() || n.outputs[0] < 0) throw Error(ErrorKind::BadInput, n.label() + ": its first output is missing");
  ShapeContext c(g, n, limits);
  def->shape(c);
  // Float-only operators (their data input; parameters like pads or axes are int64).
  // (An integer or boolean input there is a type vinfer does not run the operator on, not a broken model.)
  if (def->types != OpDef::Any && c.has_input(0) && c.in_dtype(0) != DType::F32) c.unsupported("runs on float32 input only, not integers or booleans");
  // Operators whose every input is float data (weights, bias, statistics):
  // an int32 weight tensor reached the kernels as no floats at all (a fuzzer finding).
  if (def->types == OpDef::AllFloat)
    for (std::size_t i = 1; i < n.inputs.size(); ++i)
      if (c.has_input(i) && c.in_dtype(i) != DType::F32) c.bad("input " + std::to_string(i) + " must be float32");
}

}  // namespace detail

void set_batch(Graph& g, std::int64_t batch, const GraphLimits& limits) {
  if (batch < 0) throw Error(ErrorKind::InvalidArgument, "batch " + std::to_string(batch) + ": expected 1 or more");
  for (const int id : g.inputs) {
    Value& v = g.value(id);
    for (std::size_t d = 0; d < v.shape.size(); ++d) {
      std::int64_t& dim = v.shape[d];
      if (dim == -1) dim = d == 0 && batch > 0 ? batch : 1;
      else if (d == 0 && batch > 0 && dim != batch)
        throw Error(ErrorKind::Unsupported, "input '" + v.name + "' has a fixed batch of " + std::to_string(dim) + ", not " +
                                                std::to_string(batch) + " (export the network with a dynamic batch dimension)");
    }
    if (!detail::dims_fit(v.shape, limits.max_tensor_elements))
      throw Error(ErrorKind::LimitExceeded, "input '" + v.name + "' " + shape_str(v.shape) + " exceeds the tensor element limit");
  }
}

void infer_shapes(Graph& g) {
  GraphLimits limits;
  set_batch(g, 0, limits);
  for (Node& n : g.nodes) detail::infer_node(g, n, limits);
}

}  // namespace vinfer
