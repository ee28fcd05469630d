// Internal: the operator registry. Every operator vinfer knows is one OpDef,
// written in one place (a file under src/graph/ops/): how an ONNX node of it
// is normalized at import, its shape rule and its reference kernel. Shape
// inference, the reference evaluator, constant folding and the importers
// find operators here by name and never compare names themselves; backends
// declare on their own which operators and configurations they run fast
// (a node that none runs falls back to this reference kernel).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vinfer/graph.hpp"

namespace vinfer::detail {

// What a shape rule sees of its node: the inputs' shapes and types, checks
// that throw one-line errors naming the node, and where the outputs go.
class ShapeContext {
 public:
  ShapeContext(Graph& graph, Node& node, const GraphLimits& limits) : g(graph), n(node), limits_(limits) {}
  Graph& g;
  Node& n;
  const Shape& in_shape(std::size_t i) const;  // throws BadInput where input i is missing
  DType in_dtype(std::size_t i) const;
  bool has_input(std::size_t i) const { return i < n.inputs.size() && n.inputs[i] >= 0; }
  // lo..hi inputs, the first lo of them present.
  void need_inputs(std::size_t lo, std::size_t hi) const;
  // Input i as a constant (throws Unsupported, saying `what` must be one).
  const TensorData& need_const(std::size_t i, const char* what) const;
  // Whether output o exists and something (a node or the graph's outputs) reads it.
  bool output_read(std::size_t o) const;
  // Output o's shape and type; checks the element limit.
  void set(std::size_t o, Shape s, DType t = DType::F32);
  [[noreturn]] void bad(const std::string& msg) const;
  [[noreturn]] void unsupported(const std::string& msg) const;

 private:
  const GraphLimits& limits_;
};

// What a reference kernel sees: its inputs (nullptr for omitted optional
// ones) and its outputs, already sized from the graph's inferred shapes.
class RefContext {
 public:
  RefContext(const Graph& graph, const Node& node, const std::vector<const TensorData*>& in, std::vector<TensorData>& out);
  const Graph& g;
  const Node& n;
  const TensorData& arg(std::size_t i) const;  // a required input
  const TensorData* opt(std::size_t i) const;  // an optional one, or nullptr
  TensorData& y() const { return out_[0]; }
  // Output o (o >= 1 made on first use, zero-filled, in the inferred shape).
  TensorData& out(std::size_t o) const;

 private:
  const std::vector<const TensorData*>& in_;
  std::vector<TensorData>& out_;
};

// A zero-filled tensor of type t and shape s.
TensorData make_tensor_data(DType t, const Shape& s);

struct OpDef {
  std::string_view name;
  void (*shape)(ShapeContext&) = nullptr;
  void (*reference)(RefContext&) = nullptr;
  // Which types its inputs take: Float (float32 data; other inputs such as
  // axes or pads may be int64), Any (int64 too: shape arithmetic), AllFloat
  // (every input float32: weights, bias, statistics).
  enum Types { Float, Any, AllFloat } types = Float;
  // ONNX import: turns opset-dependent forms into the attributes the shape
  // rule and the kernels read (nullptr: nothing to do). Throws Unsupported
  // for forms vinfer does not run.
  void (*from_onnx)(Node&, std::int64_t opset) = nullptr;
};

// from_onnx for operators with a training_mode attribute: refuses training mode.
void refuse_training_mode(Node& n, std::int64_t opset);

// The operator called `name` (ONNX's, or "domain.Name" outside the default domain), or nullptr.
const OpDef* find_op(std::string_view name);
// Every registered operator's name, sorted.
std::vector<std::string> registered_ops();

// The families, one file each under src/graph/ops/.
void add_nn_ops(std::vector<OpDef>& ops);           // convolution, pools, normalization, matrix products
void add_elementwise_ops(std::vector<OpDef>& ops);  // arithmetic, comparisons, activations, Where
void add_layout_ops(std::vector<OpDef>& ops);       // reshapes, slices, gathers, shape arithmetic

}  // namespace vinfer::detail
