// Graph containers and attribute access.
#include <algorithm>
#include <sstream>

#include "vinfer/error.hpp"
#include "vinfer/graph.hpp"

namespace vinfer {

const char* to_string(DType t) { return t == DType::F32 ? "float32" : "int64"; }

const char* to_string(ElementType t) {
  switch (t) {
    case ElementType::Float32: return "float32";
    case ElementType::Int64: return "int64";
    case ElementType::Int32: return "int32";
    case ElementType::Bool: return "bool";
    case ElementType::UInt8: return "uint8";
    case ElementType::Int8: return "int8";
    case ElementType::Int16: return "int16";
    case ElementType::UInt16: return "uint16";
    case ElementType::UInt32: return "uint32";
  }
  return "?";
}

DType dtype_of(ElementType t) { return t == ElementType::Float32 ? DType::F32 : DType::I64; }

const char* to_string(PostOp::Kind k) {
  switch (k) {
    case PostOp::Relu: return "Relu";
    case PostOp::Clip: return "Clip";
    case PostOp::Sigmoid: return "Sigmoid";
    case PostOp::Swish: return "Swish";
    case PostOp::Sum: return "Sum";
    case PostOp::HardSigmoid: return "HardSigmoid";
    case PostOp::HardSwish: return "HardSwish";
    case PostOp::LeakyRelu: return "LeakyRelu";
    case PostOp::Tanh: return "Tanh";
    case PostOp::Gelu: return "Gelu";
  }
  return "?";
}

std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (std::int64_t d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s) {
  std::ostringstream o;
  o << '[';
  for (std::size_t i = 0; i < s.size(); ++i) o << (i ? "," : "") << s[i];
  o << ']';
  return o.str();
}

TensorData TensorData::f32(Shape shape, std::vector<float> values) {
  TensorData t;
  t.dtype = DType::F32;
  t.shape = std::move(shape);
  t.f = std::move(values);
  if (static_cast<std::int64_t>(t.f.size()) != vinfer::numel(t.shape))
    throw Error(ErrorKind::Internal, "TensorData::f32: " + std::to_string(t.f.size()) + " values for shape " + shape_str(t.shape));
  return t;
}

TensorData TensorData::i64(Shape shape, std::vector<std::int64_t> values) {
  TensorData t;
  t.dtype = DType::I64;
  t.shape = std::move(shape);
  t.i = std::move(values);
  if (static_cast<std::int64_t>(t.i.size()) != vinfer::numel(t.shape))
    throw Error(ErrorKind::Internal, "TensorData::i64: " + std::to_string(t.i.size()) + " values for shape " + shape_str(t.shape));
  return t;
}

std::int64_t TensorData::numel() const { return vinfer::numel(shape); }

std::int64_t Node::get_int(const std::string& key, std::int64_t dflt) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return dflt;
  if (auto* v = std::get_if<std::int64_t>(&it->second)) return *v;
  throw Error(ErrorKind::BadInput, label() + ": attribute '" + key + "' is not an integer");
}

float Node::get_float(const std::string& key, float dflt) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return dflt;
  if (auto* v = std::get_if<float>(&it->second)) return *v;
  if (auto* v = std::get_if<std::int64_t>(&it->second)) return static_cast<float>(*v);
  throw Error(ErrorKind::BadInput, label() + ": attribute '" + key + "' is not a float");
}

std::string Node::get_string(const std::string& key, const std::string& dflt) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return dflt;
  if (auto* v = std::get_if<std::string>(&it->second)) return *v;
  throw Error(ErrorKind::BadInput, label() + ": attribute '" + key + "' is not a string");
}

std::vector<std::int64_t> Node::get_ints(const std::string& key, std::vector<std::int64_t> dflt) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return dflt;
  if (auto* v = std::get_if<std::vector<std::int64_t>>(&it->second)) return *v;
  throw Error(ErrorKind::BadInput, label() + ": attribute '" + key + "' is not a list of integers");
}

std::vector<float> Node::get_floats(const std::string& key) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return {};
  if (auto* v = std::get_if<std::vector<float>>(&it->second)) return *v;
  throw Error(ErrorKind::BadInput, label() + ": attribute '" + key + "' is not a list of floats");
}

std::string Node::label() const { return op + " '" + name + "'"; }

int Graph::add_value(std::string vname, DType dtype, Shape shape) {
  Value v;
  v.name = std::move(vname);
  v.dtype = dtype;
  v.shape = std::move(shape);
  values.push_back(std::move(v));
  return static_cast<int>(values.size()) - 1;
}

int Graph::add_input(std::string vname, Shape shape, ElementType type) {
  int id = add_value(std::move(vname), dtype_of(type), std::move(shape));
  inputs.push_back(id);
  input_types.resize(inputs.size() - 1, ElementType::Float32);
  input_types.push_back(type);
  return id;
}

namespace {
ElementType type_of(DType t) { return t == DType::F32 ? ElementType::Float32 : ElementType::Int64; }
}  // namespace

ElementType Graph::input_type(std::size_t i) const {
  return i < input_types.size() ? input_types[i] : type_of(value(inputs.at(i)).dtype);
}
ElementType Graph::output_type(std::size_t i) const {
  return i < output_types.size() ? output_types[i] : type_of(value(outputs.at(i)).dtype);
}

int Graph::add_constant(std::string vname, TensorData data) {
  int id = add_value(std::move(vname), data.dtype, data.shape);
  values[static_cast<std::size_t>(id)].constant = std::make_shared<const TensorData>(std::move(data));
  return id;
}

std::vector<int> Graph::add_node(std::string op, std::vector<int> ins, std::map<std::string, AttrValue> attrs,
                                 int num_outputs, std::string nname) {
  Node n;
  n.op = std::move(op);
  n.name = nname.empty() ? n.op + "_" + std::to_string(nodes.size()) : std::move(nname);
  n.inputs = std::move(ins);
  n.attrs = std::move(attrs);
  for (int i = 0; i < num_outputs; ++i)
    n.outputs.push_back(add_value(num_outputs == 1 ? n.name : n.name + ":" + std::to_string(i)));
  nodes.push_back(std::move(n));
  return nodes.back().outputs;
}

std::vector<std::vector<int>> Graph::consumers() const {
  std::vector<std::vector<int>> c(values.size());
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    auto add = [&](int v) {
      if (v >= 0 && (c[static_cast<std::size_t>(v)].empty() || c[static_cast<std::size_t>(v)].back() != static_cast<int>(n)))
        c[static_cast<std::size_t>(v)].push_back(static_cast<int>(n));
    };
    for (int v : nodes[n].inputs) add(v);
    for (const PostOp& p : nodes[n].post_ops)
      if (p.kind == PostOp::Sum) add(p.sum_input);
  }
  return c;
}

bool Graph::is_output(int v) const { return std::find(outputs.begin(), outputs.end(), v) != outputs.end(); }

}  // namespace vinfer
