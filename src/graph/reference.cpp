#include "graph/reference.hpp"

#include <algorithm>

#include "graph/activation.hpp"
#include "graph/op_registry.hpp"
#include "vinfer/error.hpp"

namespace vinfer::detail {
namespace {

void apply_post_ops(const Node& n, TensorData& y, const std::vector<const TensorData*>& sums) {
  std::size_t k = 0;
  for (const PostOp& p : n.post_ops) {
    if (p.kind == PostOp::Sum) {
      const TensorData* s = sums.at(k++);
      if (!s || s->shape != y.shape) throw Error(ErrorKind::Internal, n.label() + ": Sum post-op operand mismatch");
      for (std::size_t i = 0; i < y.f.size(); ++i) y.f[i] += s->f[i];
      continue;
    }
    for (float& v : y.f) v = apply_activation(p, v);
  }
}

}  // namespace

std::vector<TensorData> eval_reference(const Graph& g, const Node& n, const std::vector<const TensorData*>& in) {
  const OpDef* def = find_op(n.op);
  if (!def) throw Error(ErrorKind::Unsupported, "no reference kernel for " + n.label());
  std::vector<TensorData> res;
  RefContext c(g, n, in, res);
  def->reference(c);
  TensorData& y = res[0];
  std::vector<const TensorData*> sums(in.begin() + static_cast<std::ptrdiff_t>(std::min(in.size(), n.inputs.size())), in.end());
  apply_post_ops(n, y, sums);
  return res;
}

}  // namespace vinfer::detail
