// The fallback for a node no CPU kernel runs: the reference evaluator
// (graph/reference.hpp) on copies of its plain tensors. Exact, slow, and the
// one op here that allocates as it runs (the reference returns new tensors);
// `vinfer info` names every node that runs so ("reference_fallback").
#include <cstring>
#include <memory>

#include "cpu/cpu_op.hpp"
#include "graph/reference.hpp"
#include "vinfer/error.hpp"

namespace vinfer::cpu {
namespace {

constexpr int kOutputArg = 1 << 20;  // acts keys: inputs 0.., outputs kOutputArg + i

class ReferenceOp : public CpuOp {
 public:
  ReferenceOp(const Graph& g, const Node& n) : g_(g), n_(n) {}

  void add_input(const BuildContext& ctx, int value) {
    const int slot = static_cast<int>(inputs_.size());
    if (value < 0) {
      inputs_.push_back(nullptr);
    } else if (const auto& c = ctx.graph().value(value).constant) {
      held_.push_back(c);  // kept: the engine releases the graph's large constants after compiling
      inputs_.push_back(c.get());
    } else {
      TensorData t;
      t.shape = ctx.graph().value(value).shape;
      t.f.resize(static_cast<std::size_t>(numel(t.shape)));
      copies_.push_back(std::make_unique<TensorData>(std::move(t)));
      inputs_.push_back(copies_.back().get());
      copy_slots_.push_back(slot);
    }
  }

  void execute(dnnl::stream&) override {
    for (std::size_t k = 0; k < copy_slots_.size(); ++k) {
      TensorData& t = *copies_[k];
      if (!t.f.empty()) std::memcpy(t.f.data(), args.at(copy_slots_[k]).get_data_handle(), t.f.size() * sizeof(float));
    }
    const std::vector<TensorData> out = detail::eval_reference(g_, n_, inputs_);
    for (std::size_t i = 0; i < outputs_; ++i) {
      auto it = args.find(kOutputArg + static_cast<int>(i));
      if (it == args.end()) continue;
      if (i >= out.size()) throw Error(ErrorKind::Internal, n_.label() + ": output " + std::to_string(i) + " was not computed");
      if (!out[i].f.empty()) std::memcpy(it->second.get_data_handle(), out[i].f.data(), out[i].f.size() * sizeof(float));
    }
  }

  std::vector<ByteSpan> weights() const override { return {}; }
  std::size_t outputs_ = 0;

 private:
  const Graph& g_;
  const Node n_;
  std::vector<const TensorData*> inputs_;
  std::vector<std::shared_ptr<const TensorData>> held_;
  std::vector<std::unique_ptr<TensorData>> copies_;
  std::vector<int> copy_slots_;
};

}  // namespace

void build_reference(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  for (int v : n.inputs)
    if (v >= 0 && !g.value(v).is_constant() && g.value(v).dtype != DType::F32)
      unsupported(n, "an integer runtime input (shape computations on runtime values?)");
  for (int v : n.outputs)
    if (v >= 0 && g.value(v).dtype != DType::F32) unsupported(n, "an integer runtime output");
  auto op = std::make_unique<ReferenceOp>(g, n);
  for (int v : n.inputs) op->add_input(ctx, v);
  for (const PostOp& p : n.post_ops)
    if (p.kind == PostOp::Sum) op->add_input(ctx, p.sum_input);
  // Inputs bound in order: slot k is the k-th input (constants and omitted ones leave gaps).
  int slot = 0;
  auto bind_inputs = [&](int v) {
    if (v >= 0 && !g.value(v).is_constant()) op->acts[slot] = ctx.input(v, Form::Plain);
    ++slot;
  };
  for (int v : n.inputs) bind_inputs(v);
  for (const PostOp& p : n.post_ops)
    if (p.kind == PostOp::Sum) bind_inputs(p.sum_input);
  op->outputs_ = n.outputs.size();
  // Only the outputs something reads (a kernel need not compute the others: Attention's scores).
  const std::vector<std::vector<int>> readers = g.consumers();
  for (std::size_t i = 0; i < n.outputs.size(); ++i) {
    const int v = n.outputs[i];
    if (v >= 0 && (g.is_output(v) || !readers[static_cast<std::size_t>(v)].empty()))
      op->acts[kOutputArg + static_cast<int>(i)] = ctx.output(v, Form::Plain);
  }
  op->name = n.label();
  op->impl = "vinfer:reference";
  ctx.add(std::move(op));
}

}  // namespace vinfer::cpu
