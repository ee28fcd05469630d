// vinfer/graph.hpp: the network as a graph of operators, independent of any backend.
//
// Importers (ONNX) and the built-in model zoo produce a Graph; passes rewrite
// it (constant folding, BatchNorm folding, fusion); a backend compiles it.
// Operators use ONNX names and ONNX semantics (NCHW, float32 activations,
// int64 shape tensors). vinfer's own operators carry the "vinfer." prefix.
//
//   vinfer::Graph g;
//   int x = g.add_input("x", {1, 3, 224, 224});
//   int w = g.add_constant("w", vinfer::TensorData::f32({64, 3, 7, 7}, weights));
//   int y = g.add_node("Conv", {x, w}, {{"strides", std::vector<std::int64_t>{2, 2}}})[0];
//   g.mark_output(y);
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace vinfer {

using Shape = std::vector<std::int64_t>;

enum class DType { F32, I64 };
const char* to_string(DType t);

// The element types a graph's inputs and outputs take and give (ONNX's).
// Inside the graph floats are float32 (DType::F32) and integers and
// booleans int64 (DType::I64): they are converted at the boundary only.
enum class ElementType { Float32, Int64, Int32, Bool, UInt8, Int8, Int16, UInt16, UInt32 };
const char* to_string(ElementType t);  // "float32", "int64", ...
DType dtype_of(ElementType t);

// A dense constant (weights, shape tensors). Row-major.
struct TensorData {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<float> f;         // when dtype == F32
  std::vector<std::int64_t> i;  // when dtype == I64

  static TensorData f32(Shape shape, std::vector<float> values);
  static TensorData i64(Shape shape, std::vector<std::int64_t> values);
  std::int64_t numel() const;
};

std::int64_t numel(const Shape& s);
std::string shape_str(const Shape& s);

using AttrValue = std::variant<std::int64_t, float, std::string, std::vector<std::int64_t>, std::vector<float>, TensorData>;

// An activation applied after an operator's result, in order (fused epilogue).
struct PostOp {
  enum Kind {
    Relu,
    Clip,     // min(max(x, alpha), beta)
    Sigmoid,
    Swish,    // x * sigmoid(x)
    Sum,      // x + the node's extra input `sum_input`
    HardSigmoid,  // max(0, min(1, alpha * x + beta))
    HardSwish,    // x * max(0, min(1, x / 6 + 1 / 2))
    LeakyRelu,    // x < 0 ? alpha * x : x
    Tanh,
    Gelu,         // x / 2 * (1 + erf(x / sqrt(2)))
  } kind = Relu;
  float alpha = 0, beta = 0;
  int sum_input = -1;  // value id, for Sum
};
const char* to_string(PostOp::Kind k);

struct Value {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;                                // filled by shape inference
  std::shared_ptr<const TensorData> constant; // set for weights and folded constants
  bool is_constant() const { return constant != nullptr; }
};

struct Node {
  std::string op;
  std::string name;
  std::vector<int> inputs;   // value ids; -1 for an omitted optional input
  std::vector<int> outputs;  // value ids
  std::map<std::string, AttrValue> attrs;
  std::vector<PostOp> post_ops;

  bool has(const std::string& key) const { return attrs.count(key) != 0; }
  std::int64_t get_int(const std::string& key, std::int64_t dflt) const;
  float get_float(const std::string& key, float dflt) const;
  std::string get_string(const std::string& key, const std::string& dflt) const;
  std::vector<std::int64_t> get_ints(const std::string& key, std::vector<std::int64_t> dflt = {}) const;
  std::vector<float> get_floats(const std::string& key) const;
  // Human-readable label for errors: "Conv 'features.conv0'".
  std::string label() const;
};

class Graph {
 public:
  std::string name;
  int opset = 0;  // the ONNX (default domain) opset it was imported from; 0: built by vinfer
  std::vector<Value> values;
  std::vector<Node> nodes;   // topological order
  std::vector<int> inputs;   // value ids of the runtime inputs; -1 in an input's shape is a
                             // symbolic dimension, fixed when the graph is compiled (set_batch)
  std::vector<int> outputs;  // value ids of the results
  // The element types of inputs and outputs, by position; where one is not
  // given (a graph built in code), its value's dtype says (float32 or int64).
  std::vector<ElementType> input_types, output_types;

  int add_value(std::string name, DType dtype = DType::F32, Shape shape = {});
  int add_input(std::string name, Shape shape, ElementType type = ElementType::Float32);
  int add_constant(std::string name, TensorData data);
  // Appends a node with fresh output values (named after the node) and returns their ids.
  std::vector<int> add_node(std::string op, std::vector<int> inputs, std::map<std::string, AttrValue> attrs = {},
                            int num_outputs = 1, std::string name = {});
  void mark_output(int value) { outputs.push_back(value); }
  ElementType input_type(std::size_t i) const;
  ElementType output_type(std::size_t i) const;

  const Value& value(int id) const { return values.at(static_cast<std::size_t>(id)); }
  Value& value(int id) { return values.at(static_cast<std::size_t>(id)); }
  const TensorData* constant(int id) const { return id >= 0 ? value(id).constant.get() : nullptr; }

  // For each value, the indices of the nodes that read it (graph outputs not included).
  std::vector<std::vector<int>> consumers() const;
  bool is_output(int value) const;
};

// Limits checked while a graph is built or imported (hostile models).
struct GraphLimits {
  std::int64_t max_nodes = 100000;
  std::int64_t max_tensor_elements = 1LL << 31;  // any one tensor
  std::int64_t max_total_bytes = 8LL << 30;      // all constants together
};

// The operators vinfer implements (ONNX names and "vinfer." ones).
bool is_supported_op(const std::string& op);

// Fixes the inputs' symbolic (-1) dimensions: the first one of each input
// becomes `batch` (1 when batch is 0), any other 1. An input whose first
// dimension is fixed keeps it; asking for another batch then throws
// Error(Unsupported) (the network was exported for that batch only).
void set_batch(Graph& g, std::int64_t batch, const GraphLimits& limits = {});

// Fills Value::shape for every value from the inputs and constants (symbolic
// input dimensions as set_batch(g, 0) fixes them); checks each node's
// attributes and inputs. Throws Error(BadInput/Unsupported) naming the node.
void infer_shapes(Graph& g);

}  // namespace vinfer
