// Element-wise operators: arithmetic, math functions, comparisons, Where,
// Expand and the activations (their parameters in graph/activation.cpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "graph/activation.hpp"
#include "graph/op_params.hpp"
#include "graph/op_registry.hpp"
#include "graph/ops/ref_loops.hpp"
#include "vinfer/error.hpp"

namespace vinfer::detail {
namespace {

using I = std::int64_t;

// ---- Add, Sub, Mul, Div (float32 or int64, broadcast)
void arithmetic_shape(ShapeContext& c) {
  c.need_inputs(2, 2);
  if (c.in_dtype(0) != c.in_dtype(1)) c.bad("operand types differ");
  c.set(0, broadcast_shapes(c.n, c.in_shape(0), c.in_shape(1)), c.in_dtype(0));
}

template <char kOp, typename T>
T arith(T u, T v) {
  return kOp == '+' ? u + v : kOp == '*' ? u * v : kOp == '-' ? u - v : u / v;
}

template <char kOp>
void arithmetic_reference(RefContext& c) {
  const TensorData &a = c.arg(0), &b = c.arg(1);
  TensorData& y = c.y();
  if (y.dtype == DType::F32) {
    broadcast_apply(a.f, a.shape, b.f, b.shape, y.f, y.shape, arith<kOp, float>);
  } else {
    const Node& n = c.n;
    broadcast_apply(a.i, a.shape, b.i, b.shape, y.i, y.shape, [&n](I u, I v) {
      if (kOp == '/' && v == 0) throw Error(ErrorKind::BadInput, n.label() + ": integer division by zero");
      return arith<kOp, I>(u, v);
    });
  }
}

// ---- Erf, Sqrt, Exp, Reciprocal (float32); Neg, Abs (float32 or int64); Not (booleans as int64 0/1)
template <bool kIntegers>
void unary_shape(ShapeContext& c) {
  c.need_inputs(1, 1);
  if (!kIntegers && c.in_dtype(0) != DType::F32) c.unsupported("runs on float32 input only, not integers or booleans");
  c.set(0, c.in_shape(0), c.in_dtype(0));
}

template <double (*kF)(double), I (*kInt)(I) = nullptr>
void unary_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  TensorData& y = c.y();
  if (y.dtype == DType::F32) {
    for (std::size_t i = 0; i < y.f.size(); ++i) y.f[i] = static_cast<float>(kF(x.f[i]));
  } else if constexpr (kInt != nullptr) {
    for (std::size_t i = 0; i < y.i.size(); ++i) y.i[i] = kInt(x.i[i]);
  }
}

double erf_(double v) { return std::erf(v); }
double sqrt_(double v) { return std::sqrt(v); }
double exp_(double v) { return std::exp(v); }
double reciprocal_(double v) { return 1.0 / v; }
double neg_(double v) { return -v; }
double not_(double v) { return v == 0 ? 1.0 : 0.0; }
double abs_(double v) { return std::fabs(v); }
double log_(double v) { return std::log(v); }
double floor_(double v) { return std::floor(v); }
double ceil_(double v) { return std::ceil(v); }
double round_(double v) { return std::nearbyint(v); }  // halves to even, as ONNX says
double sign_(double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : v; }
double sin_(double v) { return std::sin(v); }
double cos_(double v) { return std::cos(v); }
double tan_(double v) { return std::tan(v); }
double asin_(double v) { return std::asin(v); }
double acos_(double v) { return std::acos(v); }
double atan_(double v) { return std::atan(v); }
double sinh_(double v) { return std::sinh(v); }
double cosh_(double v) { return std::cosh(v); }
double asinh_(double v) { return std::asinh(v); }
double acosh_(double v) { return std::acosh(v); }
double atanh_(double v) { return std::atanh(v); }
double softplus_(double v) { return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)); }
double softsign_(double v) { return v / (1.0 + std::fabs(v)); }
double mish_(double v) { return v * std::tanh(softplus_(v)); }
I sign_i(I v) { return v > 0 ? 1 : v < 0 ? -1 : 0; }
I neg_i(I v) { return -v; }
I abs_i(I v) { return v < 0 ? -v : v; }
I not_i(I v) { return v == 0 ? 1 : 0; }

// ---- Elu, Selu, Celu, ThresholdedRelu, Shrink: float32, their attributes with ONNX's defaults
template <double (*kF)(const Node&, double)>
void unary_attr_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  TensorData& y = c.y();
  for (std::size_t i = 0; i < y.f.size(); ++i) y.f[i] = static_cast<float>(kF(c.n, x.f[i]));
}

double elu_(const Node& n, double v) { return v < 0 ? n.get_float("alpha", 1.f) * std::expm1(v) : v; }
double selu_(const Node& n, double v) {
  const double alpha = n.get_float("alpha", 1.67326319217681884765625f), gamma = n.get_float("gamma", 1.05070102214813232421875f);
  return v <= 0 ? gamma * alpha * std::expm1(v) : gamma * v;
}
double celu_(const Node& n, double v) {
  const double alpha = n.get_float("alpha", 1.f);
  return std::max(0.0, v) + std::min(0.0, alpha * std::expm1(v / alpha));
}
double thresholded_relu_(const Node& n, double v) { return v > n.get_float("alpha", 1.f) ? v : 0.0; }
double shrink_(const Node& n, double v) {
  const double bias = n.get_float("bias", 0.f), lambd = n.get_float("lambd", 0.5f);
  return v < -lambd ? v + bias : v > lambd ? v - bias : 0.0;
}

// ---- IsNaN, IsInf (booleans as int64 0/1)
void is_special_shape(ShapeContext& c) {
  c.need_inputs(1, 1);
  c.set(0, c.in_shape(0), DType::I64);
}

template <bool kNaN>
void is_special_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  const bool neg = c.n.get_int("detect_negative", 1) != 0, pos = c.n.get_int("detect_positive", 1) != 0;
  for (std::size_t i = 0; i < x.f.size(); ++i) {
    const float v = x.f[i];
    c.y().i[i] = kNaN ? std::isnan(v) : std::isinf(v) && ((v < 0 && neg) || (v > 0 && pos));
  }
}

// ---- PRelu: x < 0 ? slope * x : x, the slope broadcast to x
void prelu_shape(ShapeContext& c) {
  c.need_inputs(2, 2);
  const Shape& x = c.in_shape(0);
  if (broadcast_shapes(c.n, x, c.in_shape(1)) != x) c.bad("slope " + shape_str(c.in_shape(1)) + " does not broadcast to " + shape_str(x));
  if (c.in_dtype(1) != DType::F32) c.unsupported("runs on float32 input only, not integers or booleans");
  c.set(0, x);
}

void prelu_reference(RefContext& c) {
  const TensorData &x = c.arg(0), &slope = c.arg(1);
  broadcast_apply(x.f, x.shape, slope.f, slope.shape, c.y().f, x.shape, [](float v, float a) { return v < 0 ? a * v : v; });
}

// ---- Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And, Or, Xor (booleans as int64 0/1), Mod, Pow
template <bool kCompare, bool kSameTypes>
void binary_math_shape(ShapeContext& c) {
  c.need_inputs(2, 2);
  if (kSameTypes && c.in_dtype(0) != c.in_dtype(1)) c.bad("operand types differ");
  c.set(0, broadcast_shapes(c.n, c.in_shape(0), c.in_shape(1)), kCompare ? DType::I64 : c.in_dtype(0));
}

// BitwiseAnd, BitwiseOr, BitwiseXor: integers (held as int64 with their signs: exact for every type vinfer takes)
void bitwise_shape(ShapeContext& c) {
  c.need_inputs(2, 2);
  if (c.in_dtype(0) != DType::I64 || c.in_dtype(1) != DType::I64) c.unsupported("runs on integers only");
  c.set(0, broadcast_shapes(c.n, c.in_shape(0), c.in_shape(1)), DType::I64);
}

template <char kOp>
void bitwise_reference(RefContext& c) {
  const TensorData &a = c.arg(0), &b = c.arg(1);
  broadcast_apply(a.i, a.shape, b.i, b.shape, c.y().i, c.y().shape,
                  [](I u, I v) { return kOp == '&' ? u & v : kOp == '|' ? u | v : u ^ v; });
}

// Operands as doubles (int64 shape values stay exact below 2^53).
std::vector<double> as_double(const TensorData& t) {
  std::vector<double> d(t.dtype == DType::F32 ? t.f.size() : t.i.size());
  for (std::size_t k = 0; k < d.size(); ++k) d[k] = t.dtype == DType::F32 ? t.f[k] : static_cast<double>(t.i[k]);
  return d;
}

template <char kOp>
void binary_math_reference(RefContext& c) {
  const TensorData &a = c.arg(0), &b = c.arg(1);
  TensorData& y = c.y();
  const bool fmod = c.n.get_int("fmod", 0) != 0;
  const Node& n = c.n;
  auto apply = [&](double u, double v) -> double {
    switch (kOp) {
      case '=': return u == v;
      case '<': return u < v;
      case '>': return u > v;
      case 'l': return u <= v;
      case 'g': return u >= v;
      case '&': return u != 0 && v != 0;
      case '|': return u != 0 || v != 0;
      case 'x': return (u != 0) != (v != 0);
      case '^': return std::pow(u, v);
      default: {  // Mod: the sign of the divisor (Python's %), or of the dividend with fmod
        if (v == 0) throw Error(ErrorKind::BadInput, n.label() + ": modulo by zero");
        const double r = std::fmod(u, v);
        return !fmod && r != 0 && ((r < 0) != (v < 0)) ? r + v : r;
      }
    }
  };
  std::vector<double> r(static_cast<std::size_t>(numel(y.shape)));
  broadcast_apply(as_double(a), a.shape, as_double(b), b.shape, r, y.shape, apply);
  for (std::size_t k = 0; k < r.size(); ++k) {
    if (y.dtype == DType::F32) y.f[k] = static_cast<float>(r[k]);
    else y.i[k] = static_cast<I>(r[k]);
  }
}

// ---- Max, Min: one or more operands of one type, broadcast together; a NaN wins
void extremum_shape(ShapeContext& c) {
  c.need_inputs(1, SIZE_MAX);
  Shape s = c.in_shape(0);
  for (std::size_t k = 1; k < c.n.inputs.size(); ++k) {
    if (c.in_dtype(k) != c.in_dtype(0)) c.bad("operand types differ");
    s = broadcast_shapes(c.n, s, c.in_shape(k));
  }
  c.set(0, s, c.in_dtype(0));
}

template <bool kMax, typename T>
T extremum(T u, T v) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(u) || std::isnan(v)) return u + v;
  return kMax ? std::max(u, v) : std::min(u, v);
}

template <char kOp, typename T>
T fold_op(T u, T v) {
  if constexpr (kOp == 'M' || kOp == 'm') return extremum<kOp == 'M', T>(u, v);
  return u + v;
}

// Max ('M'), Min ('m'), Sum ('+'), Mean ('a': the sum over the count)
template <char kOp>
void extremum_reference(RefContext& c) {
  auto fold = [&](auto member) {
    auto acc = c.arg(0).*member;
    Shape shape = c.arg(0).shape;
    for (std::size_t k = 1; k < c.n.inputs.size(); ++k) {
      const TensorData& b = c.arg(k);
      const Shape out = broadcast_shapes(c.n, shape, b.shape);
      std::remove_reference_t<decltype(acc)> r(static_cast<std::size_t>(numel(out)));
      broadcast_apply(acc, shape, b.*member, b.shape, r, out, fold_op<kOp, typename decltype(r)::value_type>);
      acc = std::move(r), shape = out;
    }
    if constexpr (kOp == 'a')
      for (auto& v : acc) v /= static_cast<std::remove_reference_t<decltype(v)>>(c.n.inputs.size());
    // (one operand: as it is; y's shape is the broadcast of all)
    c.y().*member = std::move(acc);
  };
  if (c.y().dtype == DType::F32) fold(&TensorData::f);
  else fold(&TensorData::i);
}

// ---- Where(cond, a, b) and Expand(x, shape): x broadcast, as Where with cond all true
void where_shape(ShapeContext& c) {
  c.need_inputs(3, 3);
  if (c.in_dtype(1) != c.in_dtype(2)) c.bad("operand types differ");
  c.set(0, broadcast_shapes(c.n, c.in_shape(0), broadcast_shapes(c.n, c.in_shape(1), c.in_shape(2))), c.in_dtype(1));
}

void expand_shape(ShapeContext& c) {
  c.need_inputs(2, 2);
  const TensorData& shape = c.need_const(1, "the shape");
  if (shape.dtype != DType::I64) c.bad("the shape must be int64");
  c.set(0, broadcast_shapes(c.n, c.in_shape(0), shape.i), c.in_dtype(0));
}

template <bool kWhere>
void select_reference(RefContext& c) {
  TensorData& y = c.y();
  const TensorData& a = c.arg(kWhere ? 1 : 0);
  const TensorData* b = kWhere ? &c.arg(2) : nullptr;
  const TensorData* cond = kWhere ? &c.arg(0) : nullptr;
  const std::vector<I> sa = bstrides(a.shape, y.shape), sb = b ? bstrides(b->shape, y.shape) : std::vector<I>{},
                       sc = cond ? bstrides(cond->shape, y.shape) : std::vector<I>{};
  std::vector<I> idx(y.shape.size(), 0);
  for (I e = 0; e < numel(y.shape); ++e) {
    I ia = 0, ib = 0, ic = 0;
    for (std::size_t d = 0; d < idx.size(); ++d) {
      ia += idx[d] * sa[d];
      if (b) ib += idx[d] * sb[d], ic += idx[d] * sc[d];
    }
    const bool take_a = !cond || (cond->dtype == DType::F32 ? cond->f[static_cast<std::size_t>(ic)] != 0.f
                                                             : cond->i[static_cast<std::size_t>(ic)] != 0);
    copy_element(take_a ? a : *b, static_cast<std::size_t>(take_a ? ia : ib), y, static_cast<std::size_t>(e));
    next_index(idx, y.shape);
  }
}

// ---- The activations (Relu, Clip, Sigmoid, HardSwish, Gelu, ...): one rule for all
void activation_shape(ShapeContext& c) {
  c.need_inputs(1, static_cast<std::size_t>(activation_max_inputs(c.n.op)));
  if (c.in_dtype(0) != DType::F32) c.unsupported("runs on float32 input only, not integers or booleans");
  activation_of(c.g, c.n);  // its parameters (throws where they are not what backends take)
  c.set(0, c.in_shape(0));
}

void activation_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  TensorData& y = c.y();
  const PostOp act = activation_of(c.g, c.n);
  for (std::size_t i = 0; i < y.f.size(); ++i) y.f[i] = apply_activation(act, x.f[i]);
}

}  // namespace

void add_elementwise_ops(std::vector<OpDef>& ops) {
  ops.insert(ops.end(), {
      {.name = "Add", .shape = arithmetic_shape, .reference = arithmetic_reference<'+'>, .types = OpDef::Any},
      {.name = "Sub", .shape = arithmetic_shape, .reference = arithmetic_reference<'-'>, .types = OpDef::Any},
      {.name = "Mul", .shape = arithmetic_shape, .reference = arithmetic_reference<'*'>, .types = OpDef::Any},
      {.name = "Div", .shape = arithmetic_shape, .reference = arithmetic_reference<'/'>, .types = OpDef::Any},
      {.name = "Erf", .shape = unary_shape<false>, .reference = unary_reference<erf_>},
      {.name = "Sqrt", .shape = unary_shape<false>, .reference = unary_reference<sqrt_>},
      {.name = "Exp", .shape = unary_shape<false>, .reference = unary_reference<exp_>},
      {.name = "Reciprocal", .shape = unary_shape<false>, .reference = unary_reference<reciprocal_>},
      {.name = "Neg", .shape = unary_shape<true>, .reference = unary_reference<neg_, neg_i>, .types = OpDef::Any},
      {.name = "Abs", .shape = unary_shape<true>, .reference = unary_reference<abs_, abs_i>, .types = OpDef::Any},
      {.name = "Not", .shape = unary_shape<true>, .reference = unary_reference<not_, not_i>, .types = OpDef::Any},
      {.name = "Equal", .shape = binary_math_shape<true, true>, .reference = binary_math_reference<'='>, .types = OpDef::Any},
      {.name = "Less", .shape = binary_math_shape<true, true>, .reference = binary_math_reference<'<'>, .types = OpDef::Any},
      {.name = "Greater", .shape = binary_math_shape<true, true>, .reference = binary_math_reference<'>'>, .types = OpDef::Any},
      {.name = "Mod", .shape = binary_math_shape<false, true>, .reference = binary_math_reference<'%'>, .types = OpDef::Any},
      {.name = "Pow", .shape = binary_math_shape<false, false>, .reference = binary_math_reference<'^'>, .types = OpDef::Any},
      {.name = "Max", .shape = extremum_shape, .reference = extremum_reference<'M'>, .types = OpDef::Any},
      {.name = "Min", .shape = extremum_shape, .reference = extremum_reference<'m'>, .types = OpDef::Any},
      {.name = "Sum", .shape = extremum_shape, .reference = extremum_reference<'+'>},
      {.name = "Mean", .shape = extremum_shape, .reference = extremum_reference<'a'>},
      {.name = "LessOrEqual", .shape = binary_math_shape<true, true>, .reference = binary_math_reference<'l'>, .types = OpDef::Any},
      {.name = "GreaterOrEqual", .shape = binary_math_shape<true, true>, .reference = binary_math_reference<'g'>, .types = OpDef::Any},
      {.name = "And", .shape = binary_math_shape<true, true>, .reference = binary_math_reference<'&'>, .types = OpDef::Any},
      {.name = "Or", .shape = binary_math_shape<true, true>, .reference = binary_math_reference<'|'>, .types = OpDef::Any},
      {.name = "Xor", .shape = binary_math_shape<true, true>, .reference = binary_math_reference<'x'>, .types = OpDef::Any},
      {.name = "Log", .shape = unary_shape<false>, .reference = unary_reference<log_>},
      {.name = "IsNaN", .shape = is_special_shape, .reference = is_special_reference<true>},
      {.name = "IsInf", .shape = is_special_shape, .reference = is_special_reference<false>},
      {.name = "PRelu", .shape = prelu_shape, .reference = prelu_reference},
      {.name = "Floor", .shape = unary_shape<false>, .reference = unary_reference<floor_>},
      {.name = "Ceil", .shape = unary_shape<false>, .reference = unary_reference<ceil_>},
      {.name = "Round", .shape = unary_shape<false>, .reference = unary_reference<round_>},
      {.name = "Sign", .shape = unary_shape<true>, .reference = unary_reference<sign_, sign_i>, .types = OpDef::Any},
      {.name = "Sin", .shape = unary_shape<false>, .reference = unary_reference<sin_>},
      {.name = "Cos", .shape = unary_shape<false>, .reference = unary_reference<cos_>},
      {.name = "Tan", .shape = unary_shape<false>, .reference = unary_reference<tan_>},
      {.name = "Asin", .shape = unary_shape<false>, .reference = unary_reference<asin_>},
      {.name = "Acos", .shape = unary_shape<false>, .reference = unary_reference<acos_>},
      {.name = "Atan", .shape = unary_shape<false>, .reference = unary_reference<atan_>},
      {.name = "Sinh", .shape = unary_shape<false>, .reference = unary_reference<sinh_>},
      {.name = "Cosh", .shape = unary_shape<false>, .reference = unary_reference<cosh_>},
      {.name = "Asinh", .shape = unary_shape<false>, .reference = unary_reference<asinh_>},
      {.name = "Acosh", .shape = unary_shape<false>, .reference = unary_reference<acosh_>},
      {.name = "Atanh", .shape = unary_shape<false>, .reference = unary_reference<atanh_>},
      {.name = "Softplus", .shape = unary_shape<false>, .reference = unary_reference<softplus_>},
      {.name = "Softsign", .shape = unary_shape<false>, .reference = unary_reference<softsign_>},
      {.name = "Mish", .shape = unary_shape<false>, .reference = unary_reference<mish_>},
      {.name = "BitwiseAnd", .shape = bitwise_shape, .reference = bitwise_reference<'&'>, .types = OpDef::Any},
      {.name = "BitwiseOr", .shape = bitwise_shape, .reference = bitwise_reference<'|'>, .types = OpDef::Any},
      {.name = "BitwiseXor", .shape = bitwise_shape, .reference = bitwise_reference<'^'>, .types = OpDef::Any},
      {.name = "Elu", .shape = unary_shape<false>, .reference = unary_attr_reference<elu_>},
      {.name = "Selu", .shape = unary_shape<false>, .reference = unary_attr_reference<selu_>},
      {.name = "Celu", .shape = unary_shape<false>, .reference = unary_attr_reference<celu_>},
      {.name = "ThresholdedRelu", .shape = unary_shape<false>, .reference = unary_attr_reference<thresholded_relu_>},
      {.name = "Shrink", .shape = unary_shape<false>, .reference = unary_attr_reference<shrink_>},
      {.name = "Where", .shape = where_shape, .reference = select_reference<true>, .types = OpDef::Any},
      {.name = "Expand", .shape = expand_shape, .reference = select_reference<false>, .types = OpDef::Any},
  });
  for (const std::string& name : activation_ops())
    ops.push_back({.name = name, .shape = activation_shape, .reference = activation_reference});
}

}  // namespace vinfer::detail
