// MaxPool, AveragePool, GlobalAveragePool and ReduceMean over H,W -> oneDNN pooling.
#include <algorithm>

#include "cpu/cpu_op.hpp"
#include "graph/op_params.hpp"
#include "graph/shape.hpp"

namespace vinfer::cpu {

void build_pool(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& xs = g.value(n.inputs[0]).shape;
  const Shape& ys = g.value(n.outputs[0]).shape;
  if (xs.size() != 4) unsupported(n, "a " + std::to_string(xs.size()) + "-D input");
  memory::dims kernel, strides, dil{0, 0}, pl{0, 0}, pr{0, 0};
  dnnl::algorithm alg = dnnl::algorithm::pooling_avg_exclude_padding;
  if (n.op == "GlobalAveragePool" || n.op == "ReduceMean") {
    if (n.op == "ReduceMean") {
      std::vector<std::int64_t> axes = detail::axes_of(g, n, 1);
      for (auto& a : axes) a = detail::normalize_axis(n, a, xs.size());
      std::sort(axes.begin(), axes.end());
      if (axes != std::vector<std::int64_t>{2, 3}) unsupported(n, "ReduceMean over axes other than {2, 3}");
    }
    kernel = {xs[2], xs[3]};
    strides = {1, 1};
  } else {
    const detail::WindowParams p = detail::pool_params(n, xs);
    kernel.assign(p.kernel.begin(), p.kernel.end());
    strides.assign(p.strides.begin(), p.strides.end());
    for (int i = 0; i < 2; ++i) dil[static_cast<std::size_t>(i)] = p.dilations[static_cast<std::size_t>(i)] - 1;
    pl.assign(p.pads_begin.begin(), p.pads_begin.end());
    pr.assign(p.pads_end_effective.begin(), p.pads_end_effective.end());
    if (n.op == "MaxPool") {
      alg = dnnl::algorithm::pooling_max;
    } else if (p.count_include_pad) {
      // PyTorch counts explicit padding but not the ceil_mode overhang; oneDNN would count both.
      if (p.pads_end_effective != p.pads_end) unsupported(n, "count_include_pad with a ceil_mode overhang");
      alg = dnnl::algorithm::pooling_avg_include_padding;
    }
  }
  const Shape y4{ys[0], ys[1], 1 + (xs[2] + pl[0] + pr[0] - ((kernel[0] - 1) * (dil[0] + 1) + 1)) / strides[0],
                 1 + (xs[3] + pl[1] + pr[1] - ((kernel[1] - 1) * (dil[1] + 1) + 1)) / strides[1]};
  TensorRef src = ctx.input(n.inputs[0], Form::Blocked);
  // ReduceMean without keepdims yields [N, C]: pool straight into its plain
  // storage, which has the bytes of [N, C, 1, 1].
  const bool squeeze = ys.size() != 4;
  TensorRef dst = ctx.output(n.outputs[0], squeeze ? Form::Plain : Form::Blocked);
  if (squeeze) dst.md = plain_md(y4);
  auto op = std::make_unique<PrimitiveOp>();
  dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, alg, src.md, dst.md, strides, kernel, dil, pl, pr);
  dnnl::pooling_v2_forward::primitive_desc pd(d, default_attr(), ctx.engine());
  op->prim = dnnl::pooling_v2_forward(pd);
  op->name = n.label();
  op->acts[DNNL_ARG_SRC] = src;
  op->acts[DNNL_ARG_DST] = dst;
  finish(*op, pd);
  ctx.add(std::move(op));
}

}  // namespace vinfer::cpu
