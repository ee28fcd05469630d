#include "backend/concat_views.hpp"

#include <algorithm>

namespace vinfer::detail {

ConcatViews plan_concat_views(const Graph& g, const std::function<bool(int)>& sliceable,
                              const std::function<std::int64_t(int)>& bytes) {
  ConcatViews cv;
  cv.root.assign(g.values.size(), -1);
  cv.offset.assign(g.values.size(), 0);
  cv.node_is_view.assign(g.nodes.size(), false);
  std::vector<bool> produced(g.values.size(), false);
  for (const Node& n : g.nodes)
    for (int v : n.outputs)
      if (v >= 0) produced[static_cast<std::size_t>(v)] = true;
  // A value may move into another's buffer only if a node writes it and nobody outside reads its storage.
  auto movable = [&](int v) { return produced[static_cast<std::size_t>(v)] && !g.is_output(v) && sliceable(v); };

  for (std::size_t k = g.nodes.size(); k-- > 0;) {
    const Node& n = g.nodes[k];
    if (n.op != "Concat" || !n.post_ops.empty()) continue;
    const int out = n.outputs[0];
    const Shape& s = g.value(out).shape;
    if (s.size() < 2 || !sliceable(out)) continue;
    std::int64_t axis = n.get_int("axis", 1);
    if (axis < 0) axis += static_cast<std::int64_t>(s.size());
    if (axis != 1) continue;
    bool distinct = true;
    for (std::size_t i = 0; i < n.inputs.size(); ++i)
      for (std::size_t j = 0; j < i; ++j) distinct &= n.inputs[i] != n.inputs[j];
    if (!distinct) continue;

    const auto o = static_cast<std::size_t>(out);
    const int root = cv.root[o] >= 0 ? cv.root[o] : out;
    const std::int64_t base = cv.root[o] >= 0 ? cv.offset[o] : 0;
    // Case 1: each input either already sits at its place in `root`, or can be put there.
    bool ok = true;
    std::int64_t at = base;
    for (int v : n.inputs) {
      const auto vi = static_cast<std::size_t>(v);
      if (cv.root[vi] >= 0) ok &= cv.root[vi] == root && cv.offset[vi] == at;
      else ok &= movable(v);
      at += bytes(v);
    }
    if (ok) {
      at = base;
      for (int v : n.inputs) {
        cv.root[static_cast<std::size_t>(v)] = root;
        cv.offset[static_cast<std::size_t>(v)] = at;
        at += bytes(v);
      }
      cv.node_is_view[k] = true;
      ++cv.count;
      continue;
    }
    // Case 2: the inputs already lie back to back in some other buffer: the result is that range.
    if (cv.root[o] >= 0 || g.is_output(out)) continue;
    const int r = cv.root[static_cast<std::size_t>(n.inputs[0])];
    if (r < 0) continue;
    at = cv.offset[static_cast<std::size_t>(n.inputs[0])];
    bool contiguous = true;
    for (int v : n.inputs) {
      contiguous &= cv.root[static_cast<std::size_t>(v)] == r && cv.offset[static_cast<std::size_t>(v)] == at;
      at += bytes(v);
    }
    if (!contiguous) continue;
    cv.root[o] = r;
    cv.offset[o] = cv.offset[static_cast<std::size_t>(n.inputs[0])];
    cv.node_is_view[k] = true;
    ++cv.count;
  }
  return cv;
}

bool is_reshape_op(const std::string& op) {
  return op == "Flatten" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze";
}

std::vector<bool> reshape_products(const Graph& g) {
  std::vector<bool> r(g.values.size(), false);
  for (const Node& n : g.nodes)
    for (int v : n.outputs)
      if (v >= 0) r[static_cast<std::size_t>(v)] = is_reshape_op(n.op);
  return r;
}

}  // namespace vinfer::detail
