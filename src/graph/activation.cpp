#include "graph/activation.hpp"

#include <cmath>

#include "vinfer/error.hpp"

namespace vinfer::detail {

constexpr bool same(ActivationKind a, PostOp::Kind b) { return static_cast<int>(a) == static_cast<int>(b); }
static_assert(same(kRelu, PostOp::Relu) && same(kClip, PostOp::Clip) && same(kSigmoid, PostOp::Sigmoid) &&
              same(kSwish, PostOp::Swish) && same(kSum, PostOp::Sum) && same(kHardSigmoid, PostOp::HardSigmoid) &&
              same(kHardSwish, PostOp::HardSwish) && same(kLeakyRelu, PostOp::LeakyRelu) && same(kTanh, PostOp::Tanh) &&
              same(kGelu, PostOp::Gelu));

namespace {

struct Entry {
  const char* op;
  PostOp::Kind kind;
  float alpha, beta;  // ONNX's defaults
};

// (Swish has no ONNX operator before opset 24: the fusion pass makes it from x * Sigmoid(x).)
const Entry kTable[] = {
    {"Relu", PostOp::Relu, 0.f, 0.f},
    {"Clip", PostOp::Clip, -INFINITY, INFINITY},
    {"Sigmoid", PostOp::Sigmoid, 0.f, 0.f},
    {"HardSigmoid", PostOp::HardSigmoid, 0.2f, 0.5f},
    {"HardSwish", PostOp::HardSwish, 0.f, 0.f},
    {"LeakyRelu", PostOp::LeakyRelu, 0.01f, 0.f},
    {"Tanh", PostOp::Tanh, 0.f, 0.f},
    {"Gelu", PostOp::Gelu, 0.f, 0.f},
};

const Entry* find(const std::string& op) {
  for (const Entry& e : kTable)
    if (op == e.op) return &e;
  return nullptr;
}

}  // namespace

const std::vector<std::string>& activation_ops() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> v;
    for (const Entry& e : kTable) v.emplace_back(e.op);
    return v;
  }();
  return ops;
}

bool is_activation(const std::string& op) { return find(op) != nullptr; }

int activation_max_inputs(const std::string& op) { return op == "Clip" ? 3 : 1; }

PostOp activation_of(const Graph& g, const Node& n) {
  const Entry* e = find(n.op);
  if (!e) throw Error(ErrorKind::Internal, n.label() + ": not an activation");
  PostOp p;
  p.kind = e->kind;
  p.alpha = e->alpha, p.beta = e->beta;
  switch (e->kind) {
    case PostOp::Clip:  // opset < 11: attributes; from 11: optional constant inputs
      p.alpha = n.get_float("min", p.alpha);
      p.beta = n.get_float("max", p.beta);
      for (std::size_t i = 1; i < 3 && i < n.inputs.size(); ++i) {
        if (n.inputs[i] < 0) continue;
        const TensorData* c = g.constant(n.inputs[i]);
        if (!c || c->numel() != 1 || c->dtype != DType::F32)
          throw Error(ErrorKind::Unsupported, n.label() + ": Clip bounds must be constant float scalars");
        (i == 1 ? p.alpha : p.beta) = c->f.at(0);
      }
      break;
    case PostOp::HardSigmoid:
    case PostOp::LeakyRelu:
      p.alpha = n.get_float("alpha", p.alpha);
      p.beta = n.get_float("beta", p.beta);
      break;
    case PostOp::Gelu:
      if (n.get_string("approximate", "none") != "none")
        throw Error(ErrorKind::Unsupported, n.label() + ": Gelu's approximate='" + n.get_string("approximate", "") + "'");
      break;
    default: break;
  }
  return p;
}

}  // namespace vinfer::detail
