#include "graph/op_registry.hpp"

#include <algorithm>
#include <map>

#include "graph/shape.hpp"
#include "vinfer/error.hpp"

namespace vinfer::detail {

const Shape& ShapeContext::in_shape(std::size_t i) const {
  if (!has_input(i)) bad("missing input " + std::to_string(i));
  return g.value(n.inputs[i]).shape;
}

DType ShapeContext::in_dtype(std::size_t i) const { return g.value(n.inputs.at(i)).dtype; }

void ShapeContext::need_inputs(std::size_t lo, std::size_t hi) const {
  if (n.inputs.size() < lo || n.inputs.size() > hi)
    bad("expects " + std::to_string(lo) + (lo == hi ? "" : ".." + std::to_string(hi)) + " inputs, has " + std::to_string(n.inputs.size()));
  for (std::size_t i = 0; i < lo; ++i)
    if (n.inputs[i] < 0) bad("input " + std::to_string(i) + " is required");
}

const TensorData& ShapeContext::need_const(std::size_t i, const char* what) const {
  const TensorData* t = i < n.inputs.size() ? g.constant(n.inputs[i]) : nullptr;
  if (!t) unsupported(std::string(what) + " must be a constant");
  return *t;
}

bool ShapeContext::output_read(std::size_t o) const {
  if (o >= n.outputs.size() || n.outputs[o] < 0) return false;
  return g.is_output(n.outputs[o]) || !g.consumers()[static_cast<std::size_t>(n.outputs[o])].empty();
}

void ShapeContext::set(std::size_t o, Shape s, DType t) {
  for (std::int64_t d : s)
    if (d < 0) bad("negative output dimension " + shape_str(s));
  if (!dims_fit(s, limits_.max_tensor_elements))
    throw Error(ErrorKind::LimitExceeded, n.label() + ": output " + shape_str(s) + " exceeds the tensor element limit");
  if (o < n.outputs.size() && n.outputs[o] >= 0) {
    Value& v = g.value(n.outputs[o]);
    v.shape = std::move(s);
    v.dtype = t;
  }
}

void ShapeContext::bad(const std::string& msg) const { throw Error(ErrorKind::BadInput, n.label() + ": " + msg); }

void ShapeContext::unsupported(const std::string& msg) const { throw Error(ErrorKind::Unsupported, n.label() + ": " + msg); }

TensorData make_tensor_data(DType t, const Shape& s) {
  TensorData d;
  d.dtype = t;
  d.shape = s;
  if (t == DType::F32) d.f.assign(static_cast<std::size_t>(numel(s)), 0.f);
  else d.i.assign(static_cast<std::size_t>(numel(s)), 0);
  return d;
}

RefContext::RefContext(const Graph& graph, const Node& node, const std::vector<const TensorData*>& in, std::vector<TensorData>& out)
    : g(graph), n(node), in_(in), out_(out) {
  // Room for every output up front: y() stays valid while out(o) adds the others.
  out_.reserve(std::max<std::size_t>(1, n.outputs.size()));
  const Value& v = g.value(n.outputs.at(0));
  out_.push_back(make_tensor_data(v.dtype, v.shape));
}

const TensorData& RefContext::arg(std::size_t i) const {
  if (i >= in_.size() || !in_[i]) throw Error(ErrorKind::Internal, n.label() + ": missing input " + std::to_string(i));
  return *in_[i];
}

// Optional inputs only: Sum post-op operands follow the node's own inputs.
const TensorData* RefContext::opt(std::size_t i) const { return i < in_.size() && i < n.inputs.size() ? in_[i] : nullptr; }

TensorData& RefContext::out(std::size_t o) const {
  if (o >= std::max<std::size_t>(1, n.outputs.size())) throw Error(ErrorKind::Internal, n.label() + ": no output " + std::to_string(o));
  while (out_.size() <= o) {
    const int id = n.outputs[out_.size()];
    out_.push_back(id >= 0 ? make_tensor_data(g.value(id).dtype, g.value(id).shape) : TensorData{});
  }
  return out_[o];
}

void refuse_training_mode(Node& n, std::int64_t) {
  if (n.get_int("training_mode", 0) != 0) throw Error(ErrorKind::Unsupported, n.label() + ": training mode is not supported");
}

namespace {

const std::map<std::string_view, OpDef>& registry() {
  static const std::map<std::string_view, OpDef> r = [] {
    std::vector<OpDef> all;
    add_nn_ops(all);
    add_elementwise_ops(all);
    add_layout_ops(all);
    std::map<std::string_view, OpDef> m;
    for (const OpDef& d : all)
      if (!d.shape || !d.reference || !m.emplace(d.name, d).second)
        throw Error(ErrorKind::Internal, "operator " + std::string(d.name) + " is registered twice or without its rules");
    return m;
  }();
  return r;
}

}  // namespace

const OpDef* find_op(std::string_view name) {
  const auto& r = registry();
  auto it = r.find(name);
  return it == r.end() ? nullptr : &it->second;
}

std::vector<std::string> registered_ops() {
  std::vector<std::string> names;
  for (const auto& [name, def] : registry()) names.emplace_back(name);
  return names;
}

}  // namespace vinfer::detail

namespace vinfer {
bool is_supported_op(const std::string& op) { return detail::find_op(op) != nullptr; }
}  // namespace vinfer
