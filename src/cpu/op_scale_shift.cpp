// vinfer.ScaleShift (an inference BatchNormalization that could not be folded
// into a convolution, e.g. DenseNet's pre-activation on the concatenation)
// with its fused post-ops. vinfer's own kernel: one pass, y = act(x * s + b).
#include <algorithm>
#include <cmath>
#include <cstring>

#include <omp.h>

#include "cpu/cpu_op.hpp"
#include "cpu/kernels.hpp"
#include "util/cpu_features.hpp"

namespace vinfer::cpu {
namespace {

class ScaleShiftOp : public CpuOp {
 public:
  std::vector<float> scale, shift;  // padded to whole channel blocks with zeros
  std::int64_t channels = 0, inner = 0, outer = 0;  // [outer, channels, inner] (plain) or blocks (blocked)
  std::int64_t src_image = 0;  // channels-last outputs: floats from one image of src to the next (a view's step)
  bool blocked = false;
  std::int64_t block = 8;
  std::vector<PostOp> post;
  float* src = nullptr;
  float* dst = nullptr;
  std::uint16_t* dst_bf16 = nullptr;  // bf16_out: dst in bfloat16 (16-channel blocks, at most a ReLU)
  bool bf16_out = false, bf16_channels_last = false;  // (then written in blocks, or channels-last)
  // int8_out: dst channels-last in 8-bit integers (quantize()'s rule: 16-channel blocks, at most a ReLU)
  bool int8_out = false, is_unsigned = true;
  float inv_scale = 1.f;
  const float* sum = nullptr;

  void bind(const dnnl::engine& eng, const std::function<void*(int)>& address, void* scratch) override {
    CpuOp::bind(eng, address, scratch);
    src = static_cast<float*>(args.at(DNNL_ARG_SRC).get_data_handle());
    dst = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
    dst_bf16 = static_cast<std::uint16_t*>(args.at(DNNL_ARG_DST).get_data_handle());
    auto it = args.find(DNNL_ARG_SRC_1);
    if (it != args.end()) sum = static_cast<const float*>(it->second.get_data_handle());
  }

  void execute(dnnl::stream&) override {
    const std::int64_t nb = (channels + block - 1) / block;
    if (int8_out || bf16_channels_last) {
      // Channels-last output: a few pixels at a time through every block, so
      // that each pixel's row is written whole (block by block it was written
      // in 16-channel pieces far apart: DenseNet121's pre-activations on AMX
      // 1.71 -> 0.98 ms in bfloat16, 1.52 -> 0.72 in int8).
      constexpr std::int64_t kPixels = 16;
      const std::int64_t tiles = (inner + kPixels - 1) / kPixels;
#pragma omp parallel for schedule(static)
      for (std::int64_t t = 0; t < outer * tiles; ++t) {
        const std::int64_t o = t / tiles, p0 = (t % tiles) * kPixels, n = std::min(kPixels, inner - p0);
        for (std::int64_t b = 0; b < nb; ++b) {
          const std::int64_t c = b * 16;
          const float* x = src + o * src_image + (b * inner + p0) * 16;
          const std::int64_t y = (o * inner + p0) * channels + c;
          const int count = static_cast<int>(std::min<std::int64_t>(16, channels - c));
          const float* sc = &scale[static_cast<std::size_t>(c)];
          const float* sh = &shift[static_cast<std::size_t>(c)];
          if (int8_out)
            scale_shift_blocked16_quantize_avx512(x, reinterpret_cast<std::int8_t*>(dst) + y, n, channels, count, sc, sh, !post.empty(),
                                                  inv_scale, is_unsigned);
          else
            scale_shift_blocked16_bf16_avx512(x, dst_bf16 + y, n, channels, count, sc, sh, !post.empty());
        }
      }
      return;
    }
    // Rows of `inner` contiguous values that share one channel (plain), or
    // blocks of `block` channels x spatial (blocked).
    const std::int64_t rows = blocked ? outer * nb : outer * channels;
    const std::int64_t row_len = blocked ? inner * block : inner;
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t c = blocked ? (r % nb) * block : r % channels;
      const std::size_t off = static_cast<std::size_t>(r * row_len);
      if (bf16_out) {
        scale_shift_blocked16_bf16_avx512(src + off, dst_bf16 + off, inner, 16, 16, &scale[static_cast<std::size_t>(c)],
                                          &shift[static_cast<std::size_t>(c)], !post.empty());
      } else if (blocked) {
        scale_shift_blocked(src + off, dst + off, inner, static_cast<int>(block), &scale[static_cast<std::size_t>(c)], &shift[static_cast<std::size_t>(c)], post,
                           sum ? sum + off : nullptr);
      } else {
        scale_shift_row(src + off, dst + off, inner, scale[static_cast<std::size_t>(c)], shift[static_cast<std::size_t>(c)], post,
                        sum ? sum + off : nullptr);
      }
    }
    // Padded channels of the last block must stay zero for the next layer.
    if (blocked && !bf16_out && channels % block != 0) {  // (bf16_out: 0 x 0 + 0, ReLU'd, is 0)
      for (std::int64_t o = 0; o < outer; ++o) {
        float* blk = dst + ((o * nb + nb - 1) * inner) * block;
        for (std::int64_t i = 0; i < inner; ++i) std::fill(blk + i * block + channels % block, blk + (i + 1) * block, 0.f);
      }
    }
  }
};

}  // namespace

const Node* sole_reader_pre_activation(const BuildContext& ctx, int value) {
  const Graph& g = ctx.graph();
  const Node* s = ctx.producer(value);
  if (!s || s->op != "vinfer.ScaleShift" || g.is_output(value) || ctx.consumers(value).size() != 1 ||
      !g.constant(s->inputs[1]) || !g.constant(s->inputs[2]))
    return nullptr;
  if (s->post_ops.size() > 1 || (s->post_ops.size() == 1 && s->post_ops[0].kind != PostOp::Relu)) return nullptr;
  return s;
}

void build_scale_shift(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& s = g.value(n.inputs[0]).shape;
  const TensorData* sc = g.constant(n.inputs[1]);
  const TensorData* sh = g.constant(n.inputs[2]);
  if (!sc || !sh) unsupported(n, "non-constant scale or shift");
  if (s.size() < 2) unsupported(n, "an input without channels");
  auto op = std::make_unique<ScaleShiftOp>();
  op->blocked = s.size() == 4;
  op->channels = s[1];
  op->outer = s[0];
  op->inner = numel(s) / (s[0] * s[1]);
  op->block = channel_block();
  const std::size_t padded = static_cast<std::size_t>((s[1] + op->block - 1) / op->block * op->block);
  op->scale.assign(padded, 0.f);
  op->shift.assign(padded, 0.f);
  std::copy(sc->f.begin(), sc->f.end(), op->scale.begin());
  std::copy(sh->f.begin(), sh->f.end(), op->shift.begin());
  op->post = n.post_ops;
  const Form form = op->blocked ? Form::Blocked : Form::Plain;
  // With Precision::BF16, a normalization that only convolutions read (DenseNet's
  // pre-activations) writes their bfloat16 input itself, in blocks or
  // channels-last (AMX): no conversion pass (on AMX those had taken 1.2 of
  // DenseNet121's 6.5 ms).
  const bool relu_at_most = op->post.empty() || (op->post.size() == 1 && op->post[0].kind == PostOp::Relu);
  const Form bf16_form = ctx.bf16_form(n.outputs[0]);
  op->bf16_out = op->blocked && op->block == 16 && is_bf16(bf16_form) && detail::cpu_features().avx512_bf16 && relu_at_most;
  op->bf16_channels_last = op->bf16_out && bf16_form == Form::ChannelsLastBf16;
  // With Precision::INT8, one that only int8 convolutions read writes their
  // quantized channels-last input (no float32 pass in between).
  op->int8_out = op->blocked && op->block == 16 && ctx.int8() && ctx.int8_value(n.outputs[0]) && relu_at_most;
  const Form out_form = op->bf16_out ? bf16_form : op->int8_out ? ctx.int8_form(n.outputs[0]) : form;
  op->inv_scale = 1.f / ctx.int8_scale(n.outputs[0]);
  op->is_unsigned = out_form == Form::ChannelsLastU8;
  // (A channels-last output is written a few pixels at a time from blocks
  // read where they lie: in a concatenation at batch > 1, a slice of each image.)
  const bool channels_last = op->int8_out || op->bf16_channels_last;
  op->acts[DNNL_ARG_SRC] = channels_last ? ctx.input_images(n.inputs[0]) : ctx.input(n.inputs[0], form);
  const std::size_t step = op->acts[DNNL_ARG_SRC].image_bytes;
  op->src_image = step ? static_cast<std::int64_t>(step / sizeof(float)) : (op->channels + 15) / 16 * 16 * op->inner;
  op->acts[DNNL_ARG_DST] = ctx.output(n.outputs[0], out_form);
  for (const PostOp& p : n.post_ops)
    if (p.kind == PostOp::Sum) op->acts[DNNL_ARG_SRC_1] = ctx.input(p.sum_input, form);
  op->name = n.label();
  op->impl = op->bf16_out   ? "vinfer:scale_shift_bf16_avx512"
             : op->int8_out ? "vinfer:scale_shift_quantize_avx512"
                            : "vinfer:scale_shift";
  ctx.add(std::move(op));
}

}  // namespace vinfer::cpu
