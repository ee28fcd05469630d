// Shape inference and validation for every supported operator.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "graph/activation.hpp"
#include "graph/op_params.hpp"
#include "graph/shape.hpp"
#include "vinfer/error.hpp"

namespace vinfer {
namespace {

using detail::broadcast_shapes;
using detail::normalize_axis;

const std::set<std::string>& ops() {
  static const std::set<std::string> s = [] {
    std::set<std::string> ops = {
        "Conv", "BatchNormalization", "Mul", "Add", "Sub", "Div", "MaxPool",
        "AveragePool", "GlobalAveragePool", "ReduceMean", "Concat", "Flatten", "Reshape", "Gemm", "MatMul",
        "Dropout", "Identity", "Constant", "Shape", "Gather", "Unsqueeze", "Squeeze", "Cast", "Slice",
        "ConstantOfShape", "Softmax", "Pad", "Transpose", "vinfer.ScaleShift", "LayerNormalization",
        "Erf", "Sqrt", "Exp", "Neg", "Abs", "Reciprocal", "Not", "Equal", "Less", "Greater", "Mod", "Pow", "Where", "Expand",
        "Range", "ScatterND", "ReduceSum", "ReduceMax", "ReduceL2", "Einsum", "Split", "GatherND"};
    for (const std::string& a : detail::activation_ops()) ops.insert(a);
    return ops;
  }();
  return s;
}

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

bool is_supported_op(const std::string& op) { return ops().count(op) != 0; }

namespace detail {

// Axes from an attribute (older opsets) or a constant second input (newer ones).
std::vector<std::int64_t> axes_of(const Graph& g, const Node& n, std::size_t input_index) {
  if (n.has("axes")) return n.get_ints("axes");
  if (n.inputs.size() > input_index && n.inputs[input_index] >= 0) {
    const TensorData* t = g.constant(n.inputs[input_index]);
    if (!t || t->dtype != DType::I64) bad(n, "axes must be a constant int64 tensor");
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
  if (!is_supported_op(n.op)) throw Error(ErrorKind::Unsupported, "unsupported operator " + n.label());
  auto in_shape = [&](std::size_t i) -> const Shape& {
    if (i >= n.inputs.size() || n.inputs[i] < 0) bad(n, "missing input " + std::to_string(i));
    return g.value(n.inputs[i]).shape;
  };
  auto in_dtype = [&](std::size_t i) { return g.value(n.inputs.at(i)).dtype; };
  auto need_inputs = [&](std::size_t lo, std::size_t hi) {
    if (n.inputs.size() < lo || n.inputs.size() > hi)
      bad(n, "expects " + std::to_string(lo) + (lo == hi ? "" : ".." + std::to_string(hi)) + " inputs, has " + std::to_string(n.inputs.size()));
    for (std::size_t i = 0; i < lo; ++i)
      if (n.inputs[i] < 0) bad(n, "input " + std::to_string(i) + " is required");
  };
  auto need_const = [&](std::size_t i, const char* what) -> const TensorData& {
    const TensorData* t = i < n.inputs.size() ? g.constant(n.inputs[i]) : nullptr;
    if (!t) throw Error(ErrorKind::Unsupported, n.label() + ": " + what + " must be a constant");
    return *t;
  };
  auto set = [&](std::size_t o, Shape s, DType t = DType::F32) {
    for (std::int64_t d : s)
      if (d < 0) bad(n, "negative output dimension " + shape_str(s));
    if (!dims_fit(s, limits.max_tensor_elements))
      throw Error(ErrorKind::LimitExceeded, n.label() + ": output " + shape_str(s) + " exceeds the tensor element limit");
    if (o < n.outputs.size() && n.outputs[o] >= 0) {
      Value& v = g.value(n.outputs[o]);
      v.shape = std::move(s);
      v.dtype = t;
    }
  };
  const std::string& op = n.op;
  if (op == "Conv") {
    need_inputs(2, 3);
    const Shape& x = in_shape(0);
    const Shape& w = in_shape(1);
    WindowParams p = conv_params(n, x, w);
    if (n.inputs.size() == 3 && n.inputs[2] >= 0 && in_shape(2) != Shape{w[0]}) bad(n, "bias must be [" + std::to_string(w[0]) + "]");
    Shape out{x[0], w[0]};
    out.insert(out.end(), p.out.begin(), p.out.end());
    set(0, out);
  } else if (op == "BatchNormalization") {
    need_inputs(5, 5);
    const Shape& x = in_shape(0);
    if (x.size() < 2) bad(n, "input must have a channel dimension");
    for (std::size_t i = 1; i < 5; ++i) {
      const TensorData& t = need_const(i, "scale, bias, mean and variance");
      if (t.shape != Shape{x[1]}) bad(n, "parameter " + std::to_string(i) + " must be [" + std::to_string(x[1]) + "], got " + shape_str(t.shape));
    }
    if (n.outputs.size() > 1) {
      for (std::size_t o = 1; o < n.outputs.size(); ++o)
        if (n.outputs[o] >= 0 && !g.consumers()[static_cast<std::size_t>(n.outputs[o])].empty())
          throw Error(ErrorKind::Unsupported, n.label() + ": training-mode outputs are not supported");
    }
    set(0, x);
  } else if (op == "vinfer.ScaleShift") {
    need_inputs(3, 3);
    set(0, in_shape(0));
  } else if (op == "Identity" || op == "Dropout") {
    need_inputs(1, op == "Dropout" ? 3 : 1);
    set(0, in_shape(0), in_dtype(0));
    if (op == "Dropout" && n.outputs.size() > 1 && n.outputs[1] >= 0) set(1, in_shape(0));
  } else if (detail::is_activation(op)) {
    need_inputs(1, detail::activation_max_inputs(op));
    if (in_dtype(0) != DType::F32) bad(n, "the input must be float32");
    detail::activation_of(g, n);  // its parameters (throws where they are not what backends take)
    set(0, in_shape(0));
  } else if (op == "Add" || op == "Mul" || op == "Sub" || op == "Div") {
    need_inputs(2, 2);
    if (in_dtype(0) != in_dtype(1)) bad(n, "operand types differ");
    set(0, broadcast_shapes(n, in_shape(0), in_shape(1)), in_dtype(0));
  } else if (op == "MaxPool" || op == "AveragePool") {
    need_inputs(1, 1);
    if (op == "MaxPool" && n.outputs.size() > 1 && n.outputs[1] >= 0 && !g.consumers()[static_cast<std::size_t>(n.outputs[1])].empty())
      throw Error(ErrorKind::Unsupported, n.label() + ": the Indices output is not supported");
    if (n.get_int("storage_order", 0) != 0) throw Error(ErrorKind::Unsupported, n.label() + ": storage_order=1 is not supported");
    const Shape& x = in_shape(0);
    WindowParams p = pool_params(n, x);
    Shape out{x[0], x[1]};
    out.insert(out.end(), p.out.begin(), p.out.end());
    set(0, out);
  } else if (op == "GlobalAveragePool") {
    need_inputs(1, 1);
    Shape s = in_shape(0);
    if (s.size() < 3) bad(n, "input must be N x C x spatial");
    std::fill(s.begin() + 2, s.end(), 1);
    set(0, s);
  } else if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceL2") {
    need_inputs(1, 2);
    const Shape& x = in_shape(0);
    std::vector<std::int64_t> axes = axes_of(g, n, 1);
    std::vector<bool> red(x.size(), axes.empty() && n.get_int("noop_with_empty_axes", 0) == 0);
    for (std::int64_t a : axes) red[static_cast<std::size_t>(normalize_axis(n, a, x.size()))] = true;
    const bool keep = n.get_int("keepdims", 1) != 0;
    Shape out;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!red[i]) out.push_back(x[i]);
      else if (keep) out.push_back(1);
    set(0, out);
  } else if (op == "Concat") {
    if (n.inputs.empty()) bad(n, "needs at least one input");
    const Shape& first = in_shape(0);
    const int axis = normalize_axis(n, n.get_int("axis", 1), first.size());
    Shape out = first;
    out[static_cast<std::size_t>(axis)] = 0;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      const Shape& s = in_shape(i);
      if (s.size() != first.size() || in_dtype(i) != in_dtype(0)) bad(n, "inputs differ in rank or type");
      for (std::size_t d = 0; d < s.size(); ++d)
        if (static_cast<int>(d) != axis && s[d] != first[d]) bad(n, "input " + std::to_string(i) + " shape " + shape_str(s) + " does not match " + shape_str(first));
      out[static_cast<std::size_t>(axis)] += s[static_cast<std::size_t>(axis)];
    }
    set(0, out, in_dtype(0));
  } else if (op == "Flatten") {
    need_inputs(1, 1);
    const Shape& x = in_shape(0);
    std::int64_t axis = n.get_int("axis", 1);
    if (axis < 0) axis += static_cast<std::int64_t>(x.size());
    if (axis < 0 || axis > static_cast<std::int64_t>(x.size())) bad(n, "axis out of range");
    std::int64_t a = 1, b = 1;
    for (std::size_t i = 0; i < x.size(); ++i) (static_cast<std::int64_t>(i) < axis ? a : b) *= x[i];
    set(0, {a, b}, in_dtype(0));
  } else if (op == "Reshape") {
    need_inputs(2, 2);
    set(0, reshape_target(n, in_shape(0), need_const(1, "the target shape")), in_dtype(0));
  } else if (op == "Gemm") {
    need_inputs(2, 3);
    const Shape& a = in_shape(0);
    const Shape& b = in_shape(1);
    if (a.size() != 2 || b.size() != 2) bad(n, "inputs must be 2-D, got " + shape_str(a) + " and " + shape_str(b));
    const bool ta = n.get_int("transA", 0) != 0, tb = n.get_int("transB", 0) != 0;
    const std::int64_t m = ta ? a[1] : a[0], k = ta ? a[0] : a[1];
    const std::int64_t kb = tb ? b[1] : b[0], nn = tb ? b[0] : b[1];
    if (k != kb) bad(n, "inner dimensions differ: " + shape_str(a) + " x " + shape_str(b));
    if (n.inputs.size() == 3 && n.inputs[2] >= 0) broadcast_shapes(n, {m, nn}, in_shape(2));
    set(0, {m, nn});
  } else if (op == "MatMul") {
    need_inputs(2, 3);  // a third: the bias fuse_matmul_bias gives it (vinfer's, not ONNX's)
    const Shape& a = in_shape(0);
    const Shape& b = in_shape(1);
    if (n.inputs.size() == 3 && n.inputs[2] >= 0 && (in_shape(2) != Shape{b.back()} || !g.constant(n.inputs[2])))
      bad(n, "a bias must be a constant of " + std::to_string(b.back()) + " values");
    if (a.size() < 2 || b.size() < 2) throw Error(ErrorKind::Unsupported, n.label() + ": a 1-D operand is not supported");
    if (a.back() != b[b.size() - 2]) bad(n, "inner dimensions differ: " + shape_str(a) + " x " + shape_str(b));
    // [..., M, K] x [..., K, N], the batch dimensions broadcast
    Shape out = broadcast_shapes(n, Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
    out.push_back(a[a.size() - 2]);
    out.push_back(b.back());
    set(0, out);
  } else if (op == "Erf" || op == "Sqrt" || op == "Exp" || op == "Neg" || op == "Abs" || op == "Reciprocal" || op == "Not") {
    need_inputs(1, 1);
    const bool int_ok = op == "Neg" || op == "Abs" || op == "Not";
    if (!int_ok && in_dtype(0) != DType::F32) bad(n, "input must be float32");
    set(0, in_shape(0), in_dtype(0));
  } else if (op == "Equal" || op == "Less" || op == "Greater" || op == "Mod" || op == "Pow") {
    need_inputs(2, 2);
    const bool compare = op != "Mod" && op != "Pow";
    if (op != "Pow" && in_dtype(0) != in_dtype(1)) bad(n, "operand types differ");
    set(0, broadcast_shapes(n, in_shape(0), in_shape(1)), compare ? DType::I64 : in_dtype(0));  // booleans as 0/1
  } else if (op == "Where") {
    need_inputs(3, 3);
    if (in_dtype(1) != in_dtype(2)) bad(n, "operand types differ");
    set(0, broadcast_shapes(n, in_shape(0), broadcast_shapes(n, in_shape(1), in_shape(2))), in_dtype(1));
  } else if (op == "Expand") {
    need_inputs(2, 2);
    const TensorData& shape = need_const(1, "the shape");
    if (shape.dtype != DType::I64) bad(n, "the shape must be int64");
    set(0, broadcast_shapes(n, in_shape(0), shape.i), in_dtype(0));
  } else if (op == "Einsum") {
    const detail::EinsumTerms t = detail::einsum_terms(n);
    need_inputs(t.inputs.size(), t.inputs.size());
    std::map<char, std::int64_t> dim;
    for (std::size_t i = 0; i < t.inputs.size(); ++i) {
      const Shape& s = in_shape(i);
      if (s.size() != t.inputs[i].size() || in_dtype(i) != DType::F32) bad(n, "input " + std::to_string(i) + " does not match the equation");
      for (std::size_t d = 0; d < s.size(); ++d) {
        auto [it, fresh] = dim.emplace(t.inputs[i][d], s[d]);
        if (!fresh && it->second != s[d]) bad(n, std::string("dimension '") + t.inputs[i][d] + "' differs between inputs");
      }
    }
    Shape out;
    for (char c : t.output) {
      if (!dim.count(c)) bad(n, std::string("output dimension '") + c + "' is in no input");
      out.push_back(dim[c]);
    }
    set(0, out);
  } else if (op == "Split") {
    need_inputs(1, 2);
    const detail::SplitParams p = detail::split_params(g, n, in_shape(0));
    for (std::size_t o = 0; o < n.outputs.size(); ++o) {
      Shape s = in_shape(0);
      s[static_cast<std::size_t>(p.axis)] = p.lengths[o];
      set(o, s, in_dtype(0));
    }
  } else if (op == "GatherND") {
    need_inputs(2, 2);
    const Shape &x = in_shape(0), &idx = in_shape(1);
    if (n.get_int("batch_dims", 0) != 0) throw Error(ErrorKind::Unsupported, n.label() + ": batch_dims other than 0");
    if (in_dtype(1) != DType::I64 || idx.empty() || idx.back() < 1 || idx.back() > static_cast<std::int64_t>(x.size()))
      bad(n, "indices must be int64 with a last dimension of 1 to " + std::to_string(x.size()));
    Shape out(idx.begin(), idx.end() - 1);
    out.insert(out.end(), x.begin() + idx.back(), x.end());
    set(0, out, in_dtype(0));
  } else if (op == "Range") {
    need_inputs(3, 3);
    const TensorData &s0 = need_const(0, "start"), &s1 = need_const(1, "limit"), &s2 = need_const(2, "delta");
    if (s0.numel() != 1 || s1.numel() != 1 || s2.numel() != 1 || s0.dtype != s1.dtype || s0.dtype != s2.dtype)
      bad(n, "start, limit and delta must be scalars of one type");
    auto at = [](const TensorData& t) { return t.dtype == DType::F32 ? static_cast<double>(t.f[0]) : static_cast<double>(t.i[0]); };
    const double count = std::ceil((at(s1) - at(s0)) / at(s2));
    if (!(count < 1e9)) bad(n, "delta 0, or more than 1e9 values");
    set(0, {std::max<std::int64_t>(0, static_cast<std::int64_t>(count))}, s0.dtype);
  } else if (op == "ScatterND") {
    need_inputs(3, 3);
    const Shape &x = in_shape(0), &idx = in_shape(1), &upd = in_shape(2);
    if (in_dtype(1) != DType::I64 || idx.empty() || idx.back() < 1 || idx.back() > static_cast<std::int64_t>(x.size()))
      bad(n, "indices must be int64 with a last dimension of 1 to " + std::to_string(x.size()));
    Shape want(idx.begin(), idx.end() - 1);
    want.insert(want.end(), x.begin() + idx.back(), x.end());
    if (upd != want || in_dtype(2) != in_dtype(0)) bad(n, "updates must be " + shape_str(want) + " of the data's type");
    if (n.get_string("reduction", "none") != "none") throw Error(ErrorKind::Unsupported, n.label() + ": reduction is not supported");
    set(0, x, in_dtype(0));
  } else if (op == "LayerNormalization") {
    need_inputs(2, 3);
    const Shape& x = in_shape(0);
    const detail::LayerNormExtent e = detail::layer_norm_extent(n, x);
    for (std::size_t i = 1; i < n.inputs.size(); ++i)
      if (n.inputs[i] >= 0 && (numel(in_shape(i)) != e.len || in_dtype(i) != DType::F32))
        bad(n, "scale and bias must hold one float per normalized value (" + std::to_string(e.len) + ")");
    for (std::size_t o = 1; o < n.outputs.size(); ++o)
      if (n.outputs[o] >= 0 && (g.is_output(n.outputs[o]) || !g.consumers()[static_cast<std::size_t>(n.outputs[o])].empty()))
        throw Error(ErrorKind::Unsupported, n.label() + ": the Mean and InvStdDev outputs are not supported");
    set(0, x);
  } else if (op == "Softmax") {
    need_inputs(1, 1);
    normalize_axis(n, n.get_int("axis", -1), in_shape(0).size());
    set(0, in_shape(0));
  } else if (op == "Constant") {
    need_inputs(0, 0);
    auto it = n.attrs.find("value");
    if (it == n.attrs.end() || !std::holds_alternative<TensorData>(it->second))
      throw Error(ErrorKind::Unsupported, n.label() + ": only the 'value' tensor attribute is supported");
    const TensorData& t = std::get<TensorData>(it->second);
    set(0, t.shape, t.dtype);
  } else if (op == "Shape") {
    need_inputs(1, 1);
    const auto r = static_cast<std::int64_t>(in_shape(0).size());
    std::int64_t start = n.get_int("start", 0), end = n.get_int("end", r);
    start = std::clamp(start < 0 ? start + r : start, std::int64_t{0}, r);
    end = std::clamp(end < 0 ? end + r : end, std::int64_t{0}, r);
    set(0, {std::max<std::int64_t>(0, end - start)}, DType::I64);
  } else if (op == "Gather") {
    need_inputs(2, 2);
    const Shape& x = in_shape(0);
    const Shape& idx = in_shape(1);
    if (in_dtype(1) != DType::I64) bad(n, "indices must be int64");
    const int axis = normalize_axis(n, n.get_int("axis", 0), x.size());
    Shape out(x.begin(), x.begin() + axis);
    out.insert(out.end(), idx.begin(), idx.end());
    out.insert(out.end(), x.begin() + axis + 1, x.end());
    set(0, out, in_dtype(0));
  } else if (op == "Unsqueeze" || op == "Squeeze") {
    need_inputs(1, 2);
    const Shape& x = in_shape(0);
    std::vector<std::int64_t> axes = axes_of(g, n, 1);
    Shape out;
    if (op == "Unsqueeze") {
      const std::size_t r = x.size() + axes.size();
      std::vector<bool> ins(r, false);
      for (std::int64_t a : axes) {
        const int ax = normalize_axis(n, a, r);
        if (ins[static_cast<std::size_t>(ax)]) bad(n, "repeated axis");
        ins[static_cast<std::size_t>(ax)] = true;
      }
      std::size_t k = 0;
      for (std::size_t i = 0; i < r; ++i) out.push_back(ins[i] ? 1 : x[k++]);
    } else {
      std::vector<bool> drop(x.size(), false);
      for (std::int64_t a : axes) drop[static_cast<std::size_t>(normalize_axis(n, a, x.size()))] = true;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (axes.empty() && x[i] == 1) continue;
        if (drop[i]) {
          if (x[i] != 1) bad(n, "cannot squeeze a dimension of size " + std::to_string(x[i]));
          continue;
        }
        out.push_back(x[i]);
      }
    }
    set(0, out, in_dtype(0));
  } else if (op == "Cast") {
    need_inputs(1, 1);
    const std::int64_t to = n.get_int("to", 0);
    if (to != 1 && to != 7 && to != 9)
      throw Error(ErrorKind::Unsupported, n.label() + ": cast to ONNX type " + std::to_string(to) + " is not supported");  // 9: bool, as int64 0/1
    set(0, in_shape(0), to == 1 ? DType::F32 : DType::I64);
  } else if (op == "Slice") {
    need_inputs(3, 5);
    const Shape& x = in_shape(0);
    std::vector<std::int64_t> starts = need_const(1, "starts").i, ends = need_const(2, "ends").i, axes, steps;
    if (n.inputs.size() > 3 && n.inputs[3] >= 0) axes = need_const(3, "axes").i;
    if (n.inputs.size() > 4 && n.inputs[4] >= 0) steps = need_const(4, "steps").i;
    const Shape out = detail::slice_window(n, x, starts, ends, axes, steps).size;
    set(0, out, in_dtype(0));
  } else if (op == "Transpose") {
    need_inputs(1, 1);
    const Shape& x = in_shape(0);
    const std::vector<std::int64_t> perm = transpose_perm(n, x.size());
    Shape out(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) out[i] = x[static_cast<std::size_t>(perm[i])];
    set(0, out, in_dtype(0));
  } else if (op == "Pad") {
    need_inputs(1, 3);
    const Shape& x = in_shape(0);
    const std::vector<std::int64_t> pads = pad_amounts(g, n);
    if (pads.size() != 2 * x.size()) bad(n, "pads must have " + std::to_string(2 * x.size()) + " values");
    if (n.get_string("mode", "constant") != "constant")
      throw Error(ErrorKind::Unsupported, n.label() + ": mode '" + n.get_string("mode", "") + "' is not supported");
    if (n.inputs.size() > 2 && n.inputs[2] >= 0) need_const(2, "constant_value");
    Shape out = x;
    for (std::size_t i = 0; i < x.size(); ++i) out[i] += pads[i] + pads[i + x.size()];
    set(0, out, in_dtype(0));
  } else if (op == "ConstantOfShape") {
    need_inputs(1, 1);
    const TensorData& s = need_const(0, "the shape");
    DType t = DType::F32;
    auto it = n.attrs.find("value");
    if (it != n.attrs.end()) t = std::get<TensorData>(it->second).dtype;
    set(0, s.i, t);
  } else {
    throw Error(ErrorKind::Internal, n.label() + ": no shape rule");
  }
  // Float-only operators (their data input; parameters like pads or axes are int64).
  static const std::set<std::string> int_ok = {"Identity", "Concat", "Transpose", "Flatten", "Reshape", "Shape", "Gather", "Unsqueeze", "Squeeze",
                                               "Cast", "Slice", "ConstantOfShape", "Constant", "Add", "Mul", "Sub", "Div", "Pad",
                                               "Neg", "Abs", "Not", "Equal", "Less", "Greater", "Mod", "Pow", "Where", "Expand",
                                               "Range", "ScatterND", "Split", "GatherND"};
  if (!int_ok.count(op) && !n.inputs.empty() && n.inputs[0] >= 0 && in_dtype(0) != DType::F32) bad(n, "input must be float32");
  // Operators whose every input is float data (weights, bias, statistics):
  // an int32 weight tensor reached the kernels as no floats at all (a fuzzer finding).
  static const std::set<std::string> all_float = {"Conv", "Gemm", "MatMul", "BatchNormalization"};
  if (all_float.count(op))
    for (std::size_t i = 1; i < n.inputs.size(); ++i)
      if (n.inputs[i] >= 0 && in_dtype(i) != DType::F32) bad(n, "input " + std::to_string(i) + " must be float32");
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
