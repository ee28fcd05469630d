// vinfer.ChannelGather (ShuffleNet's channel shuffle and the split after it,
// graph pass fuse_channel_shuffle) on blocked tensors, in one pass: each
// output channel block, pixel by pixel, a permutation of each input block
// its lanes come from (gather_blocks_*); without SIMD lane by lane.
#include <omp.h>

#include <algorithm>
#include <array>

#include "cpu/aligned.hpp"
#include "cpu/cpu_op.hpp"
#include "cpu/kernels.hpp"

namespace vinfer::cpu {
namespace {

// Where an input channel lies: which input, and its offset in one image of
// that input ((channel / block) x plane + channel % block).
struct Lane {
  int input = -1;  // -1: a padding lane (zero)
  std::int64_t offset = 0;
};

class ChannelGatherOp : public CpuOp {
 public:
  std::int64_t images = 1, pixels = 0;
  int block = 8;
  bool simd = false;
  std::vector<std::array<Lane, 16>> lanes;  // per output block
  std::vector<std::int64_t> in_image;  // floats per image, per input
  std::vector<const float*> in;
  float* out = nullptr;

  void bind(const dnnl::engine& eng, const std::function<void*(int)>& address, void* scratch) override {
    CpuOp::bind(eng, address, scratch);
    in.clear();
    for (std::size_t i = 0; i < in_image.size(); ++i)
      in.push_back(static_cast<const float*>(args.at(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)).get_data_handle()));
    out = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
  }

  // One output block of one image from the input blocks its lanes come from.
  void gather(const std::array<Lane, 16>& ls, std::int64_t image, float* y) const {
    const std::int64_t plane = pixels * block;
    const float* src[16];
    int idx[16 * 16];
    int sources = 0;
    for (int l = 0; l < block; ++l) {
      if (ls[l].input < 0) continue;
      const auto i = static_cast<std::size_t>(ls[l].input);
      const float* base = in[i] + image * in_image[i] + ls[l].offset / plane * plane;
      int s = 0;
      while (s < sources && src[s] != base) ++s;
      if (s == sources) {
        src[sources++] = base;
        std::fill_n(idx + s * block, block, -1);
      }
      idx[s * block + l] = static_cast<int>(ls[l].offset % plane);
    }
    if (block == 16) gather_blocks_avx512(src, idx, sources, y, pixels);
    else gather_blocks_avx2(src, idx, sources, y, pixels);
  }

  void execute(dnnl::stream&) override {
    const std::int64_t blocks = static_cast<std::int64_t>(lanes.size()), plane = pixels * block, rows = images * blocks;
#pragma omp parallel for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {  // each (image, block) plane: one contiguous run of the output
      const std::int64_t image = r / blocks;
      const std::array<Lane, 16>& ls = lanes[static_cast<std::size_t>(r % blocks)];
      float* y = out + r * plane;
      if (simd) {
        gather(ls, image, y);
        continue;
      }
      for (int l = 0; l < block; ++l) {
        const auto i = static_cast<std::size_t>(std::max(0, ls[l].input));
        const float* x = ls[l].input < 0 ? nullptr : in[i] + image * in_image[i] + ls[l].offset;
        for (std::int64_t p = 0; p < pixels; ++p) y[p * block + l] = x ? x[p * block] : 0.f;
      }
    }
  }
};

}  // namespace

void build_channel_gather(BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& ys = g.value(n.outputs[0]).shape;
  auto op = std::make_unique<ChannelGatherOp>();
  op->block = channel_block();
  op->simd = simd_block_runs(op->block);
  op->images = ys[0], op->pixels = ys[2] * ys[3];
  std::vector<std::int64_t> first;  // each input's first channel in the concatenation
  std::int64_t total = 0;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    first.push_back(total);
    total += g.value(n.inputs[i]).shape[1];
    const TensorRef t = ctx.input(n.inputs[i], Form::Blocked);
    op->in_image.push_back(static_cast<std::int64_t>(t.md.get_size() / sizeof(float)) / ys[0]);
    op->acts[DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i)] = t;
  }
  const std::vector<std::int64_t> channels = n.get_ints("channels");
  op->lanes.resize(static_cast<std::size_t>((ys[1] + op->block - 1) / op->block));
  for (std::size_t j = 0; j < channels.size(); ++j) {
    const auto i = static_cast<std::size_t>(std::upper_bound(first.begin(), first.end(), channels[j]) - first.begin() - 1);
    const std::int64_t k = channels[j] - first[i];
    op->lanes[j / static_cast<std::size_t>(op->block)][j % static_cast<std::size_t>(op->block)] =
        Lane{static_cast<int>(i), k / op->block * op->pixels * op->block + k % op->block};
  }
  op->acts[DNNL_ARG_DST] = ctx.output(n.outputs[0], Form::Blocked);
  op->name = n.label();
  op->impl = op->simd ? (op->block == 16 ? "vinfer:channel_gather_avx512" : "vinfer:channel_gather_avx2") : "vinfer:channel_gather";
  ctx.add(std::move(op));
}

}  // namespace vinfer::cpu
