#include "graph/passes.hpp"

#include <algorithm>
#include <cmath>

#include "graph/activation.hpp"
#include "graph/reference.hpp"
#include "graph/shape.hpp"
#include "graph/op_params.hpp"
#include "vinfer/error.hpp"

namespace vinfer::detail {
namespace {

// Index of the node producing each value (-1: input, constant or none).
std::vector<int> producers(const Graph& g) {
  std::vector<int> p(g.values.size(), -1);
  for (std::size_t n = 0; n < g.nodes.size(); ++n)
    for (int v : g.nodes[n].outputs)
      if (v >= 0) p[static_cast<std::size_t>(v)] = static_cast<int>(n);
  return p;
}

void erase_nodes(Graph& g, const std::vector<bool>& dead) {
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (!dead[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

// The only node reading `v`, or -1 if none, several, or `v` is a graph output.
int sole_consumer(const Graph& g, const std::vector<std::vector<int>>& cons, int v) {
  if (g.is_output(v)) return -1;
  const auto& c = cons[static_cast<std::size_t>(v)];
  return c.size() == 1 ? c[0] : -1;
}

bool accepts_post_ops(const std::string& op) {
  return op == "Conv" || op == "Gemm" || op == "MatMul" || op == "vinfer.ScaleShift";
}

}  // namespace

void replace_uses(Graph& g, int from, int to) {
  for (Node& n : g.nodes) {
    for (int& v : n.inputs)
      if (v == from) v = to;
    for (PostOp& p : n.post_ops)
      if (p.sum_input == from) p.sum_input = to;
  }
  for (int& v : g.outputs)
    if (v == from) v = to;
}

int fold_constants(Graph& g, const GraphLimits& limits) {
  if (static_cast<std::int64_t>(g.nodes.size()) > limits.max_nodes)
    throw Error(ErrorKind::LimitExceeded, "graph has " + std::to_string(g.nodes.size()) + " nodes, more than the limit " +
                                              std::to_string(limits.max_nodes));
  std::int64_t const_bytes = 0;
  for (const Value& v : g.values)
    if (v.constant) const_bytes += v.constant->numel() * (v.dtype == DType::F32 ? 4 : 8);
  if (const_bytes > limits.max_total_bytes)
    throw Error(ErrorKind::LimitExceeded, "model constants take " + std::to_string(const_bytes) + " bytes, more than the limit " +
                                              std::to_string(limits.max_total_bytes));
  std::vector<bool> dead(g.nodes.size(), false);
  int folded = 0;
  for (std::size_t k = 0; k < g.nodes.size(); ++k) {
    Node& n = g.nodes[k];
    infer_node(g, n, limits);
    bool all_const = n.op != "Dropout";  // keep the graph's own structure for Dropout (removed later)
    for (int v : n.inputs)
      if (v >= 0 && !g.value(v).is_constant()) all_const = false;
    if (n.op == "Shape") all_const = true;
    if (!all_const) continue;
    std::vector<const TensorData*> in;
    for (int v : n.inputs) in.push_back(v >= 0 ? g.constant(v) : nullptr);
    std::vector<TensorData> out = eval_reference(g, n, in);
    for (std::size_t o = 0; o < n.outputs.size() && o < out.size(); ++o)
      if (n.outputs[o] >= 0) g.value(n.outputs[o]).constant = std::make_shared<const TensorData>(std::move(out[o]));
    dead[k] = true;
    ++folded;
  }
  erase_nodes(g, dead);
  return folded;
}

int remove_identities(Graph& g) {
  std::vector<bool> dead(g.nodes.size(), false);
  int removed = 0;
  for (std::size_t k = 0; k < g.nodes.size(); ++k) {
    Node& n = g.nodes[k];
    bool noop = n.op == "Identity" || n.op == "Dropout";
    if (n.op == "Pad") {
      const std::vector<std::int64_t> pads = pad_amounts(g, n);
      noop = std::all_of(pads.begin(), pads.end(), [](std::int64_t v) { return v == 0; });
    }
    if (!noop) continue;
    const int in = n.inputs[0], out = n.outputs[0];
    // A graph input that is also returned as-is keeps its node (the output needs a buffer).
    if (g.is_output(out) && std::find(g.inputs.begin(), g.inputs.end(), in) != g.inputs.end()) continue;
    if (n.outputs.size() > 1 && n.outputs[1] >= 0 && !g.consumers()[static_cast<std::size_t>(n.outputs[1])].empty())
      throw Error(ErrorKind::Unsupported, n.label() + ": the Dropout mask output is not supported");
    replace_uses(g, out, in);
    dead[k] = true;
    ++removed;
  }
  erase_nodes(g, dead);
  return removed;
}

int fold_pad(Graph& g) {
  const auto prod = producers(g);
  const auto cons = g.consumers();
  std::vector<bool> dead(g.nodes.size(), false);
  int folded = 0;
  for (std::size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& pad = g.nodes[k];
    if (pad.op != "Pad" || pad_value(g, pad) != 0.f) continue;
    const std::vector<std::int64_t> p = pad_amounts(g, pad);
    const int y = pad.outputs[0];
    if (p.size() != 8 || p[0] || p[1] || p[4] || p[5] || *std::min_element(p.begin(), p.end()) < 0) continue;
    const int c = sole_consumer(g, cons, y);
    if (c < 0) continue;
    Node& next = g.nodes[static_cast<std::size_t>(c)];
    // Zero padding means the same inside a Conv, and inside an AveragePool that counts padding.
    const std::vector<std::int64_t> own = next.get_ints("pads");
    const bool own_zero = std::all_of(own.begin(), own.end(), [](std::int64_t v) { return v == 0; });
    // A zero border cannot win a max over values that are all >= 0 (a Relu's output).
    const int src = prod[static_cast<std::size_t>(pad.inputs[0])];
    const bool nonneg = src >= 0 && g.nodes[static_cast<std::size_t>(src)].op == "Relu";
    const bool ok = (next.op == "Conv" && next.inputs[0] == y) ||
                    (next.op == "AveragePool" && (next.get_int("count_include_pad", 0) != 0 || own_zero)) ||
                    (next.op == "MaxPool" && nonneg && next.get_int("ceil_mode", 0) == 0);
    if (!ok || next.get_string("auto_pad", "NOTSET") != "NOTSET") continue;
    std::vector<std::int64_t> pads = next.get_ints("pads", {0, 0, 0, 0});
    pads[0] += p[2], pads[1] += p[3], pads[2] += p[6], pads[3] += p[7];
    next.attrs["pads"] = pads;
    if (next.op == "AveragePool") next.attrs["count_include_pad"] = std::int64_t{1};
    replace_uses(g, y, pad.inputs[0]);
    dead[k] = true;
    ++folded;
  }
  erase_nodes(g, dead);
  return folded;
}

namespace {
// What a freed constant leaves: its type and shape, no data.
std::shared_ptr<const TensorData> constant_shell(const TensorData& t) {
  auto shell = std::make_shared<TensorData>();
  shell->dtype = t.dtype;
  shell->shape = t.shape;
  return shell;
}
}  // namespace

int fold_batchnorm(Graph& g) {
  const auto prod = producers(g);
  const auto cons = g.consumers();
  std::vector<bool> dead(g.nodes.size(), false);
  int folded = 0;
  for (std::size_t k = 0; k < g.nodes.size(); ++k) {
    Node& bn = g.nodes[k];
    if (bn.op != "BatchNormalization") continue;
    const int x = bn.inputs[0];
    const int p = prod[static_cast<std::size_t>(x)];
    if (p < 0 || dead[static_cast<std::size_t>(p)]) continue;
    Node& conv = g.nodes[static_cast<std::size_t>(p)];
    if (conv.op != "Conv" || !conv.post_ops.empty() || sole_consumer(g, cons, x) != static_cast<int>(k)) continue;
    const TensorData* w = g.constant(conv.inputs[1]);
    const TensorData* b = conv.inputs.size() > 2 ? g.constant(conv.inputs[2]) : nullptr;
    if (!w || (conv.inputs.size() > 2 && conv.inputs[2] >= 0 && !b)) continue;
    const TensorData &gamma = *g.constant(bn.inputs[1]), &beta = *g.constant(bn.inputs[2]);
    const TensorData &mean = *g.constant(bn.inputs[3]), &var = *g.constant(bn.inputs[4]);
    const float eps = bn.get_float("epsilon", 1e-5f);
    const std::int64_t M = w->shape[0], per = w->numel() / M;
    TensorData nw = *w;
    std::vector<float> nb(static_cast<std::size_t>(M));
    for (std::int64_t m = 0; m < M; ++m) {
      const auto i = static_cast<std::size_t>(m);
      const float s = gamma.f[i] / std::sqrt(var.f[i] + eps);
      for (std::int64_t e = 0; e < per; ++e) nw.f[static_cast<std::size_t>(m * per + e)] *= s;
      nb[i] = ((b ? b->f[i] : 0.f) - mean.f[i]) * s + beta.f[i];
    }
    const int old_w = conv.inputs[1], old_b = conv.inputs.size() > 2 ? conv.inputs[2] : -1;
    conv.inputs.resize(3);
    conv.inputs[1] = g.add_constant(conv.name + ".weight_bn", std::move(nw));
    conv.inputs[2] = g.add_constant(conv.name + ".bias_bn", TensorData::f32({M}, std::move(nb)));
    // The unfolded weights, where nothing else reads them, go now: the
    // network is not held twice while its layers are folded.
    for (const int v : {old_w, old_b})
      if (v >= 0 && cons[static_cast<std::size_t>(v)].size() == 1) g.value(v).constant = constant_shell(*g.value(v).constant);
    // The Conv now produces the BatchNorm's result.
    const int y = bn.outputs[0];
    replace_uses(g, y, x);
    g.value(x).name = g.value(y).name;
    dead[k] = true;
    ++folded;
  }
  erase_nodes(g, dead);
  return folded;
}

int batchnorm_to_scale_shift(Graph& g) {
  int n_conv = 0;
  for (Node& n : g.nodes) {
    if (n.op != "BatchNormalization") continue;
    const TensorData &gamma = *g.constant(n.inputs[1]), &beta = *g.constant(n.inputs[2]);
    const TensorData &mean = *g.constant(n.inputs[3]), &var = *g.constant(n.inputs[4]);
    const float eps = n.get_float("epsilon", 1e-5f);
    const std::int64_t C = gamma.numel();
    std::vector<float> scale(static_cast<std::size_t>(C)), shift(static_cast<std::size_t>(C));
    for (std::size_t c = 0; c < scale.size(); ++c) {
      scale[c] = gamma.f[c] / std::sqrt(var.f[c] + eps);
      shift[c] = beta.f[c] - mean.f[c] * scale[c];
    }
    const int s = g.add_constant(n.name + ".scale", TensorData::f32({C}, std::move(scale)));
    const int t = g.add_constant(n.name + ".shift", TensorData::f32({C}, std::move(shift)));
    n.op = "vinfer.ScaleShift";
    n.inputs = {n.inputs[0], s, t};
    n.outputs.resize(1);
    n.attrs.clear();
    ++n_conv;
  }
  return n_conv;
}

int fuse_activations(Graph& g) {
  int fused = 0;
  bool changed = true;
  while (changed) {
    changed = false;
    const auto prod = producers(g);
    const auto cons = g.consumers();
    std::vector<bool> dead(g.nodes.size(), false);
    std::vector<bool> touched(g.nodes.size(), false);  // consumers are stale for these until the next sweep
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
      Node& act = g.nodes[k];
      PostOp po;
      int x = -1;
      int replaced = act.outputs.empty() ? -1 : act.outputs[0];
      std::vector<std::size_t> remove{k};
      if (detail::is_activation(act.op)) {
        po = detail::activation_of(g, act);
        x = act.inputs[0];
        // x * Sigmoid(x) (SiLU as exported) and x * HardSigmoid(x) with
        // alpha 1/6, beta 1/2 (HardSwish before opset 14): fuse both nodes
        // when x has exactly these two readers.
        const bool gate = po.kind == PostOp::Sigmoid ||
                          (po.kind == PostOp::HardSigmoid && std::fabs(po.alpha - 1.f / 6) < 1e-6f && po.beta == 0.5f);
        const int s = act.outputs[0];
        const int m = gate ? sole_consumer(g, cons, s) : -1;
        const auto& xc = cons[static_cast<std::size_t>(x)];
        if (m >= 0 && g.nodes[static_cast<std::size_t>(m)].op == "Mul" && xc.size() == 2 && !g.is_output(x)) {
          const Node& mul = g.nodes[static_cast<std::size_t>(m)];
          const bool pair = (mul.inputs[0] == x && mul.inputs[1] == s) || (mul.inputs[0] == s && mul.inputs[1] == x);
          if (pair && std::find(xc.begin(), xc.end(), m) != xc.end()) {
            po.kind = po.kind == PostOp::Sigmoid ? PostOp::Swish : PostOp::HardSwish;
            replaced = mul.outputs[0];
            remove.push_back(static_cast<std::size_t>(m));
          }
        }
      } else {
        continue;
      }
      const int p = prod[static_cast<std::size_t>(x)];
      if (p < 0 || dead[static_cast<std::size_t>(p)] || touched[static_cast<std::size_t>(p)] ||
          !accepts_post_ops(g.nodes[static_cast<std::size_t>(p)].op))
        continue;
      if (remove.size() == 2) {  // the gated pair: x's other reader is the Mul
        if (g.is_output(x)) continue;
      } else if (sole_consumer(g, cons, x) != static_cast<int>(k)) {
        continue;
      }
      bool clash = false;
      for (std::size_t r : remove) clash |= dead[r];
      if (clash) continue;
      Node& producer = g.nodes[static_cast<std::size_t>(p)];
      producer.post_ops.push_back(po);
      replace_uses(g, replaced, x);
      g.value(x).name = g.value(replaced).name;
      for (std::size_t r : remove) dead[r] = true;
      touched[static_cast<std::size_t>(p)] = true;
      ++fused;
      changed = true;
    }
    erase_nodes(g, dead);
  }
  return fused;
}

namespace {

// Whether v is a constant float scalar within 1e-6 (relative) of `want`.
bool scalar_is(const Graph& g, int v, double want) {
  const TensorData* c = g.constant(v);
  return c && c->dtype == DType::F32 && c->numel() == 1 && std::fabs(c->f[0] - want) <= 1e-6 * std::fabs(want);
}

// The operand of a binary node other than `v` (-1 if neither is v).
int other_operand(const Node& n, int v) {
  return n.inputs.size() != 2 ? -1 : n.inputs[0] == v ? n.inputs[1] : n.inputs[1] == v ? n.inputs[0] : -1;
}

}  // namespace

int fuse_gelu(Graph& g) {
  const auto prod = producers(g);
  const auto cons = g.consumers();
  std::vector<bool> dead(g.nodes.size(), false);
  int fused = 0;
  // x / sqrt(2) -> Erf -> + 1 -> * x -> * 0.5, each step read by the next only.
  auto next = [&](int v, const char* op) -> int {
    const int k = sole_consumer(g, cons, v);
    return k >= 0 && !dead[static_cast<std::size_t>(k)] && g.nodes[static_cast<std::size_t>(k)].op == op ? k : -1;
  };
  for (std::size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& erf = g.nodes[k];
    if (erf.op != "Erf" || dead[k]) continue;
    const int d = prod[static_cast<std::size_t>(erf.inputs[0])];
    if (d < 0 || sole_consumer(g, cons, erf.inputs[0]) != static_cast<int>(k)) continue;
    const Node& div = g.nodes[static_cast<std::size_t>(d)];
    int x = -1;
    if (div.op == "Div" && div.inputs.size() == 2 && scalar_is(g, div.inputs[1], std::sqrt(2.0))) x = div.inputs[0];
    if (div.op == "Mul") {
      for (int side = 0; side < 2 && x < 0; ++side)
        if (scalar_is(g, div.inputs[static_cast<std::size_t>(side)], 1 / std::sqrt(2.0))) x = div.inputs[static_cast<std::size_t>(1 - side)];
    }
    if (x < 0) continue;
    const int add = next(erf.outputs[0], "Add");
    if (add < 0 || !scalar_is(g, other_operand(g.nodes[static_cast<std::size_t>(add)], erf.outputs[0]), 1.0)) continue;
    const int mul = next(g.nodes[static_cast<std::size_t>(add)].outputs[0], "Mul");
    if (mul < 0 || other_operand(g.nodes[static_cast<std::size_t>(mul)], g.nodes[static_cast<std::size_t>(add)].outputs[0]) != x) continue;
    const int half = next(g.nodes[static_cast<std::size_t>(mul)].outputs[0], "Mul");
    if (half < 0 || !scalar_is(g, other_operand(g.nodes[static_cast<std::size_t>(half)], g.nodes[static_cast<std::size_t>(mul)].outputs[0]), 0.5))
      continue;
    Node& gelu = g.nodes[static_cast<std::size_t>(half)];
    gelu.op = "Gelu";
    gelu.inputs = {x};
    gelu.attrs.clear();
    for (const int r : {d, static_cast<int>(k), add, mul}) dead[static_cast<std::size_t>(r)] = true;
    ++fused;
  }
  erase_nodes(g, dead);
  return fused;
}

int fuse_matmul_bias(Graph& g) {
  const auto cons = g.consumers();
  std::vector<bool> dead(g.nodes.size(), false);
  int fused = 0;
  for (std::size_t k = 0; k < g.nodes.size(); ++k) {
    Node& mm = g.nodes[k];
    if (mm.op != "MatMul" || mm.inputs.size() != 2 || !mm.post_ops.empty()) continue;
    const TensorData* w = g.constant(mm.inputs[1]);
    if (!w || w->dtype != DType::F32 || w->shape.size() != 2) continue;
    const int y = mm.outputs[0];
    const int a = sole_consumer(g, cons, y);
    if (a < 0 || g.nodes[static_cast<std::size_t>(a)].op != "Add") continue;
    Node& add = g.nodes[static_cast<std::size_t>(a)];
    const int b = other_operand(add, y);
    const TensorData* bias = b >= 0 ? g.constant(b) : nullptr;
    if (!bias || bias->dtype != DType::F32 || bias->numel() != w->shape[1] || g.value(add.outputs[0]).shape != g.value(y).shape)
      continue;
    mm.inputs.push_back(g.add_constant(g.value(b).name + ".bias", TensorData::f32({w->shape[1]}, bias->f)));
    replace_uses(g, add.outputs[0], y);
    g.value(y).name = g.value(add.outputs[0]).name;
    dead[static_cast<std::size_t>(a)] = true;
    ++fused;
  }
  erase_nodes(g, dead);
  return fused;
}

int fold_scale_into_matmul(Graph& g) {
  const auto cons = g.consumers();
  std::vector<bool> dead(g.nodes.size(), false);
  int folded = 0;
  for (Node& mm : g.nodes) {
    if (mm.op != "MatMul" || mm.inputs.size() < 2 || !mm.post_ops.empty()) continue;
    const TensorData* w = g.constant(mm.inputs[1]);
    const TensorData* bias = mm.inputs.size() > 2 ? g.constant(mm.inputs[2]) : nullptr;
    if (!w || w->dtype != DType::F32 || w->shape.size() != 2 || (mm.inputs.size() > 2 && !bias)) continue;
    const std::int64_t n = w->shape[1];
    // The value the scale reads: the product, or its NHWC -> NCHW Transpose.
    int v = mm.outputs[0];
    std::int64_t axis = static_cast<std::int64_t>(g.value(v).shape.size()) - 1;
    int r = sole_consumer(g, cons, v);
    if (r >= 0 && g.nodes[static_cast<std::size_t>(r)].op == "Transpose" && g.value(v).shape.size() == 4 &&
        g.nodes[static_cast<std::size_t>(r)].get_ints("perm") == std::vector<std::int64_t>{0, 3, 1, 2}) {
      v = g.nodes[static_cast<std::size_t>(r)].outputs[0], axis = 1;
      r = sole_consumer(g, cons, v);
    }
    if (r < 0 || g.nodes[static_cast<std::size_t>(r)].op != "Mul") continue;
    const Node& mul = g.nodes[static_cast<std::size_t>(r)];
    const int o = other_operand(mul, v);
    const TensorData* s = o >= 0 ? g.constant(o) : nullptr;
    if (!s || s->dtype != DType::F32 || s->numel() != n || g.value(mul.outputs[0]).shape != g.value(v).shape) continue;
    // s must lie along `axis` of v alone (right-aligned broadcasting).
    const Shape& vs = g.value(v).shape;
    const auto rank = static_cast<std::int64_t>(vs.size());
    bool along = static_cast<std::int64_t>(s->shape.size()) <= rank;
    for (std::size_t d = 0; along && d < s->shape.size(); ++d) {
      const std::int64_t at = rank - static_cast<std::int64_t>(s->shape.size()) + static_cast<std::int64_t>(d);
      along = s->shape[d] == (at == axis ? n : 1);
    }
    if (!along || n == 1) continue;
    TensorData scaled = *w;
    for (std::int64_t k = 0; k < w->shape[0]; ++k)
      for (std::int64_t j = 0; j < n; ++j) scaled.f[static_cast<std::size_t>(k * n + j)] *= s->f[static_cast<std::size_t>(j)];
    mm.inputs[1] = g.add_constant(g.value(mm.inputs[1]).name + ".scaled", std::move(scaled));
    if (bias) {
      TensorData b = *bias;
      for (std::int64_t j = 0; j < n; ++j) b.f[static_cast<std::size_t>(j)] *= s->f[static_cast<std::size_t>(j)];
      mm.inputs[2] = g.add_constant(g.value(mm.inputs[2]).name + ".scaled", std::move(b));
    }
    replace_uses(g, mul.outputs[0], v);
    dead[static_cast<std::size_t>(r)] = true;
    ++folded;
  }
  erase_nodes(g, dead);
  return folded;
}

int attention_to_matmul(Graph& g) {
  const auto cons = g.consumers();
  int lowered = 0;
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size());
  auto unused = [&](int v) { return v < 0 || (cons[static_cast<std::size_t>(v)].empty() && !g.is_output(v)); };
  for (Node& n : g.nodes) {
    bool plain = n.op == "Attention" && n.inputs.size() >= 3 && n.get_int("is_causal", 0) == 0 &&
                 n.get_float("softcap", 0.f) == 0.f;
    for (std::size_t i = 3; plain && i < n.inputs.size(); ++i) plain = n.inputs[i] < 0;  // no mask, no cache
    for (std::size_t o = 1; plain && o < n.outputs.size(); ++o) plain = unused(n.outputs[o]);
    // (Copies: adding values below moves the graph's.)
    const Shape qs = plain ? g.value(n.inputs[0]).shape : Shape{}, ks = plain ? g.value(n.inputs[1]).shape : Shape{};
    if (!plain || qs.size() != 4 || ks.size() != 4 || ks[1] != qs[1]) {
      nodes.push_back(std::move(n));
      continue;
    }
    const AttentionDims d = attention_dims(n, qs, ks, g.value(n.inputs[2]).shape);
    // Q and K each scaled by sqrt(scale), as the operator's definition (and
    // the earlier opsets' exports of the same attention) write it.
    const int root = g.add_constant(n.name + ".sqrt_scale", TensorData::f32({}, {static_cast<float>(std::sqrt(d.scale))}));
    auto add = [&](const char* op, std::vector<int> in, const Shape& shape, const char* suffix) {
      Node m;
      m.op = op;
      m.name = n.name + suffix;
      m.inputs = std::move(in);
      m.outputs = {g.add_value(n.name + suffix, DType::F32, shape)};
      nodes.push_back(std::move(m));
      return nodes.back().outputs[0];
    };
    const Shape kt_shape{ks[0], ks[1], ks[3], ks[2]}, scores{d.batch, d.q_heads, d.q_seq, d.kv_seq};
    const int q = add("Mul", {n.inputs[0], root}, qs, ".q");
    const int kt = add("Transpose", {n.inputs[1]}, kt_shape, ".kt");
    nodes.back().attrs["perm"] = std::vector<std::int64_t>{0, 1, 3, 2};
    const int k = add("Mul", {kt, root}, kt_shape, ".k");
    const int sc = add("MatMul", {q, k}, scores, ".scores");
    const int p = add("Softmax", {sc}, scores, ".softmax");
    nodes.back().attrs["axis"] = std::int64_t{-1};
    n.op = "MatMul";
    n.attrs.clear();
    n.inputs = {p, n.inputs[2]};
    n.outputs.resize(1);
    nodes.push_back(std::move(n));
    ++lowered;
  }
  g.nodes = std::move(nodes);
  return lowered;
}

int remove_broadcast_expands(Graph& g) {
  const auto cons = g.consumers();
  std::vector<bool> dead(g.nodes.size(), false);
  int removed = 0;
  for (std::size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& e = g.nodes[k];
    if (e.op != "Expand" || g.is_output(e.outputs[0]) || g.value(e.inputs[0]).is_constant()) continue;
    const int y = e.outputs[0], x = e.inputs[0];
    const Shape& ys = g.value(y).shape;
    bool all = !cons[static_cast<std::size_t>(y)].empty();
    for (int c : cons[static_cast<std::size_t>(y)]) {
      const Node& r = g.nodes[static_cast<std::size_t>(c)];
      const int other = other_operand(r, y);
      all = all && (r.op == "Add" || r.op == "Sub" || r.op == "Mul" || r.op == "Div") && other >= 0 && other != y;
      if (all) {  // the reader's result keeps its shape when it broadcasts x itself
        try {
          all = broadcast_shapes(r, g.value(other).shape, g.value(x).shape) == ys &&
                broadcast_shapes(r, g.value(other).shape, ys) == ys;
        } catch (const Error&) {
          all = false;
        }
      }
    }
    if (!all) continue;
    replace_uses(g, y, x);
    dead[k] = true;
    ++removed;
  }
  erase_nodes(g, dead);
  return removed;
}

int einsum_to_matmul(Graph& g) {
  int lowered = 0;
  std::vector<Node> added;  // transposes, placed before their Einsum
  std::vector<Node> nodes;
  nodes.reserve(g.nodes.size());
  for (Node& n : g.nodes) {
    if (n.op == "Einsum" && n.inputs.size() == 2) {
      const EinsumTerms t = einsum_terms(n);
      const std::string &a = t.inputs[0], &b = t.inputs[1], &o = t.output;
      const std::size_t r = o.size();
      // batch letters, then a = ..ik, o = ..ij, and b = ..kj or ..jk
      const bool shape_ok = r >= 2 && a.size() == r && b.size() == r && a.substr(0, r - 2) == o.substr(0, r - 2) &&
                            b.substr(0, r - 2) == o.substr(0, r - 2) && a[r - 2] == o[r - 2] && a[r - 1] != o[r - 1] &&
                            o.find(a[r - 1]) == std::string::npos;
      const bool plain = shape_ok && b[r - 2] == a[r - 1] && b[r - 1] == o[r - 1];
      const bool transposed = shape_ok && b[r - 1] == a[r - 1] && b[r - 2] == o[r - 1];
      if (plain || transposed) {
        if (transposed) {
          std::vector<std::int64_t> perm(r);
          for (std::size_t d = 0; d < r; ++d) perm[d] = static_cast<std::int64_t>(d);
          std::swap(perm[r - 1], perm[r - 2]);
          Node tr;
          tr.op = "Transpose";
          tr.name = n.name + ".transpose";
          tr.inputs = {n.inputs[1]};
          Shape s = g.value(n.inputs[1]).shape;
          std::swap(s[r - 1], s[r - 2]);
          tr.outputs = {g.add_value(g.value(n.inputs[1]).name + ".t", DType::F32, s)};
          tr.attrs["perm"] = perm;
          n.inputs[1] = tr.outputs[0];
          nodes.push_back(std::move(tr));
        }
        n.op = "MatMul";
        n.attrs.clear();
        ++lowered;
      }
    }
    nodes.push_back(std::move(n));
  }
  g.nodes = std::move(nodes);
  return lowered;
}

int fuse_residual_add(Graph& g) {
  const auto prod = producers(g);
  const auto cons = g.consumers();
  std::vector<bool> dead(g.nodes.size(), false);
  std::vector<bool> gained(g.nodes.size(), false);  // one Sum per Conv
  int fused = 0;
  for (std::size_t k = 0; k < g.nodes.size(); ++k) {
    Node& add = g.nodes[k];
    if (add.op != "Add" || g.value(add.inputs[0]).shape != g.value(add.inputs[1]).shape) continue;
    if (g.value(add.inputs[0]).dtype != DType::F32) continue;
    for (int side = 0; side < 2; ++side) {
      const int x = add.inputs[static_cast<std::size_t>(side)], other = add.inputs[static_cast<std::size_t>(1 - side)];
      const int p = prod[static_cast<std::size_t>(x)];
      if (p < 0 || dead[static_cast<std::size_t>(p)] || gained[static_cast<std::size_t>(p)]) continue;
      if (g.nodes[static_cast<std::size_t>(p)].op != "Conv" || sole_consumer(g, cons, x) != static_cast<int>(k)) continue;
      const int po = prod[static_cast<std::size_t>(other)];
      if (po >= p || other == x) continue;  // the other operand must exist before the Conv runs
      PostOp s;
      s.kind = PostOp::Sum;
      s.sum_input = other;
      g.nodes[static_cast<std::size_t>(p)].post_ops.push_back(s);
      replace_uses(g, add.outputs[0], x);
      g.value(x).name = g.value(add.outputs[0]).name;
      gained[static_cast<std::size_t>(p)] = true;
      dead[k] = true;
      ++fused;
      break;
    }
  }
  erase_nodes(g, dead);
  return fused;
}

int spatial_mean_to_global_pool(Graph& g) {
  int changed = 0;
  for (Node& n : g.nodes) {
    if (n.op != "ReduceMean" || n.inputs.empty() || n.get_int("keepdims", 1) == 0) continue;
    const Shape& xs = g.value(n.inputs[0]).shape;
    if (xs.size() != 4 || (n.inputs.size() > 1 && n.inputs[1] >= 0 && !g.constant(n.inputs[1]))) continue;
    std::vector<std::int64_t> axes = axes_of(g, n, 1);
    for (std::int64_t& a : axes) a = normalize_axis(n, a, xs.size());
    std::sort(axes.begin(), axes.end());
    if (axes != std::vector<std::int64_t>{2, 3}) continue;
    n.op = "GlobalAveragePool";
    n.inputs.resize(1);
    n.attrs.clear();
    ++changed;
  }
  return changed;
}

int pool_before_conv1x1(Graph& g) {
  const auto prod = producers(g);
  const auto cons = g.consumers();
  int moved = 0;
  for (std::size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& pool = g.nodes[k];
    if (pool.op != "AveragePool" || pool.get_string("auto_pad", "NOTSET") != "NOTSET") continue;
    const int y = pool.outputs[0], t = pool.inputs[0];
    const int c = prod[static_cast<std::size_t>(t)];
    if (c < 0 || sole_consumer(g, cons, t) != static_cast<int>(k)) continue;
    const Node& conv = g.nodes[static_cast<std::size_t>(c)];
    if (conv.op != "Conv" || !conv.post_ops.empty() || conv.get_string("auto_pad", "NOTSET") != "NOTSET") continue;
    const TensorData* w = conv.inputs.size() > 1 ? g.constant(conv.inputs[1]) : nullptr;
    if (!w || (conv.inputs.size() > 2 && conv.inputs[2] >= 0 && !g.constant(conv.inputs[2]))) continue;
    const int x = conv.inputs[0];
    const Shape& xs = g.value(x).shape;
    if (xs.size() != 4 || !is_pointwise(conv_params(conv, xs, w->shape), w->shape)) continue;
    // Each output pixel averages its own k x k pixels: none shared, padded or left over.
    if (!windows_tile_map(pool_params(pool, g.value(t).shape), xs)) continue;
    const Shape& ys = g.value(y).shape;
    const int v = g.add_value(g.value(y).name + "/pooled_input", g.value(x).dtype, Shape{xs[0], xs[1], ys[2], ys[3]});
    Node& p = g.nodes[k];
    Node& cv = g.nodes[static_cast<std::size_t>(c)];
    p.inputs[0] = x, p.outputs[0] = v;
    cv.inputs[0] = v, cv.outputs[0] = y;
    std::swap(p, cv);  // the pool now runs first, where the Conv did
    ++moved;
  }
  return moved;
}

namespace {

// The channels [begin, begin + count) a Slice of a 4-D value keeps, if it
// keeps every index of the other dimensions, with constant parameters and
// a step of 1; else false.
bool channel_slice(const Graph& g, const Node& n, std::int64_t& begin, std::int64_t& count) {
  if (n.op != "Slice" || n.inputs.size() < 3) return false;
  const Shape& xs = g.value(n.inputs[0]).shape;
  std::vector<const TensorData*> p;
  for (std::size_t i = 1; i < 5; ++i) p.push_back(i < n.inputs.size() && n.inputs[i] >= 0 ? g.constant(n.inputs[i]) : nullptr);
  if (xs.size() != 4 || !p[0] || !p[1] || (n.inputs.size() > 3 && n.inputs[3] >= 0 && !p[2]) ||
      (n.inputs.size() > 4 && n.inputs[4] >= 0 && !p[3]))
    return false;
  const SliceWindow w = slice_window(n, xs, p[0]->i, p[1]->i, p[2] ? p[2]->i : std::vector<std::int64_t>{},
                                     p[3] ? p[3]->i : std::vector<std::int64_t>{});
  for (std::size_t d = 0; d < 4; ++d)
    if (w.step[d] != 1 || (d != 1 && (w.begin[d] != 0 || w.size[d] != xs[d]))) return false;
  begin = w.begin[1], count = w.size[1];
  return count > 0;
}

}  // namespace

int fuse_channel_shuffle(Graph& g) {
  const auto cons = g.consumers();
  const std::vector<int> prod = producers(g);
  const auto producer = [&](int v, const char* op) -> Node* {
    const int p = v >= 0 ? prod[static_cast<std::size_t>(v)] : -1;
    return p >= 0 && g.nodes[static_cast<std::size_t>(p)].op == op && sole_consumer(g, cons, v) >= 0
               ? &g.nodes[static_cast<std::size_t>(p)]
               : nullptr;
  };
  int fused = 0;
  std::vector<std::pair<int, Node>> inserts;  // gathers to place after node .first (a Split's other parts)
  for (Node& r2 : g.nodes) {
    if (r2.op != "Reshape" || g.value(r2.outputs[0]).shape.size() != 4) continue;
    const Node* t = producer(r2.inputs[0], "Transpose");
    if (!t || t->get_ints("perm") != std::vector<std::int64_t>{0, 2, 1, 3, 4}) continue;
    const Node* r1 = producer(t->inputs[0], "Reshape");
    if (!r1) continue;
    const Shape& xs = g.value(r1->inputs[0]).shape;
    const Shape& s5 = g.value(r1->outputs[0]).shape;
    const Shape& ys = g.value(r2.outputs[0]).shape;
    if (xs.size() != 4 || s5.size() != 5 || s5[0] != xs[0] || s5[1] * s5[2] != xs[1] || s5[3] != xs[2] || s5[4] != xs[3] ||
        ys != xs || g.value(r1->inputs[0]).dtype != DType::F32)
      continue;
    // The gather reads the concatenation's parts, where only the shuffle reads it.
    std::vector<int> sources{r1->inputs[0]};
    if (const Node* cat = producer(r1->inputs[0], "Concat")) {
      const bool parts = cat->get_int("axis", 1) == 1 || cat->get_int("axis", 1) == -3;
      if (parts && std::none_of(cat->inputs.begin(), cat->inputs.end(), [&](int v) { return g.value(v).is_constant(); }))
        sources = cat->inputs;
    }
    // Shuffled channel j = i x G + gi is channel gi x (C / G) + i.
    const std::int64_t G = s5[1], per = s5[2];
    std::vector<std::int64_t> perm(static_cast<std::size_t>(xs[1]));
    for (std::int64_t j = 0; j < xs[1]; ++j) perm[static_cast<std::size_t>(j)] = (j % G) * per + j / G;
    const auto gather = [&](Node& n, std::int64_t begin, std::int64_t count) {
      n.op = "vinfer.ChannelGather";
      n.inputs = sources;
      n.attrs = {{"channels", std::vector<std::int64_t>(perm.begin() + begin, perm.begin() + begin + count)}};
      ++fused;
    };
    const int y = r2.outputs[0];
    for (int c : cons[static_cast<std::size_t>(y)]) {
      Node& reader = g.nodes[static_cast<std::size_t>(c)];
      std::int64_t begin, count;
      if (reader.inputs.empty() || reader.inputs[0] != y) continue;
      if (channel_slice(g, reader, begin, count)) {
        gather(reader, begin, count);
      } else if (reader.op == "Split" && (reader.get_int("axis", 0) == 1 || reader.get_int("axis", 0) == -3) &&
                 std::all_of(reader.outputs.begin(), reader.outputs.end(),
                             [&](int v) { return v >= 0 && g.value(v).shape.size() == 4 && g.value(v).shape[1] > 0; })) {
        // (the dynamo exporter's chunk) One gather per part, the first in the Split's place.
        const std::vector<int> parts = reader.outputs;
        const std::string name = reader.name;
        begin = 0;
        for (std::size_t o = 0; o < parts.size(); ++o) {
          count = g.value(parts[o]).shape[1];
          Node* n = &reader;
          if (o > 0) {
            Node part;
            part.name = name + "/" + std::to_string(o);
            inserts.emplace_back(c, std::move(part));
            n = &inserts.back().second;
          }
          n->outputs = {parts[o]};
          gather(*n, begin, count);
          begin += count;
        }
      }
    }
    r2.op = "vinfer.ChannelGather";
    r2.inputs = sources;
    r2.attrs = {{"channels", perm}};
    ++fused;
  }
  if (!inserts.empty()) {
    std::vector<Node> nodes;
    nodes.reserve(g.nodes.size() + inserts.size());
    std::stable_sort(inserts.begin(), inserts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    auto next = inserts.begin();
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
      nodes.push_back(std::move(g.nodes[k]));
      for (; next != inserts.end() && next->first == static_cast<int>(k); ++next) nodes.push_back(std::move(next->second));
    }
    g.nodes = std::move(nodes);
  }
  return fused;
}

int remove_dead_nodes(Graph& g) {
  int removed = 0;
  bool changed = true;
  while (changed) {
    changed = false;
    const auto cons = g.consumers();
    std::vector<bool> dead(g.nodes.size(), false);
    for (std::size_t k = 0; k < g.nodes.size(); ++k) {
      bool used = false;
      for (int v : g.nodes[k].outputs)
        if (v >= 0 && (g.is_output(v) || !cons[static_cast<std::size_t>(v)].empty())) used = true;
      if (!used) {
        dead[k] = true;
        ++removed;
        changed = true;
      }
    }
    erase_nodes(g, dead);
  }
  return removed;
}

void optimize(Graph& g, const GraphLimits& limits, bool fuse, std::vector<std::string>* log) {
  auto note = [&](const char* pass, int count) {
    if (log) log->push_back(std::string(pass) + ": " + std::to_string(count));
  };
  note("fold_constants", fold_constants(g, limits));
  note("remove_identities", remove_identities(g));
  note("einsum_to_matmul", einsum_to_matmul(g));  // a lowering: Einsum has no kernel
  const int attentions = attention_to_matmul(g);  // a lowering: Attention has no kernel
  note("attention_to_matmul", attentions);
  if (attentions) fold_constants(g, limits);  // (a constant K's transpose and scale)
  note("fold_pad", fold_pad(g));
  if (fuse) note("fold_batchnorm", fold_batchnorm(g));
  note("batchnorm_to_scale_shift", batchnorm_to_scale_shift(g));  // a lowering, not an optimization
  note("spatial_mean_to_global_pool", spatial_mean_to_global_pool(g));  // one spelling for one operation
  if (fuse) {
    note("remove_broadcast_expands", remove_broadcast_expands(g));
    note("fuse_gelu", fuse_gelu(g));
    note("fuse_matmul_bias", fuse_matmul_bias(g));
    note("fold_scale_into_matmul", fold_scale_into_matmul(g));
    int acts = fuse_activations(g);
    note("fuse_residual_add", fuse_residual_add(g));
    acts += fuse_activations(g);
    note("fuse_activations", acts);
    note("pool_before_conv1x1", pool_before_conv1x1(g));
    note("fuse_channel_shuffle", fuse_channel_shuffle(g));
  }
  note("remove_dead_nodes", remove_dead_nodes(g));
}

}  // namespace vinfer::detail
