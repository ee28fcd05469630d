// MaxPool, AveragePool, GlobalAveragePool and ReduceMean over H,W -> oneDNN
// pooling; an AveragePool over a normalization that only it reads (DenseNet's
// transitions once the pool runs before their convolution) -> vinfer's
// NormPoolOp, which normalizes as it averages.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "cpu/aligned.hpp"
#include "cpu/cpu_op.hpp"
#include "cpu/norm_pool.hpp"
#include "graph/op_params.hpp"
#include "graph/shape.hpp"
#include "vinfer/error.hpp"

namespace vinfer::cpu {
namespace {

// y = mean over each k_h x k_w window (windows that tile the map) of
// max(x * scale + shift, lo), per channel, on blocked tensors: one read of
// the full-size input instead of a normalized copy written and read back.
class NormPoolOp : public CpuOp {
 public:
  std::vector<float> scale, shift;
  float lo = -std::numeric_limits<float>::infinity();
  std::int64_t n = 1, blocks = 0, h = 0, w = 0, kh = 1, kw = 1;
  int block = 8;
  const float* src = nullptr;
  float* dst = nullptr;

  void bind(const dnnl::engine& eng, const std::function<void*(int)>& address, void* scratch) override {
    CpuOp::bind(eng, address, scratch);
    src = static_cast<const float*>(args.at(DNNL_ARG_SRC).get_data_handle());
    dst = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
  }

  void execute(dnnl::stream&) override {
    const std::int64_t oh = h / kh, ow = w / kw, rows = n * blocks * oh;
    const bool simd = simd_block_runs(block);
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t plane = r / oh, oy = r % oh, cb = plane % blocks;
      const NormPoolRow row{src + (plane * h + oy * kh) * w * block, w, static_cast<int>(kh), static_cast<int>(kw), ow,
                            scale.data() + cb * block, shift.data() + cb * block, lo,
                            1.f / static_cast<float>(kh * kw), dst + (plane * oh + oy) * ow * block};
      if (!simd) norm_pool_row_plain(row, block);
      else if (block == 16) norm_pool_row_avx512(row);
      else norm_pool_row_avx2(row);
    }
  }
};

void build_norm_pool(BuildContext& ctx, const Node& pool, const Node& s) {
  const Graph& g = ctx.graph();
  const Shape& xs = g.value(s.inputs[0]).shape;
  const detail::WindowParams p = detail::pool_params(pool, xs);
  auto op = std::make_unique<NormPoolOp>();
  op->scale = g.constant(s.inputs[1])->f;
  op->shift = g.constant(s.inputs[2])->f;
  if (!s.post_ops.empty()) op->lo = 0.f;
  op->block = channel_block();
  op->n = xs[0], op->blocks = xs[1] / op->block, op->h = xs[2], op->w = xs[3], op->kh = p.kernel[0], op->kw = p.kernel[1];
  op->acts[DNNL_ARG_SRC] = ctx.input(s.inputs[0], Form::Blocked);
  op->acts[DNNL_ARG_DST] = ctx.output(pool.outputs[0], Form::Blocked);
  op->name = pool.label();
  op->impl = "vinfer:norm_pool";
  ctx.add(std::move(op));
}

}  // namespace

void norm_pool_row_plain(const NormPoolRow& r, int block) {
  for (std::ptrdiff_t ox = 0; ox < r.ow; ++ox)
    for (int j = 0; j < block; ++j) {
      float acc = 0.f;
      for (int ky = 0; ky < r.kh; ++ky)
        for (int kx = 0; kx < r.kw; ++kx)
          acc += std::max(r.x[(ky * r.w + ox * r.kw + kx) * block + j] * r.scale[j] + r.shift[j], r.lo);
      r.y[ox * block + j] = acc * r.inv_area;
    }
}

const Node* pool_absorbable_scale_shift(const BuildContext& ctx, const Node& pool) {
  if (pool.op != "AveragePool" || pool.inputs.empty() || pool.get_string("auto_pad", "NOTSET") != "NOTSET") return nullptr;
  const Node* s = sole_reader_pre_activation(ctx, pool.inputs[0]);
  if (!s) return nullptr;
  const Shape& xs = ctx.graph().value(pool.inputs[0]).shape;
  if (xs.size() != 4 || xs[1] % channel_block() != 0 || !detail::windows_tile_map(detail::pool_params(pool, xs), xs))
    return nullptr;
  return s;
}

// ReduceMean (other than over a 4-D map), ReduceSum, ReduceMax, ReduceL2:
// oneDNN's reduction on the plain tensor, the output read with the reduced
// dimensions kept (the same bytes as without).
void build_reduce(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& xs = g.value(n.inputs[0]).shape;
  // (Over an empty set ONNX's answers are -inf for a max and 0 for a sum; oneDNN's are not.)
  if (numel(xs) == 0) throw Error(ErrorKind::Unsupported, n.label() + ": an empty input");
  std::vector<bool> red(xs.size(), false);
  const std::vector<std::int64_t> axes = detail::axes_of(g, n, 1);
  if (axes.empty() && n.get_int("noop_with_empty_axes", 0) == 0) red.assign(xs.size(), true);
  for (std::int64_t a : axes) red[static_cast<std::size_t>(detail::normalize_axis(n, a, xs.size()))] = true;
  Shape kept = xs;
  for (std::size_t d = 0; d < xs.size(); ++d)
    if (red[d]) kept[d] = 1;
  // oneDNN 2.6 runs the L2 norm only on its reference kernel; vinfer's rows do the last axes.
  if (n.op == "ReduceL2" && build_row_reduce(ctx, n, red)) return;
  const dnnl::algorithm alg = n.op == "ReduceSum"   ? dnnl::algorithm::reduction_sum
                              : n.op == "ReduceMax" ? dnnl::algorithm::reduction_max
                              : n.op == "ReduceL2"  ? dnnl::algorithm::reduction_norm_lp_sum
                                                    : dnnl::algorithm::reduction_mean;
  TensorRef src = ctx.input(n.inputs[0], Form::Plain);
  TensorRef dst = ctx.output(n.outputs[0], Form::Plain);
  src.md = plain_md(xs);
  dst.md = plain_md(kept);
  dnnl::reduction::primitive_desc pd(dnnl::reduction::desc(alg, src.md, dst.md, 2.f, 0.f), default_attr(), ctx.engine());
  auto op = std::make_unique<PrimitiveOp>();
  op->prim = dnnl::reduction(pd);
  op->name = n.label();
  op->acts[DNNL_ARG_SRC] = src;
  op->acts[DNNL_ARG_DST] = dst;
  finish(*op, pd);
  ctx.add(std::move(op));
}

void build_pool(BuildContext& ctx, const Node& n) {
  if (const Node* s = pool_absorbable_scale_shift(ctx, n)) return build_norm_pool(ctx, n, *s);
  if (build_squeeze_excite(ctx, n)) return;
  const Graph& g = ctx.graph();
  const Shape& xs = g.value(n.inputs[0]).shape;
  const Shape& ys = g.value(n.outputs[0]).shape;
  if (xs.size() != 4) {
    if (n.op == "ReduceMean") return build_reduce(ctx, n);
    unsupported(n, "a " + std::to_string(xs.size()) + "-D input");
  }
  memory::dims kernel, strides, dil{0, 0}, pl{0, 0}, pr{0, 0};
  dnnl::algorithm alg = dnnl::algorithm::pooling_avg_exclude_padding;
  if (n.op == "GlobalAveragePool" || n.op == "ReduceMean") {
    if (n.op == "ReduceMean") {
      std::vector<std::int64_t> axes = detail::axes_of(g, n, 1);
      for (auto& a : axes) a = detail::normalize_axis(n, a, xs.size());
      std::sort(axes.begin(), axes.end());
      if (axes != std::vector<std::int64_t>{2, 3}) return build_reduce(ctx, n);
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
  // Precision::INT8: a max pool between int8 convolutions runs on their
  // integers, in the scale of its output's range (the program's int8_range).
  Form form = Form::Blocked;
  const int x = n.inputs[0], y = n.outputs[0];
  if (n.op == "MaxPool" && ctx.int8() && ctx.int8_value(y) && ctx.has_form(x, ctx.int8_form(x)) &&
      ctx.int8_form(x) == ctx.int8_form(y) && ctx.int8_scale(x) == ctx.int8_scale(y))
    form = ctx.int8_form(x);
  // An input written channels-last only (what bfloat16 convolutions on AMX
  // write for readers other than convolutions) is pooled as it is; in
  // bfloat16 where the max pool's readers read that (BuildContext::bf16_form).
  if (form == Form::Blocked && ctx.has_form(x, Form::ChannelsLast) && !ctx.has_form(x, Form::Blocked)) form = Form::ChannelsLast;
  if (n.op == "MaxPool" && ctx.has_form(x, Form::ChannelsLastBf16) &&
      (ctx.bf16_form(y) == Form::ChannelsLastBf16 || (ctx.int8() && form == Form::Blocked && !ctx.has_form(x, Form::Blocked))))
    form = Form::ChannelsLastBf16;
  TensorRef src = ctx.input(x, form);
  // ReduceMean without keepdims yields [N, C]: pool straight into its plain
  // storage, which has the bytes of [N, C, 1, 1], and for whole channel
  // blocks those of the blocked [N, C, 1, 1] too (oneDNN pools blocked to
  // plain only with its reference kernel).
  const bool squeeze = ys.size() != 4;
  TensorRef dst = ctx.output(y, squeeze ? Form::Plain : form);
  // ([N, C, 1, 1] channels-last has the bytes of plain too.)
  if (squeeze)
    dst.md = form == Form::ChannelsLast                              ? md_for(y4, form)
             : y4[2] * y4[3] == 1 && y4[1] % channel_block() == 0 ? blocked_md(y4)
                                                                  : plain_md(y4);
  auto op = std::make_unique<PrimitiveOp>();
  dnnl::pooling_v2_forward::desc d(dnnl::prop_kind::forward_inference, alg, src.md, dst.md, strides, kernel, dil, pl, pr);
  dnnl::pooling_v2_forward::primitive_desc pd(d, default_attr(), ctx.engine());
  op->prim = dnnl::pooling_v2_forward(pd);
  op->name = n.label();
  op->acts[DNNL_ARG_SRC] = src;
  op->acts[DNNL_ARG_DST] = dst;
  finish(*op, pd);
  ctx.add(std::move(op));
  if (form == Form::ChannelsLast && !squeeze && ctx.is_view(y)) ctx.input(y, Form::Blocked);  // a concatenation reads blocks
}

}  // namespace vinfer::cpu
