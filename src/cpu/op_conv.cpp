// Conv -> oneDNN convolution, weights packed once into the layout the
// implementation chose, bias and post-ops (activations, residual add) fused.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "cpu/conv1x1.hpp"
#include "cpu/cpu_op.hpp"
#include "cpu/group_conv.hpp"
#include "cpu/tune.hpp"
#include "cpu/winograd.hpp"
#include "cpu/winograd_u8.hpp"
#include "cpu/conv_chain.hpp"
#include "graph/op_params.hpp"
#include "util/cpu_features.hpp"
#include "util/debug_env.hpp"

namespace vinfer::cpu {
namespace {

// A kernel's scratch, as the op declares it (the program's shared scratchpad).
memory::desc scratch_desc(std::size_t bytes) {
  return memory::desc({static_cast<memory::dim>(bytes / sizeof(float))}, memory::data_type::f32, Tag::a);
}

// Floats from one image of a blocked tensor to the next (more than its
// size where it is a view into a concatenation).
std::size_t image_floats(const TensorRef& t, std::int64_t images) {
  return (t.image_bytes ? t.image_bytes : t.md.get_size() / static_cast<std::size_t>(images)) / sizeof(float);
}

// An op run by one of vinfer's own convolution kernels (Winograd3x3,
// Conv1x1Pre, GroupConv): its scratch is the program's shared scratchpad,
// warm from the layers before. Blocked tensors hold a batch's images one
// after another: Conv1x1Pre and GroupConv take them all (each thread's
// weights read once for all), Winograd3x3 as many at a time as it was made
// for (its geometry's images).
// What every op run by one of vinfer's kernels holds: the kernel, its
// threads, the batch's images, and (bound) the shared scratchpad.
template <class Kernel>
class KernelOp : public CpuOp {
 public:
  KernelOp(std::unique_ptr<Kernel> k, int threads, std::int64_t images)
      : kernel(std::move(k)), threads(threads), images(images) {
    scratch_md = scratch_desc(kernel->scratch_bytes(threads));
  }
  std::unique_ptr<Kernel> kernel;
  int threads;
  std::int64_t images;
  void* scratch = nullptr;
  void bind(const dnnl::engine& eng, const std::function<void*(int)>& address, void* shared_scratch) override {
    CpuOp::bind(eng, address, shared_scratch);
    scratch = shared_scratch;
  }
};

template <class Kernel>
class OwnConvOp : public KernelOp<Kernel> {
 public:
  using KernelOp<Kernel>::KernelOp;
  using KernelOp<Kernel>::kernel;
  using KernelOp<Kernel>::threads;
  using KernelOp<Kernel>::images;
  using KernelOp<Kernel>::args;
  using KernelOp<Kernel>::acts;
  using KernelOp<Kernel>::prefetch;
  using KernelOp<Kernel>::scratch;
  std::size_t src_image = 0, dst_image = 0;  // floats per image
  const float* src = nullptr;
  const float* residual = nullptr;  // acts[DNNL_ARG_SRC_1], if any, shaped as dst
  const float* scale = nullptr;     // acts[DNNL_ARG_SRC_2], if any: Conv1x1Pre's per-image input scale
  std::size_t scale_image = 0;
  float* dst = nullptr;
  void bind(const dnnl::engine& eng, const std::function<void*(int)>& address, void* shared_scratch) override {
    KernelOp<Kernel>::bind(eng, address, shared_scratch);
    src = static_cast<const float*>(args.at(DNNL_ARG_SRC).get_data_handle());
    dst = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
    auto step = [&](int arg) { return image_floats(acts.at(arg), images); };
    src_image = step(DNNL_ARG_SRC), dst_image = step(DNNL_ARG_DST);
    if (args.count(DNNL_ARG_SRC_1)) residual = static_cast<const float*>(args.at(DNNL_ARG_SRC_1).get_data_handle());
    if (args.count(DNNL_ARG_SRC_2))
      scale = static_cast<const float*>(args.at(DNNL_ARG_SRC_2).get_data_handle()), scale_image = step(DNNL_ARG_SRC_2);
    if constexpr (std::is_same_v<Kernel, Winograd3x3>) kernel->set_image_strides(src_image, dst_image);
  }
  void execute(dnnl::stream&) override {
    const std::vector<ByteSpan>* all = prefetch.empty() ? nullptr : &prefetch;
    if constexpr (std::is_same_v<Kernel, Conv1x1Pre>) {
      kernel->run(src, dst, scratch, threads, all, residual, static_cast<int>(images), src_image, dst_image, scale,
                  scale_image);
    } else if constexpr (std::is_same_v<Kernel, GroupConv>) {
      kernel->run(src, dst, scratch, threads, static_cast<int>(images), src_image, dst_image);
    } else {
      // Groups of equal size (32 images by at most 20: 16 and 16, not 20 and 12).
      const std::int64_t most = kernel->geometry().images, groups = (images + most - 1) / most;
      const std::int64_t group = (images + groups - 1) / groups;
      for (std::int64_t i = 0; i < images; i += group) {
        // The next layers' weights are fetched while the last images run.
        const std::vector<ByteSpan>* pf = prefetch.empty() || i + group < images ? nullptr : &prefetch;
        const auto k = static_cast<std::size_t>(i);
        kernel->run(src + k * src_image, dst + k * dst_image, scratch, threads, pf,
                    static_cast<int>(std::min(group, images - i)), residual ? residual + k * dst_image : nullptr);
      }
    }
  }
  std::vector<ByteSpan> weights() const override;
  // (a narrow-group convolution's weights are few: it fetches nothing ahead)
  bool prefetches() const override { return !std::is_same_v<Kernel, GroupConv>; }
};

template <>
std::vector<ByteSpan> OwnConvOp<Winograd3x3>::weights() const {
  return {{kernel->transformed_weights(), kernel->transformed_weight_bytes()}};
}
template <>
std::vector<ByteSpan> OwnConvOp<Conv1x1Pre>::weights() const {
  return {{kernel->packed_weights(), kernel->packed_weight_bytes()}};
}
template <>
std::vector<ByteSpan> OwnConvOp<GroupConv>::weights() const {
  return {{kernel->packed_weights(), kernel->packed_weight_bytes()}};
}

// An int8 3x3 run by vinfer's Winograd (winograd_u8.hpp): u8 channels-last
// in, u8 or float32 channels-last out.
class WinogradU8Op : public KernelOp<WinogradU8> {
 public:
  using KernelOp::KernelOp;
  const std::uint8_t* src = nullptr;
  void* dst = nullptr;
  void bind(const dnnl::engine& eng, const std::function<void*(int)>& address, void* shared_scratch) override {
    KernelOp::bind(eng, address, shared_scratch);
    src = static_cast<const std::uint8_t*>(args.at(DNNL_ARG_SRC).get_data_handle());
    dst = args.at(DNNL_ARG_DST).get_data_handle();
  }
  void execute(dnnl::stream&) override { kernel->run(src, dst, scratch, threads, static_cast<int>(images)); }
  std::vector<ByteSpan> weights() const override { return {{kernel->packed_weights(), kernel->packed_weight_bytes()}}; }
};

// The epilogue of a node whose post-ops are at most a residual Sum (if
// allowed, first) and then at most one Relu or Clip: the Sum's operand (or
// -1) and the clamp bounds.
bool epilogue_of(const Node& n, bool allow_sum, int& sum_input, float& lo, float& hi) {
  lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  sum_input = -1;
  std::size_t i = 0;
  if (allow_sum && !n.post_ops.empty() && n.post_ops[0].kind == PostOp::Sum) sum_input = n.post_ops[i++].sum_input;
  if (n.post_ops.size() > i + 1) return false;
  for (; i < n.post_ops.size(); ++i) {
    const PostOp& po = n.post_ops[i];
    if (po.kind == PostOp::Relu) lo = 0.f;
    else if (po.kind == PostOp::Clip) lo = po.alpha, hi = po.beta;
    else return false;
  }
  return true;
}

// Clamp bounds for a node's post-ops if they are at most one Relu or Clip.
bool clamp_of(const Node& n, float& lo, float& hi) {
  int sum_input;
  return epilogue_of(n, false, sum_input, lo, hi);
}

// The epilogue vinfer's Winograd applies for a node, if its post-ops are at
// most one function (Relu or Clip: a clamp to [lo, hi]; Swish: SiLU; with
// hard_swish, HardSwish: the 1x1 and narrow-group kernels take it) and one
// residual Sum, before or after it (sum_input: its operand, or -1).
bool own_epilogue_of(const Node& n, float& lo, float& hi, OutAct& act, Residual& residual, int& sum_input,
                     bool hard_swish = false) {
  lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  act = OutAct::Clamp, residual = Residual::None, sum_input = -1;
  bool function = false;
  for (const PostOp& po : n.post_ops) {
    if (po.kind == PostOp::Sum) {
      if (sum_input >= 0) return false;
      sum_input = po.sum_input;
      residual = function ? Residual::AfterAct : Residual::BeforeAct;
      continue;
    }
    if (function) return false;
    function = true;
    if (po.kind == PostOp::Relu) lo = 0.f;
    else if (po.kind == PostOp::Clip) lo = po.alpha, hi = po.beta;
    else if (po.kind == PostOp::Swish) act = OutAct::Swish;
    else if (po.kind == PostOp::HardSwish && hard_swish) act = OutAct::HardSwish;
    else return false;
  }
  return true;
}

// Which kernel runs a 3x3 convolution of stride 1 or 2: oneDNN's, vinfer's
// Winograd (split by tiles or by positions; stride 1: F(4,3), or F(2,3) on
// small maps), or (stride 2) vinfer's GEMM over the 3x3 windows on its 1x1
// kernel. (The values are kept in tuning caches: new ones go last.)
enum class Conv3x3 { OneDnnWinograd, OneDnnDirect, VinferTiles, VinferPositions, VinferGemm, F23Tiles, F23Positions };
bool is_onednn(Conv3x3 k) { return k == Conv3x3::OneDnnWinograd || k == Conv3x3::OneDnnDirect; }
const char* kind_name(Conv3x3 k) {
  switch (k) {
    case Conv3x3::OneDnnWinograd: return "onednn_winograd";
    case Conv3x3::OneDnnDirect: return "onednn_direct";
    case Conv3x3::VinferTiles: return "vinfer_winograd_tiles";
    case Conv3x3::VinferPositions: return "vinfer_winograd_positions";
    case Conv3x3::VinferGemm: return "vinfer_gemm";
    case Conv3x3::F23Tiles: return "vinfer_f23_tiles";
    case Conv3x3::F23Positions: return "vinfer_f23_positions";
  }
  return "?";
}

// vinfer's Winograd geometry for the node, if its kernels run the shape
// (maps of at least min_map pixels) and its post-ops (own_epilogue_of).
bool own_winograd_geometry(const Node& n, const detail::WindowParams& p, const Shape& xs, const Shape& ys, int min_map,
                           WinogradGeometry& geo) {
  float lo, hi;
  OutAct act;
  Residual residual;
  int sum_input;
  if (ys[2] * ys[3] < min_map || p.strides[0] != p.strides[1] || !own_epilogue_of(n, lo, hi, act, residual, sum_input))
    return false;
  geo.ic = static_cast<int>(xs[1]);
  geo.oc = static_cast<int>(ys[1]);
  geo.h = static_cast<int>(xs[2]);
  geo.w = static_cast<int>(xs[3]);
  geo.oh = static_cast<int>(ys[2]);
  geo.ow = static_cast<int>(ys[3]);
  geo.pad_t = static_cast<int>(p.pads_begin[0]);
  geo.pad_l = static_cast<int>(p.pads_begin[1]);
  geo.block = channel_block();
  geo.stride = static_cast<int>(p.strides[0]);
  // VINFER_WINOGRAD_STRIDE2=0: not for stride 2 (to measure what it brings).
  if (geo.stride == 2 && detail::debug_env_is(detail::DebugVar::WinogradStride2, "0")) return false;
  return Winograd3x3::supports(geo);
}

int winograd_tiles(const WinogradGeometry& g) { return Winograd3x3::tiles(g); }
double winograd_weight_mib(const WinogradGeometry& g) { return Winograd3x3::weight_bytes(g) / double(1 << 20); }

// How many of a batch's images vinfer's Winograd takes at a time: one pass
// over the transformed weights serves them all. Split by tiles, up to 1024
// tiles (its scratch does not grow with them; ResNet50 at batch 32, the
// pass: 962 ms with 256, 938 with 1024); split by positions, whose scratch
// holds all their transformed tiles, up to 256.
int fold_images(const WinogradGeometry& g, std::int64_t batch, Winograd3x3::Split split) {
  WinogradGeometry one = g;
  one.images = 1;
  const int most = split == Winograd3x3::Split::Positions ? 256 : 1024;
  return static_cast<int>(std::clamp<std::int64_t>(most / Winograd3x3::tiles(one), 1, batch));
}

// Split by tiles, each chunk of tiles streams all transformed weights (36 x
// ic x oc floats): too little work per weight on small maps when those are
// large (VGG19's 512-channel 28x28 layers had run 2.4x slower than direct).
// Split by positions, the transformed input of all tiles is kept at once
// (36 x tiles x ic floats): not for large maps; and only where the
// transformed weights reach 1 MiB, the case it is for (reading them once):
// smaller ones stay in L2 from chunk to chunk, while by positions each
// thread reads V and M rows the other wrote. DenseNet's 128 -> 32 layers
// (0.56 MiB), 2 threads, bench_conv on a Zen 4 host: 28x28 0.294 ms by
// positions against 0.109 by tiles with the weights in cache (one thread
// 0.193), 0.273 against 0.291 with them evicted, as the load-time timing
// measures; so the timing chose positions, and in the network (weights
// fetched by the ops before) those layers ran 2.5x slower.
bool tiles_split_fits(const WinogradGeometry& g) { return !(winograd_tiles(g) < 96 && winograd_weight_mib(g) > 4); }
bool positions_split_fits(const WinogradGeometry& g) { return winograd_tiles(g) <= 256 && winograd_weight_mib(g) >= 1; }

Winograd3x3::Split split_of(Conv3x3 k) {
  return k == Conv3x3::VinferPositions || k == Conv3x3::F23Positions ? Winograd3x3::Split::Positions
                                                                      : Winograd3x3::Split::Tiles;
}
bool is_f23(Conv3x3 k) { return k == Conv3x3::F23Tiles || k == Conv3x3::F23Positions; }

// The geometry of vinfer's Winograd kind k for a layer of geometry g.
WinogradGeometry form_of(WinogradGeometry g, Conv3x3 k) {
  g.out_tile = is_f23(k) ? 2 : 4;
  return g;
}

// The rule used without tuning, and the default that tuning keeps unless
// another kernel is clearly faster. No Winograd on maps under 14x14 (the
// transforms cost more than they save: DenseNet121's last block). vinfer's
// F(4,3) where oneDNN has no Winograd for the shape (none for AVX2 in 2.6;
// DenseNet121's 14x14 layers on AVX2, in the network: 2.45 vs 3.19 ms
// direct), and over oneDNN's AVX-512 F(2,3) on maps of 28x28 and more (per
// layer, in the networks on a Sapphire Rapids Xeon: DenseNet121's 56x56
// layers 0.66 vs 1.05 ms, its 28x28 ones 0.20 vs 0.24, ResNet50's 56x56 ones
// 0.47 vs 0.74; at 14x14 oneDNN's stayed faster there, as did its F(4,3) on
// VGG19's wide layers). Split by positions where the transformed weights
// exceed 1 MiB on at most 64 tiles (Winograd3x3::choose_split). onednn_impl:
// the Winograd oneDNN offered ("" for none). own: whether vinfer's runs it.
// Stride 2: vinfer's Winograd on outputs of 14x14 and more (ResNet50's
// layer2/3 firsts, alone, 2 threads, warm / evicted: 0.45 / 0.50 ms against
// oneDNN's direct 0.60 / 0.64, and 0.39 / 0.55 against the GEMM's 0.55 /
// 0.63); on 7x7 its weights, 16 of 9 taps' worth, cost more than it saves
// (layer4's: evicted 0.88 against 0.78), and there the GEMM runs if
// gemm_default (where its weights exceed 1 MiB), else oneDNN's direct.
// vinfer's F(2,3) only where VINFER_WINOGRAD=f23 asks (else the timing
// decides: tune_3x3).
Conv3x3 rule_3x3(const WinogradGeometry& g, const std::string& onednn_impl, bool own, bool gemm_default) {
  const int map = g.oh * g.ow;
  const char* env = detail::debug_env(detail::DebugVar::Winograd);
  const bool prefer = env && std::strcmp(env, "vinfer") == 0;
  const bool refuse = env && std::strcmp(env, "onednn") == 0;
  const bool by_tiles = Winograd3x3::choose_split(g) == Winograd3x3::Split::Tiles;
  const Conv3x3 own_kind = by_tiles ? Conv3x3::VinferTiles : Conv3x3::VinferPositions;
  if (g.stride == 1 && own && env && std::strcmp(env, "f23") == 0)  // only when asked: the timing chooses it
    return Winograd3x3::choose_split(form_of(g, Conv3x3::F23Tiles)) == Winograd3x3::Split::Tiles ? Conv3x3::F23Tiles
                                                                                                  : Conv3x3::F23Positions;
  if (g.stride == 2) {
    if (own && !refuse && (map >= 14 * 14 || prefer) && (!by_tiles || tiles_split_fits(g))) return own_kind;
    return gemm_default ? Conv3x3::VinferGemm : Conv3x3::OneDnnDirect;
  }
  const Conv3x3 onednn = onednn_impl.empty() || map < 14 * 14 ? Conv3x3::OneDnnDirect : Conv3x3::OneDnnWinograd;
  const bool beats_onednn =
      (onednn_impl.empty() && map >= 14 * 14) || (onednn_impl.find("wino_2x3") != std::string::npos && map >= 28 * 28);
  if (!own || map < 14 * 14 || refuse || (!beats_onednn && !prefer)) return onednn;
  if (by_tiles && !tiles_split_fits(g)) return onednn;
  return own_kind;
}

// A tensor for timing kernels at load, 64-byte aligned as the arena's are
// (a std::vector's 16 bytes made every vector load straddle two cache
// lines: vinfer's depthwise kernel ran 1.4x slower on some loads).
struct TimingTensor {
  explicit TimingTensor(std::size_t floats) : n(floats), block(aligned_block(floats * sizeof(float))) {}
  float* data() const { return static_cast<float*>(block.get()); }
  std::size_t size() const { return n; }
  std::size_t n;
  Block block;
};

// Times the candidates for the layer on its own shape (tune.hpp), each with
// its weights evicted from the caches and its input warm, as in the network,
// and returns the fastest: the rule's choice unless another is faster by
// more than 3 %. onednn_wino: oneDNN's Winograd for the layer, if any;
// direct: its direct convolution; gemm: the GEMM's geometry, if it runs the
// layer. The winner's Winograd, if vinfer's, is left in `kept`.
Conv3x3 tune_3x3(BuildContext& ctx, const WinogradGeometry& g, bool own, const Conv1x1Geometry* gemm, float lo, float hi,
                 OutAct act, const TensorData& w, const TensorData* b, Conv3x3 rule,
                 const dnnl::convolution_forward::primitive_desc& onednn_wino,
                 const dnnl::convolution_forward::primitive_desc& direct, std::unique_ptr<Winograd3x3>& kept) {
  // Direct convolution does 2.25-4x the multiplications of the stride-1
  // Winograd kernels; it is worth timing only where their transforms weigh
  // (maps under 28x28) or where no Winograd runs. Timing it on VGG19's large
  // maps cost more load time than anything else. (Stride 2: 1.44x.)
  const bool direct_worth_timing = g.stride == 2 || g.oh * g.ow < 28 * 28 || (!onednn_wino && !own);
  // Stride 2: whether vinfer's Winograd runs is the rule's call, the timing
  // only chooses within each side (its split; the GEMM or direct). Timed
  // alone, ResNet50's layer4.0 ran the GEMM only 6-17 % faster than the
  // Winograd (three loads), while in the network the Winograd's 16.8 MB of
  // weights make it 30 % slower; layer3.0's Winograd won by 8-15 % alone
  // and by 10-20 % in the network. With a batch's images folded into one run
  // (fold_images), those weights are read once for all: then both sides are
  // timed.
  const auto own_kind = [](Conv3x3 k) { return !is_onednn(k) && k != Conv3x3::VinferGemm; };
  // F(2,3) (fewer multiplications than F(4,3) on 7x7 maps, where F(4,3)
  // computes 8x8; 16 / 36 of its weights) is timed on maps under 14x14. On
  // 14x14 its smaller weights won the timing (weights evicted) by a few per
  // cent in a noisy hour, while in the network, where the ops before fetch
  // them, ResNet50's layer3 3x3s ran 3.31 ms with it against 2.34-2.88 with
  // F(4,3). VINFER_WINOGRAD_F23=0: not a candidate (to measure what it brings).
  const bool f23 = own && g.stride == 1 && g.oh * g.ow < 14 * 14 && !detail::debug_env_is(detail::DebugVar::WinogradF23, "0");
  const WinogradGeometry g23 = form_of(g, Conv3x3::F23Tiles);
  std::vector<Conv3x3> kinds{rule};
  for (Conv3x3 k : {Conv3x3::OneDnnWinograd, Conv3x3::OneDnnDirect, Conv3x3::VinferTiles, Conv3x3::VinferPositions,
                    Conv3x3::VinferGemm, Conv3x3::F23Tiles, Conv3x3::F23Positions}) {
    const bool runs = k == Conv3x3::OneDnnWinograd ? static_cast<bool>(onednn_wino)
                      : k == Conv3x3::OneDnnDirect ? direct_worth_timing
                      : k == Conv3x3::VinferTiles  ? own && tiles_split_fits(g)
                      : k == Conv3x3::VinferGemm   ? gemm != nullptr
                      : k == Conv3x3::F23Tiles     ? f23 && tiles_split_fits(g23)
                      : k == Conv3x3::F23Positions ? f23 && positions_split_fits(g23)
                                                   : own && positions_split_fits(g);
    if (k != rule && runs && (g.stride == 1 || g.images > 1 || own_kind(k) == own_kind(rule))) kinds.push_back(k);
  }
  if (kinds.size() < 2) return rule;
  // The candidates are part of the key: a choice cached when they were
  // others (another version) is timed again, not reused. So is the split
  // by positions' weight form (compact_weights), which changes its time.
  const bool half = ctx.compact_weights() && g.stride == 1 &&
                    std::find(kinds.begin(), kinds.end(), Conv3x3::VinferPositions) != kinds.end();
  char key[256], images[32] = "";
  if (g.images > 1) std::snprintf(images, sizeof images, " images %d", g.images);
  int at = std::snprintf(key, sizeof key, "conv3x3 %d>%d %dx%d>%dx%d pad %d,%d block %d threads %d bias %d clamp %g,%g%s%s%s%s of",
                         g.ic, g.oc, g.h, g.w, g.oh, g.ow, g.pad_t, g.pad_l, g.block, omp_get_max_threads(), b ? 1 : 0, lo,
                         hi, act == OutAct::Swish ? " silu" : "", g.stride == 2 ? " stride 2" : "", images, half ? " half" : "");
  for (Conv3x3 k : kinds)
    if (at > 0 && at < static_cast<int>(sizeof key)) at += std::snprintf(key + at, sizeof key - at, " %d", static_cast<int>(k));
  // vinfer's Winograd kernels, one per kind (the split by positions holds its weights half transformed).
  std::vector<std::unique_ptr<Winograd3x3>> mine(kinds.size());
  std::unique_ptr<Conv1x1Pre> gemm_kernel;
  Block gemm_scratch;
  const int choice = tuned_choice(key, [&] {
    const dnnl::engine& eng = ctx.engine();
    const TimingTensor src(blocked_md({g.images, g.ic, g.h, g.w}).get_size() / sizeof(float)),
        dst(blocked_md({g.images, g.oc, g.oh, g.ow}).get_size() / sizeof(float));
    for (std::size_t i = 0; i < src.size(); ++i) src.data()[i] = 0.01f * static_cast<float>(i % 97) - 0.4f;
    const std::size_t src_bytes = src.size() * sizeof(float);
    dnnl::stream stream(eng);
    struct OneDnnRun {
      dnnl::convolution_forward prim;
      std::unordered_map<int, memory> args;
      std::vector<Block> buffers;
    };
    std::vector<OneDnnRun> prims(kinds.size());
    std::vector<TuneCandidate> runs;
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      if (is_onednn(kinds[k])) {
        const auto& pd = kinds[k] == Conv3x3::OneDnnWinograd ? onednn_wino : direct;
        OneDnnRun& r = prims[k];
        r.prim = dnnl::convolution_forward(pd);
        r.args[DNNL_ARG_SRC] = memory(pd.src_desc(), eng, src.data());
        r.args[DNNL_ARG_DST] = memory(pd.dst_desc(), eng, dst.data());
        r.args[DNNL_ARG_WEIGHTS] =
            pack_weights(eng, w, memory::desc(to_dims(w.shape), memory::data_type::f32, Tag::oihw), pd.weights_desc(),
                         r.buffers);
        if (b) r.args[DNNL_ARG_BIAS] = pack_weights(eng, *b, pd.bias_desc(), pd.bias_desc(), r.buffers);
        if (pd.scratchpad_desc().get_size() > 0) r.args[DNNL_ARG_SCRATCHPAD] = memory(pd.scratchpad_desc(), eng);
        const memory& wm = r.args[DNNL_ARG_WEIGHTS];
        runs.push_back({[&r, &stream] { r.prim.execute(stream, r.args), stream.wait(); },
                        [&, wm] { evict(wm.get_data_handle(), wm.get_desc().get_size()), touch(src.data(), src_bytes); }});
      } else if (kinds[k] == Conv3x3::VinferGemm) {
        const int threads = omp_get_max_threads();
        gemm_kernel = std::make_unique<Conv1x1Pre>(*gemm, w.f.data(), b ? b->f.data() : nullptr, PreActivation{}, lo, hi, act);
        gemm_scratch = aligned_block(gemm_kernel->scratch_bytes(threads));
        Conv1x1Pre& c = *gemm_kernel;
        const int n = g.images;
        runs.push_back({[&c, &src, &dst, &gemm_scratch, threads, n] {
                          c.run(src.data(), dst.data(), gemm_scratch.get(), threads, nullptr, nullptr, n,
                                src.size() / static_cast<std::size_t>(n), dst.size() / static_cast<std::size_t>(n));
                        },
                        [&] { evict(c.packed_weights(), c.packed_weight_bytes()), touch(src.data(), src_bytes); }});
      } else {
        mine[k] = std::make_unique<Winograd3x3>(form_of(g, kinds[k]), w.f.data(), b ? b->f.data() : nullptr, lo, hi,
                                               split_of(kinds[k]), ctx.compact_weights(), act);
        Winograd3x3* f = mine[k].get();
        runs.push_back({[f, &src, &dst] { f->run(src.data(), dst.data()); },
                        [f, &src, src_bytes] {
                          evict(f->transformed_weights(), f->transformed_weight_bytes()), touch(src.data(), src_bytes);
                        }});
      }
    }
    const TuneResult r = fastest(runs, std::max(30.0, 12 * steady_measure(runs[0].run)), 0.03);
    ctx.note_tuning(r.spent_ms);
    if (detail::debug_env_is(detail::DebugVar::TuneLog, "1")) {
      std::string line = std::string("vinfer: timed ") + key + ":";
      for (std::size_t k = 0; k < kinds.size(); ++k) {
        char t[64];
        std::snprintf(t, sizeof t, " %s %.3f ms%s", kind_name(kinds[k]), r.best_ms[k], k == 0 ? " (rule)" : "");
        line += t;
      }
      std::fprintf(stderr, "%s -> %s\n", line.c_str(), kind_name(kinds[static_cast<std::size_t>(r.choice)]));
    }
    return static_cast<int>(kinds[static_cast<std::size_t>(r.choice)]);
  }).first;
  // A choice from a cache file that is not a candidate here (another
  // version's, or an edited file) falls back to the rule.
  const auto k = std::find(kinds.begin(), kinds.end(), static_cast<Conv3x3>(choice)) != kinds.end()
                     ? static_cast<Conv3x3>(choice)
                     : rule;
  const auto chosen = static_cast<std::size_t>(std::find(kinds.begin(), kinds.end(), k) - kinds.begin());
  if (own_kind(k) && chosen < mine.size() && mine[chosen]) {
    mine[chosen]->release_scratch();  // the network runs it on the shared scratchpad
    kept = std::move(mine[chosen]);
  }
  ctx.note_choice(k != rule);
  return k;
}

// Adds vinfer's Winograd for the node (`kernel`, or one built now with
// `kind`'s split), with the residual `res` (f32 blocks) added where
// `residual` says.
void add_own_winograd(BuildContext& ctx, const Node& n, const WinogradGeometry& g, float lo, float hi, OutAct act,
                      Residual residual, const TensorRef* res, const TensorData& w, const TensorData* b, Conv3x3 kind,
                      std::unique_ptr<Winograd3x3> kernel) {
  if (!kernel) {
    WinogradGeometry fg = form_of(g, kind);
    fg.images = std::min(g.images, fold_images(fg, g.images, split_of(kind)));
    kernel = std::make_unique<Winograd3x3>(fg, w.f.data(), b ? b->f.data() : nullptr, lo, hi, split_of(kind),
                                           ctx.compact_weights(), act, res ? residual : Residual::None);
  }
  const bool by_tiles = kernel->split() == Winograd3x3::Split::Tiles, half = kernel->half_transformed();
  const int tile = kernel->geometry().out_tile;
  const std::int64_t images = ctx.graph().value(n.inputs[0]).shape[0];
  auto op = std::make_unique<OwnConvOp<Winograd3x3>>(std::move(kernel), omp_get_max_threads(), images);
  op->acts[DNNL_ARG_SRC] = ctx.input_images(n.inputs[0]);
  if (res) op->acts[DNNL_ARG_SRC_1] = *res;
  // (a residual is read with dst's image step: packed, as it is)
  op->acts[DNNL_ARG_DST] = res ? ctx.output(n.outputs[0], Form::Blocked) : ctx.output_images(n.outputs[0]);
  op->name = n.label();
  op->impl = std::string(g.stride == 2 ? "vinfer:wino_s2" : tile == 2 ? "vinfer:wino_f23" : "vinfer:wino_f43") +
             (by_tiles ? "" : "_pos") + (half ? "_half" : "") + (act == OutAct::Swish ? "_silu" : "") +
             (channel_block() == 16 ? "_avx512" : "_avx2");
  op->flops = 2.0 * g.oc * g.oh * g.ow * g.ic * 9.0 * static_cast<double>(images);
  ctx.add(std::move(op));
}

// The vinfer.ScaleShift (+ ReLU) whose output only this 1x1 convolution
// reads, if the fused kernel takes the pair; else null. Used with AVX-512
// (DenseNet121's dense layers' 1x1 convolutions with their normalization, in
// the network: 11.7 vs 12.8 ms); with AVX2 oneDNN's 1x1 plus the separate
// pass measured faster (on an AVX-512 machine limited to AVX2, blocks and
// first two transitions: 29.8 vs 25.3 ms), so there it stays.
// VINFER_CONV1X1=vinfer or =preact fuses wherever the kernel runs (to
// compare), =onednn never.
const Node* absorbable_scale_shift(const BuildContext& ctx, const Node& conv) {
  const char* env = detail::debug_env(detail::DebugVar::Conv1x1);
  const bool wanted = env ? std::strcmp(env, "vinfer") == 0 || std::strcmp(env, "preact") == 0 : channel_block() == 16;
  // (not in int8 or while recording ranges: those need the 1x1's input apart)
  if (!wanted || ctx.bf16() || ctx.int8() || ctx.recording() || conv.op != "Conv" || conv.inputs.size() < 2) return nullptr;
  const Graph& g = ctx.graph();
  const Node* s = sole_reader_pre_activation(ctx, conv.inputs[0]);
  if (!s) return nullptr;
  const Shape& xs = g.value(conv.inputs[0]).shape;
  const TensorData* w = g.constant(conv.inputs[1]);
  if (!w || xs.size() != 4 || w->shape.size() != 4) return nullptr;
  if (conv.inputs.size() > 2 && conv.inputs[2] >= 0 && !g.constant(conv.inputs[2])) return nullptr;
  float lo, hi;
  if (!detail::is_pointwise(detail::conv_params(conv, xs, w->shape), w->shape) || !clamp_of(conv, lo, hi)) return nullptr;
  Conv1x1Geometry geo;
  geo.ic = static_cast<int>(xs[1]), geo.oc = static_cast<int>(w->shape[0]), geo.hw = static_cast<int>(xs[2] * xs[3]);
  geo.block = channel_block();
  // Each block of pixels streams all weights: past 1 MiB (DenseNet's last
  // transition, 1024 -> 512) oneDNN's 1x1 plus a separate pass was faster.
  const bool small_weights = static_cast<double>(geo.ic) * geo.oc * sizeof(float) <= (1 << 20);
  return small_weights && Conv1x1Pre::supports(geo) ? s : nullptr;
}

// DenseNet's BatchNorm -> ReLU -> 1x1 convolution as one op (conv1x1.hpp):
// the normalization is applied while the convolution packs its input.
void build_preact_conv1x1(BuildContext& ctx, const Node& n, const Node& s) {
  const Graph& g = ctx.graph();
  const Shape& xs = g.value(n.inputs[0]).shape;
  const TensorData& w = *g.constant(n.inputs[1]);
  const TensorData* b = n.inputs.size() > 2 && n.inputs[2] >= 0 ? g.constant(n.inputs[2]) : nullptr;
  Conv1x1Geometry geo;
  geo.ic = static_cast<int>(xs[1]), geo.oc = static_cast<int>(w.shape[0]), geo.hw = static_cast<int>(xs[2] * xs[3]);
  geo.block = channel_block();
  PreActivation pre;
  pre.scale = g.constant(s.inputs[1])->f.data();
  pre.shift = g.constant(s.inputs[2])->f.data();
  if (!s.post_ops.empty()) pre.lo = 0.f;
  float lo, hi;
  clamp_of(n, lo, hi);
  auto op = std::make_unique<OwnConvOp<Conv1x1Pre>>(
      std::make_unique<Conv1x1Pre>(geo, w.f.data(), b ? b->f.data() : nullptr, pre, lo, hi), omp_get_max_threads(), xs[0]);
  op->acts[DNNL_ARG_SRC] = ctx.input_images(s.inputs[0]);
  op->acts[DNNL_ARG_DST] = ctx.output_images(n.outputs[0]);
  op->name = n.label();
  op->impl = channel_block() == 16 ? "vinfer:conv1x1_preact_avx512" : "vinfer:conv1x1_preact_avx2";
  op->flops = 2.0 * geo.ic * geo.oc * geo.hw * static_cast<double>(xs[0]);
  ctx.add(std::move(op));
}

// Whether vinfer's 1x1 kernel without a pre-activation (below) may run plain
// convolutions here: by default only with AVX-512; VINFER_CONV1X1=vinfer:
// wherever it runs (`anywhere`); =onednn or =preact: never.
bool plain_conv1x1_allowed(bool& anywhere) {
  const char* env = detail::debug_env(detail::DebugVar::Conv1x1);
  anywhere = env && std::strcmp(env, "vinfer") == 0;
  if (env && (std::strcmp(env, "onednn") == 0 || std::strcmp(env, "preact") == 0)) return false;
  return anywhere || channel_block() == 16;
}

// Squeeze-and-excite's x * s before a 1x1 convolution (s: [N, C, 1, 1],
// computed from the image), which the 1x1 kernel applies as it packs x.
struct ChannelScale {
  int x = -1, s = -1;
};

// Adds vinfer's 1x1 kernel (a 1x1, or a 3x3 as a GEMM over its windows) for
// the node, with the residual Sum of sum_input (or none: -1) and a clamp or
// act, reading the node's input, or cs's x scaled by its s.
void add_plain_conv1x1(BuildContext& ctx, const Node& n, const Conv1x1Geometry& geo, const TensorData& w,
                       const TensorData* b, int sum_input, float lo, float hi, OutAct act = OutAct::Clamp,
                       const ChannelScale* cs = nullptr) {
  PreActivation pre;
  pre.per_image = cs != nullptr;
  auto op = std::make_unique<OwnConvOp<Conv1x1Pre>>(
      std::make_unique<Conv1x1Pre>(geo, w.f.data(), b ? b->f.data() : nullptr, pre, lo, hi, act), omp_get_max_threads(),
      ctx.graph().value(n.inputs[0]).shape[0]);
  op->acts[DNNL_ARG_SRC] = ctx.input_images(cs ? cs->x : n.inputs[0]);
  // (s blocked: each image's scales padded to whole blocks)
  if (cs) op->acts[DNNL_ARG_SRC_2] = ctx.input(cs->s, Form::Blocked);
  if (sum_input >= 0) op->acts[DNNL_ARG_SRC_1] = ctx.input(sum_input, Form::Blocked);
  // (a residual is read with dst's image step: packed, as it is)
  op->acts[DNNL_ARG_DST] = sum_input >= 0 ? ctx.output(n.outputs[0], Form::Blocked) : ctx.output_images(n.outputs[0]);
  op->name = n.label();
  op->impl = std::string(geo.kernel == 3 ? "vinfer:conv3x3_gemm" : "vinfer:conv1x1") + (cs ? "_scaled" : "") +
             (act == OutAct::Swish ? "_silu" : "") +
             (channel_block() == 16 ? "_avx512" : "_avx2");
  op->flops = 2.0 * geo.ic * geo.kernel * geo.kernel * geo.oc * geo.hw *
              static_cast<double>(ctx.graph().value(n.inputs[0]).shape[0]);
  ctx.add(std::move(op));
}

// vinfer's 1x1 kernel without a pre-activation, with the node's residual
// Sum and clamp, if it takes the node: a 1x1 of stride 1 or 2, blocked input,
// and by default only with AVX-512 on output maps of at most 14x14 (ResNet50's
// layer3/4 and its downsampling shortcuts, DenseNet's last transitions), where
// each layer's weights are used by few pixels, so that reading them from
// memory weighs, and vinfer's kernel prefetches the next layers' weights while
// it runs; oneDNN's cannot. A 1x1 that ends in SiLU it takes on any map: there
// oneDNN's 1x1 kernel spends more time on the function than on the
// convolution (EfficientNet's expansions; with AVX2, oneDNN's was as fast).
// One that ends in HardSwish only where VINFER_CONV1X1=vinfer forces it.
bool build_plain_conv1x1(BuildContext& ctx, const Node& n, const Shape& xs, const Shape& ys, const detail::WindowParams& p,
                         const TensorData& w, const TensorData* b, Form in_form) {
  int sum_input;
  float lo, hi;
  const bool one_by_one = w.shape.size() == 4 && w.shape[2] == 1 && w.shape[3] == 1 && p.group == 1 &&
                          p.dilations == std::vector<std::int64_t>{1, 1} && p.pads_begin == std::vector<std::int64_t>{0, 0} &&
                          p.pads_end == std::vector<std::int64_t>{0, 0} && p.strides.size() == 2 &&
                          p.strides[0] == p.strides[1] && (p.strides[0] == 1 || p.strides[0] == 2);
  const bool clamp = epilogue_of(n, true, sum_input, lo, hi);
  const PostOp::Kind fn = n.post_ops.size() == 1 ? n.post_ops[0].kind : PostOp::Sum;
  const OutAct act = fn == PostOp::Swish ? OutAct::Swish : fn == PostOp::HardSwish ? OutAct::HardSwish : OutAct::Clamp;
  if (!clamp && act == OutAct::Clamp) return false;
  bool anywhere;
  if (!plain_conv1x1_allowed(anywhere) || in_form != Form::Blocked || !one_by_one) return false;
  if (act == OutAct::HardSwish && !anywhere) return false;  // (oneDNN's, unless forced: not measured against it)
  Conv1x1Geometry geo;
  geo.ic = static_cast<int>(xs[1]), geo.oc = static_cast<int>(w.shape[0]), geo.hw = static_cast<int>(ys[2] * ys[3]);
  geo.block = channel_block();
  geo.stride = static_cast<int>(p.strides[0]);
  geo.in_h = static_cast<int>(xs[2]), geo.in_w = static_cast<int>(xs[3]), geo.ow = static_cast<int>(ys[3]);
  if (!Conv1x1Pre::supports(geo) || (!anywhere && act == OutAct::Clamp && geo.hw > 14 * 14)) return false;
  add_plain_conv1x1(ctx, n, geo, w, b, sum_input, lo, hi, act);
  return true;
}

// The squeeze-and-excite Mul whose output only this 1x1 convolution reads
// (EfficientNet's, MobileNetV3's, RegNetY's projections), if vinfer's 1x1
// kernel takes the pair where it runs plain 1x1s (maps of at most 14x14
// unless VINFER_CONV1X1=vinfer): the product is then never written. (On
// EfficientNet-B0's 112x112 and 56x56 maps, where the expanded channels
// are few, oneDNN's 1x1 after the Mul was as fast.) VINFER_CONV1X1=noscale:
// never.
bool absorbable_channel_scale(const BuildContext& ctx, const Node& conv, ChannelScale& cs) {
  bool anywhere;
  if (!plain_conv1x1_allowed(anywhere) || detail::debug_env_is(detail::DebugVar::Conv1x1, "noscale") || ctx.bf16() ||
      ctx.int8() || ctx.recording() || conv.op != "Conv" || conv.inputs.size() < 2)
    return false;
  const Graph& g = ctx.graph();
  const int y = conv.inputs[0];
  const Node* m = ctx.producer(y);
  const std::vector<int>& readers = ctx.consumers(y);
  if (!m || m->op != "Mul" || m->inputs.size() != 2 || !m->post_ops.empty() || g.is_output(y) || readers.size() != 1 ||
      std::count(conv.inputs.begin(), conv.inputs.end(), y) != 1 ||
      std::any_of(conv.post_ops.begin(), conv.post_ops.end(), [&](const PostOp& p) { return p.sum_input == y; }))
    return false;
  const Shape& ys = g.value(y).shape;
  for (int i = 0; i < 2; ++i) {
    const int x = m->inputs[static_cast<std::size_t>(i)], s = m->inputs[static_cast<std::size_t>(1 - i)];
    const Shape& xs = g.value(x).shape;
    const Shape& ss = g.value(s).shape;
    if (xs == ys && ys.size() == 4 && ss == Shape{ys[0], ys[1], 1, 1} && !g.constant(x) && !g.constant(s) && x != s)
      cs = {x, s};
  }
  if (cs.x < 0) return false;
  const TensorData* w = g.constant(conv.inputs[1]);
  if (!w || w->shape.size() != 4 || (conv.inputs.size() > 2 && conv.inputs[2] >= 0 && !g.constant(conv.inputs[2])))
    return false;
  int sum_input;
  float lo, hi;
  if (!detail::is_pointwise(detail::conv_params(conv, ys, w->shape), w->shape) || !epilogue_of(conv, true, sum_input, lo, hi))
    return false;
  Conv1x1Geometry geo;
  geo.ic = static_cast<int>(ys[1]), geo.oc = static_cast<int>(w->shape[0]), geo.hw = static_cast<int>(ys[2] * ys[3]);
  geo.block = channel_block();
  return Conv1x1Pre::supports(geo) && (anywhere || geo.hw <= 14 * 14);
}

void build_scaled_conv1x1(BuildContext& ctx, const Node& n, const ChannelScale& cs) {
  const Graph& g = ctx.graph();
  const Shape& xs = g.value(cs.x).shape;
  const TensorData& w = *g.constant(n.inputs[1]);
  const TensorData* b = n.inputs.size() > 2 && n.inputs[2] >= 0 ? g.constant(n.inputs[2]) : nullptr;
  int sum_input;
  float lo, hi;
  epilogue_of(n, true, sum_input, lo, hi);
  Conv1x1Geometry geo;
  geo.ic = static_cast<int>(xs[1]), geo.oc = static_cast<int>(w.shape[0]), geo.hw = static_cast<int>(xs[2] * xs[3]);
  geo.block = channel_block();
  add_plain_conv1x1(ctx, n, geo, w, b, sum_input, lo, hi, OutAct::Clamp, &cs);
}

// A stride-2 3x3 (padding 1, blocked input) as a GEMM over its 3x3
// windows on the 1x1 kernel (im2col packing; vinfer:conv3x3_gemm): its
// geometry, if the kernel may run it (plain_conv1x1_allowed, and output maps
// of at most 14x14 unless anywhere). gemm_default: whether it is the
// default among the non-Winograd kernels: where its weights exceed 1 MiB
// (ResNet's layer3/4 firsts, 2.4 and 9.4 MB; oneDNN's direct convolution
// in the network: 0.55-0.61 and 0.67-0.79 ms, this 0.50 and 0.58-0.60).
bool gemm_3x3_geometry(const Shape& xs, const Shape& ys, const detail::WindowParams& p, const TensorData& w, Form in_form,
                       Conv1x1Geometry& geo, bool& gemm_default) {
  bool anywhere;
  if (!plain_conv1x1_allowed(anywhere) || in_form != Form::Blocked ||
      p.pads_begin != std::vector<std::int64_t>{1, 1} || p.pads_end != std::vector<std::int64_t>{1, 1} ||
      p.strides != std::vector<std::int64_t>{2, 2})
    return false;
  geo.ic = static_cast<int>(xs[1]), geo.oc = static_cast<int>(w.shape[0]), geo.hw = static_cast<int>(ys[2] * ys[3]);
  geo.block = channel_block();
  geo.stride = 2, geo.kernel = 3, geo.pad = 1;
  geo.in_h = static_cast<int>(xs[2]), geo.in_w = static_cast<int>(xs[3]), geo.ow = static_cast<int>(ys[3]);
  gemm_default = anywhere || w.numel() * sizeof(float) > (1 << 20);
  return Conv1x1Pre::supports(geo) && (anywhere || geo.hw <= 14 * 14);
}

// A grouped convolution whose groups are narrower than a channel block
// (ResNeXt's, RegNet's) on vinfer's kernel (group_conv.hpp), blocked in and
// out, with at most one function after it, in float32: its geometry, if
// the kernel takes the node. Depthwise ones 3x3 or 5x5 (5x5: AVX-512 only)
// of stride 1 or 2: with SiLU after them (EfficientNet's) always, as
// oneDNN's kernel applies SiLU slowly (bench_conv, Zen 4, 2 threads:
// EfficientNet-B0's 144 channels on 56x56 0.12 ms against 0.21-0.25, its
// 5x5s on 28x28 and 7x7 0.09 and 0.03 against 0.15 and 0.04; held to AVX2
// the 3x3s 0.15-0.17 against 0.20-0.27, the 5x5s 1.5-1.8x slower); with a
// clamp (ReLU, ReLU6) or none, `timed` is set: which kernel is faster
// depends on the shape and the CPU (Zen 4, in MNASNet: vinfer's 72
// channels on 56x56 0.038 ms against 0.058, oneDNN's 576 channels from
// 14x14 at stride 2 0.012 against 0.018), and depthwise_on_vinfer decides.
bool own_group_conv_geometry(const BuildContext& ctx, const Node& n, const Shape& xs, const Shape& ys,
                             const detail::WindowParams& p, const TensorData& w, GroupConvGeometry& geo,
                             bool& timed) {
  timed = false;
  const std::int64_t G = p.group;
  if (G <= 1 || ctx.bf16() || ctx.int8() || detail::debug_env_is(detail::DebugVar::GroupConv, "onednn") ||
      xs.size() != 4 || ys.size() != 4 || w.shape.size() != 4 || xs[1] != ys[1] || xs[1] % G != 0 ||
      w.shape[0] != ys[1] || w.shape[1] != xs[1] / G || xs[1] / G >= channel_block() || p.kernel.size() != 2 ||
      p.kernel[0] != p.kernel[1] || p.strides.size() != 2 || p.strides[0] != p.strides[1] ||
      p.dilations != std::vector<std::int64_t>{1, 1})
    return false;
  float lo, hi;
  OutAct act;
  Residual residual;
  int sum_input;
  if (!own_epilogue_of(n, lo, hi, act, residual, sum_input, true) || sum_input >= 0) return false;
  if (G == xs[1] && ((p.kernel[0] != 3 && (p.kernel[0] != 5 || channel_block() != 16)) || p.strides[0] > 2)) return false;
  timed = G == xs[1] && act != OutAct::Swish;
  geo.c = static_cast<int>(xs[1]), geo.gw = static_cast<int>(xs[1] / G);
  geo.h = static_cast<int>(xs[2]), geo.w = static_cast<int>(xs[3]);
  geo.oh = static_cast<int>(ys[2]), geo.ow = static_cast<int>(ys[3]);
  geo.k = static_cast<int>(p.kernel[0]), geo.stride = static_cast<int>(p.strides[0]);
  geo.pad_t = static_cast<int>(p.pads_begin[0]), geo.pad_l = static_cast<int>(p.pads_begin[1]);
  geo.block = channel_block();
  return GroupConv::supports(geo);
}

// Whether vinfer's kernel runs a depthwise convolution that
// own_group_conv_geometry left to timing: VINFER_GROUP_CONV=vinfer says
// yes; where the engine times kernels at load (tune.hpp), both run on the
// layer's shape (one image, its input warm as in the network) and vinfer's
// is kept if it is faster by more than 3 %; else oneDNN's.
bool depthwise_on_vinfer(BuildContext& ctx, const Node& n, const GroupConvGeometry& geo, const detail::WindowParams& p,
                         const TensorData& w, const TensorData* b) {
  if (detail::debug_env_is(detail::DebugVar::GroupConv, "vinfer")) return true;
  if (!ctx.tune()) return false;
  float lo, hi;
  OutAct act;
  Residual residual;
  int sum_input;
  own_epilogue_of(n, lo, hi, act, residual, sum_input, true);
  char key[220];
  std::snprintf(key, sizeof key, "depthwise %d %dx%d>%dx%d k %d stride %d pad %d,%d block %d threads %d bias %d %s %g,%g of 0 1",
                geo.c, geo.h, geo.w, geo.oh, geo.ow, geo.k, geo.stride, geo.pad_t, geo.pad_l, geo.block,
                omp_get_max_threads(), b ? 1 : 0, act == OutAct::HardSwish ? "hardswish" : "clamp", lo, hi);
  const int choice = tuned_choice(key, [&] {
           const dnnl::engine& eng = ctx.engine();
           const memory::desc src_md = blocked_md({1, geo.c, geo.h, geo.w}), dst_md = blocked_md({1, geo.c, geo.oh, geo.ow});
           const std::size_t src_bytes = src_md.get_size();
           const TimingTensor src_t(src_bytes / sizeof(float)), dst_t(dst_md.get_size() / sizeof(float));
           float *src = src_t.data(), *dst = dst_t.data();
           for (std::size_t i = 0; i < src_t.size(); ++i) src[i] = 0.01f * static_cast<float>(i % 97) - 0.4f;
           // oneDNN's, as build_conv would make it
           const memory::desc user_w({geo.c, 1, 1, geo.k, geo.k}, memory::data_type::f32, Tag::goihw),
               any_w(user_w.dims(), memory::data_type::f32, Tag::any), bias_md({geo.c}, memory::data_type::f32, Tag::a);
           std::vector<std::pair<int, TensorRef>> extra;
           dnnl::primitive_attr attr = default_attr();
           attr.set_post_ops(make_post_ops(ctx, n, Form::Blocked, extra));
           const memory::dims strides(p.strides.begin(), p.strides.end()), dil(p.strides.size(), 0),
               pl(p.pads_begin.begin(), p.pads_begin.end()), pr(p.pads_end.begin(), p.pads_end.end());
           const auto alg = dnnl::algorithm::convolution_direct;
           const dnnl::convolution_forward::primitive_desc pd(
               b ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, src_md, any_w, bias_md, dst_md,
                                                   strides, dil, pl, pr)
                 : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, src_md, any_w, dst_md, strides,
                                                   dil, pl, pr),
               attr, eng);
           std::vector<Block> buffers;
           std::unordered_map<int, memory> args{{DNNL_ARG_SRC, memory(pd.src_desc(), eng, src)},
                                                {DNNL_ARG_DST, memory(pd.dst_desc(), eng, dst)},
                                                {DNNL_ARG_WEIGHTS, pack_weights(eng, w, user_w, pd.weights_desc(), buffers)}};
           if (b) args[DNNL_ARG_BIAS] = pack_weights(eng, *b, bias_md, pd.bias_desc(), buffers);
           if (pd.scratchpad_desc().get_size() > 0) args[DNNL_ARG_SCRATCHPAD] = memory(pd.scratchpad_desc(), eng);
           const dnnl::convolution_forward prim(pd);
           dnnl::stream stream(eng);
           // vinfer's
           const int threads = omp_get_max_threads();
           const GroupConv mine(geo, w.f.data(), b ? b->f.data() : nullptr, lo, hi, act);
           Block scratch = aligned_block(mine.scratch_bytes(threads));
           const auto warm = [&] { touch(src, src_bytes); };
           const TuneResult r = fastest({{[&] { prim.execute(stream, args), stream.wait(); }, warm},
                                         {[&] { mine.run(src, dst, scratch.get(), threads); }, warm}},
                                        5.0, 0.03);
           ctx.note_tuning(r.spent_ms);
           if (detail::debug_env_is(detail::DebugVar::TuneLog, "1"))
             std::fprintf(stderr, "vinfer: timed %s: onednn %.3f ms, vinfer %.3f ms -> %s\n", key, r.best_ms[0], r.best_ms[1],
                          r.choice ? "vinfer" : "onednn");
           return r.choice;
         }).first;
  ctx.note_choice(choice == 1);
  return choice == 1;
}

void build_own_group_conv(BuildContext& ctx, const Node& n, const GroupConvGeometry& geo, const TensorData& w,
                          const TensorData* b) {
  float lo, hi;
  OutAct act;
  Residual residual;
  int sum_input;
  own_epilogue_of(n, lo, hi, act, residual, sum_input, true);
  const std::int64_t images = ctx.graph().value(n.inputs[0]).shape[0];
  auto op = std::make_unique<OwnConvOp<GroupConv>>(
      std::make_unique<GroupConv>(geo, w.f.data(), b ? b->f.data() : nullptr, lo, hi, act), omp_get_max_threads(), images);
  op->acts[DNNL_ARG_SRC] = ctx.input_images(n.inputs[0]);
  op->acts[DNNL_ARG_DST] = ctx.output_images(n.outputs[0]);
  op->name = n.label();
  op->impl = std::string(geo.gw == 1 ? "vinfer:depthwise" : "vinfer:group_conv") + (channel_block() == 16 ? "_avx512" : "_avx2");
  op->flops = 2.0 * geo.c * geo.gw * geo.k * geo.k * static_cast<double>(geo.oh) * geo.ow * static_cast<double>(images);
  ctx.add(std::move(op));
}

// The inverted-residual chain (conv_chain.hpp): a 1x1 expansion of stride
// 1, a depthwise convolution and a 1x1 projection of stride 1 (with a
// residual Sum or not), each reading only the one before, on vinfer's
// kernels, in float32, in one pass. The expansion's and the depthwise
// convolution's outputs stay whole tensors in the arena (read by nothing
// else). VINFER_CONV_CHAIN=0: three ops, each by its own rule.
struct ConvChainNodes {
  const Node *expand = nullptr, *dw = nullptr, *project = nullptr;
  Conv1x1Geometry ex, pr;
  GroupConvGeometry g;
};

// Whether node n is a 1x1 of stride 1 with at most a clamp or SiLU (and a
// Sum if allowed) that vinfer's 1x1 kernel takes on blocked input, and its geometry.
bool chain_conv1x1(const BuildContext& ctx, const Node& n, bool allow_sum, Conv1x1Geometry& geo) {
  const Graph& g = ctx.graph();
  if (n.op != "Conv" || n.inputs.size() < 2) return false;
  const TensorData* w = g.constant(n.inputs[1]);
  const Shape& xs = g.value(n.inputs[0]).shape;
  const Shape& ys = g.value(n.outputs[0]).shape;
  if (!w || w->shape.size() != 4 || xs.size() != 4 || ys.size() != 4 || xs[1] < channel_block()) return false;
  if (n.inputs.size() > 2 && n.inputs[2] >= 0 && !g.constant(n.inputs[2])) return false;
  const detail::WindowParams p = detail::conv_params(n, xs, w->shape);
  if (w->shape[2] != 1 || w->shape[3] != 1 || p.group != 1 || p.strides != std::vector<std::int64_t>{1, 1} ||
      p.dilations != std::vector<std::int64_t>{1, 1} || p.pads_begin != std::vector<std::int64_t>{0, 0} ||
      p.pads_end != std::vector<std::int64_t>{0, 0})
    return false;
  float lo, hi;
  OutAct act;
  Residual residual;
  int sum_input;
  if (!own_epilogue_of(n, lo, hi, act, residual, sum_input, true)) return false;
  if (sum_input >= 0 && (!allow_sum || act != OutAct::Clamp || residual != Residual::BeforeAct)) return false;
  geo = {};
  geo.ic = static_cast<int>(xs[1]), geo.oc = static_cast<int>(ys[1]), geo.hw = static_cast<int>(ys[2] * ys[3]);
  geo.block = channel_block();
  return true;
}

// The value's one reader, if it has one and is neither the output nor a view.
const Node* only_reader(const BuildContext& ctx, int value) {
  const auto& readers = ctx.consumers(value);
  if (readers.size() != 1 || ctx.graph().is_output(value) || ctx.is_view(value)) return nullptr;
  return &ctx.graph().nodes[static_cast<std::size_t>(readers[0])];
}

bool conv_chain_of(const BuildContext& ctx, const Node& a, ConvChainNodes& c) {
  // (where vinfer's plain 1x1s run: by default with AVX-512 only; with AVX2
  // the chains made MobileNetV2 and MNASNet 5 % slower, `bench_ab` at
  // VINFER_ISA=avx2 on a Zen 4)
  bool anywhere;
  if (a.op != "Conv" || ctx.bf16() || ctx.int8() || ctx.recording() || !simd_block_runs(channel_block()) ||
      detail::debug_env_is(detail::DebugVar::ConvChain, "0") || !plain_conv1x1_allowed(anywhere) ||
      !chain_conv1x1(ctx, a, false, c.ex) || absorbable_scale_shift(ctx, a) || squeeze_excite_absorbed(ctx, a))
    return false;
  if (ChannelScale cs; absorbable_channel_scale(ctx, a, cs)) return false;
  // (not after a grouped convolution: a's input is then another chain's
  // depthwise output, and a that chain's projection)
  const Node* before = ctx.producer(a.inputs[0]);
  if (before && before->op == "Conv" && before->get_int("group", 1) > 1) return false;
  const Graph& g = ctx.graph();
  c.expand = &a, c.dw = only_reader(ctx, a.outputs[0]);
  if (!c.dw || c.dw->op != "Conv" || c.dw->inputs[0] != a.outputs[0] || c.dw->inputs.size() < 2) return false;
  const TensorData* w = g.constant(c.dw->inputs[1]);
  if (!w || (c.dw->inputs.size() > 2 && c.dw->inputs[2] >= 0 && !g.constant(c.dw->inputs[2]))) return false;
  const Shape& xs = g.value(c.dw->inputs[0]).shape;
  const Shape& ys = g.value(c.dw->outputs[0]).shape;
  bool timed;
  if (w->shape.size() != 4 || xs.size() != 4 ||
      !own_group_conv_geometry(ctx, *c.dw, xs, ys, detail::conv_params(*c.dw, xs, w->shape), *w, c.g, timed))
    return false;
  c.project = only_reader(ctx, c.dw->outputs[0]);
  return c.project && c.project->inputs[0] == c.dw->outputs[0] && chain_conv1x1(ctx, *c.project, true, c.pr) &&
         ConvChain::supports(c.ex, c.g, c.pr, omp_get_max_threads());
}

// An op that runs a ConvChain.
class ConvChainOp : public KernelOp<ConvChain> {
 public:
  static constexpr int kArgExpanded = DNNL_ARG_MULTIPLE_SRC, kArgDepthwise = DNNL_ARG_MULTIPLE_SRC + 1;
  using KernelOp::KernelOp;
  ConvChainStrides strides;
  const float *x = nullptr, *residual = nullptr;
  float *e = nullptr, *d = nullptr, *y = nullptr;
  void bind(const dnnl::engine& eng, const std::function<void*(int)>& address, void* shared_scratch) override {
    KernelOp::bind(eng, address, shared_scratch);
    auto at = [&](int arg) { return static_cast<float*>(args.at(arg).get_data_handle()); };
    auto step = [&](int arg) { return image_floats(acts.at(arg), images); };
    x = at(DNNL_ARG_SRC), e = at(kArgExpanded), d = at(kArgDepthwise), y = at(DNNL_ARG_DST);
    residual = args.count(DNNL_ARG_SRC_1) ? at(DNNL_ARG_SRC_1) : nullptr;
    strides = {step(DNNL_ARG_SRC), step(kArgExpanded), step(kArgDepthwise), step(DNNL_ARG_DST)};
  }
  void execute(dnnl::stream&) override {
    kernel->run(x, e, d, y, residual, scratch, threads, static_cast<int>(images), strides,
                prefetch.empty() ? nullptr : &prefetch);
  }
  bool prefetches() const override { return true; }
  std::vector<ByteSpan> weights() const override {
    return {{kernel->expand().packed_weights(), kernel->expand().packed_weight_bytes()},
            {kernel->depthwise().packed_weights(), kernel->depthwise().packed_weight_bytes()},
            {kernel->project().packed_weights(), kernel->project().packed_weight_bytes()}};
  }
};

bool build_conv_chain(BuildContext& ctx, const Node& a) {
  ConvChainNodes c;
  if (!conv_chain_of(ctx, a, c)) return false;
  const Graph& g = ctx.graph();
  auto weights = [&](const Node& n) { return g.constant(n.inputs[1])->f.data(); };
  auto bias = [&](const Node& n) {
    return n.inputs.size() > 2 && n.inputs[2] >= 0 ? g.constant(n.inputs[2])->f.data() : nullptr;
  };
  float lo[3], hi[3];
  OutAct act[3];
  Residual residual;
  int sum_input = -1, sum_none;
  own_epilogue_of(*c.expand, lo[0], hi[0], act[0], residual, sum_none, true);
  own_epilogue_of(*c.dw, lo[1], hi[1], act[1], residual, sum_none, true);
  own_epilogue_of(*c.project, lo[2], hi[2], act[2], residual, sum_input, true);
  const std::int64_t images = g.value(a.inputs[0]).shape[0];
  auto chain = std::make_unique<ConvChain>(
      std::make_unique<Conv1x1Pre>(c.ex, weights(*c.expand), bias(*c.expand), PreActivation{}, lo[0], hi[0], act[0]),
      std::make_unique<GroupConv>(c.g, weights(*c.dw), bias(*c.dw), lo[1], hi[1], act[1]),
      std::make_unique<Conv1x1Pre>(c.pr, weights(*c.project), bias(*c.project), PreActivation{}, lo[2], hi[2], act[2]));
  auto op = std::make_unique<ConvChainOp>(std::move(chain), omp_get_max_threads(), images);
  op->acts[DNNL_ARG_SRC] = ctx.input_images(a.inputs[0]);
  op->acts[ConvChainOp::kArgExpanded] = ctx.output(a.outputs[0], Form::Blocked);
  op->acts[ConvChainOp::kArgDepthwise] = ctx.output(c.dw->outputs[0], Form::Blocked);
  // (a residual is read with dst's image step: packed, as it is)
  if (sum_input >= 0) op->acts[DNNL_ARG_SRC_1] = ctx.input(sum_input, Form::Blocked);
  const int y = c.project->outputs[0];
  op->acts[DNNL_ARG_DST] = sum_input >= 0 ? ctx.output(y, Form::Blocked) : ctx.output_images(y);
  op->name = a.label() + " > " + c.dw->label() + " > " + c.project->label();
  op->impl = std::string("vinfer:conv_chain") + (channel_block() == 16 ? "_avx512" : "_avx2");
  op->flops = 2.0 * static_cast<double>(images) *
              (static_cast<double>(c.ex.ic) * c.ex.oc * c.ex.hw + static_cast<double>(c.g.c) * c.g.k * c.g.k * c.g.oh * c.g.ow +
               static_cast<double>(c.pr.ic) * c.pr.oc * c.pr.hw);
  ctx.add(std::move(op));
  return true;
}

// Whether node n is the depthwise convolution or the projection of a chain
// that its expansion's op runs.
bool conv_chain_absorbed(const BuildContext& ctx, const Node& n) {
  if (n.op != "Conv" || n.inputs.empty()) return false;
  ConvChainNodes c;
  const Node* p = ctx.producer(n.inputs[0]);  // the expansion, if n is the depthwise convolution
  if (p && conv_chain_of(ctx, *p, c) && c.dw == &n) return true;
  const Node* pp = p && p->op == "Conv" && !p->inputs.empty() ? ctx.producer(p->inputs[0]) : nullptr;
  return pp && conv_chain_of(ctx, *pp, c) && c.project == &n;
}

}  // namespace

bool channel_scale_absorbed(const BuildContext& ctx, const Node& mul) {
  const std::vector<int>& readers = ctx.consumers(mul.outputs[0]);
  ChannelScale cs;
  return readers.size() == 1 && absorbable_channel_scale(ctx, ctx.graph().nodes[static_cast<std::size_t>(readers[0])], cs);
}

bool scale_shift_absorbed(const BuildContext& ctx, const Node& scale_shift) {
  const std::vector<int>& readers = ctx.consumers(scale_shift.outputs[0]);
  if (readers.size() != 1) return false;
  const Node& reader = ctx.graph().nodes[static_cast<std::size_t>(readers[0])];
  return absorbable_scale_shift(ctx, reader) == &scale_shift || pool_absorbable_scale_shift(ctx, reader) == &scale_shift;
}

namespace {

// Layouts, where oneDNN 2.6 has fast kernels (else only its reference one,
// 100-1000x slower; measured per shape, `vinfer profile` names the
// implementation). A convolution reading fewer channels than a block (the
// network's image) reads the plain tensor: a block padded from 3 channels
// gets the reference kernel. A grouped one whose groups are not whole
// blocks (ResNeXt, RegNet; depthwise ones excepted) runs channels-last in
// and out. Every other reads and writes blocks, also where the channel
// count is not a whole number of blocks (the padded lanes are zero).
// Precision::BF16 (conv_input_form) reads plain or blocked input in
// bfloat16 instead.
struct ConvLayout {
  Form in, out;
};
ConvLayout conv_layout(const Shape& xs, const Shape& ys, std::int64_t groups) {
  const std::int64_t blk = channel_block();
  const bool depthwise = groups > 1 && groups == xs[1] && groups == ys[1];
  const bool split_groups = groups > 1 && !depthwise && ((xs[1] / groups) % blk != 0 || (ys[1] / groups) % blk != 0);
  if (split_groups) return {Form::ChannelsLast, Form::ChannelsLast};
  return {xs[1] < blk ? Form::Plain : Form::Blocked, Form::Blocked};
}

}  // namespace

// oneDNN's bfloat16 kernels (float32 accumulation, bias and post-ops) run
// every convolution that reads plain or blocked input, except the stride-1
// 3x3s that vinfer's float32 Winograd runs: on maps of 28x28 and more, and
// of 14x14 with 256 x 256 channels and more, its 4x fewer multiplications
// beat bfloat16's 2x faster ones (2 threads, Zen 4, in the network:
// DenseNet121's 56x56 layers 0.37-0.40 ms against 0.49, its 28x28 ones 0.10
// against 0.12, VGG19's 14x14 ones 1.63-1.70 against 2.00-2.02, while
// DenseNet121's narrow 14x14 ones ran 0.032 in bfloat16 against 0.036, and
// ResNet50's 7x7 ones 0.52-0.56 against 0.70-0.76; VGG19 all in bfloat16
// ran 95 ms against float32's 70).
Form conv_input_form(const BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  const Shape& xs = g.value(n.inputs[0]).shape;
  const TensorData* w = n.inputs.size() > 1 ? g.constant(n.inputs[1]) : nullptr;
  if (!w || xs.size() != 4 || w->shape.size() != 4) return Form::Plain;
  const detail::WindowParams p = detail::conv_params(n, xs, w->shape);
  const Shape& ys = g.value(n.outputs[0]).shape;
  const ConvLayout lay = conv_layout(xs, ys, p.group);
  // Precision::INT8 with native bfloat16: a convolution that stays out of
  // int8 (the first on AMX, or with a calibration that has no range for its
  // input: conv_int8) runs in bfloat16 if its kernel is large. ResNet50's
  // 7x7 stride 2: on AMX 0.24 ms against float32's 0.68, its int8 error
  // 1.53e-2 of the largest logit against 1.75e-2 (3 photos); on Zen 4
  // (AVX512_BF16) 0.69 against 1.04, the pass 3-4 % faster (DenseNet121
  // too), error 1.52e-2 against 1.63e-2 (DenseNet121 2.09e-2 against
  // 2.04e-2). VGG19's 3x3 would save 0.33 ms on AMX (0.54 + 0.2 to quantize
  // its bfloat16 output, against 0.52 + 0.56 for oneDNN's reorder of
  // float32 blocks), but raised its int8 error from 4.5e-2 to 6.0e-2: it
  // stays float32.
  if (ctx.int8() && detail::cpu_features().avx512_bf16 && p.group == 1 && !conv_int8(ctx, n) &&
      (xs[1] >= 16 || p.kernel[0] * p.kernel[1] >= 25))
    return Form::ChannelsLastBf16;
  if (!ctx.bf16() || lay.in == Form::ChannelsLast) return lay.in;
  // With AMX: channels-last for every ungrouped convolution (AMX's are 9x
  // the AVX-512 bfloat16 kernels on a 1x1, and beat Winograd everywhere);
  // grouped ones stay in blocks (no AMX kernel for them). (VGG19's first
  // in float32 ran as fast with the conversion of its output, and gave a
  // larger error on the test photos: 9.8e-3 of the largest logit against 8.6e-3.)
  if (amx_bf16() && p.group == 1) return Form::ChannelsLastBf16;
  if (lay.in == Form::Plain) return Form::PlainBf16;
  WinogradGeometry geo;
  const bool winograd = ctx.winograd() && p.group == 1 && p.kernel == std::vector<std::int64_t>{3, 3} &&
                        p.strides == std::vector<std::int64_t>{1, 1} && p.dilations == std::vector<std::int64_t>{1, 1} &&
                        own_winograd_geometry(n, p, xs, ys, xs[1] * ys[1] >= 256 * 256 ? 14 * 14 : 28 * 28, geo);
  return winograd ? Form::Blocked : Form::BlockedBf16;
}

bool conv_int8_candidate(const BuildContext& ctx, const Node& n) {
  const Graph& g = ctx.graph();
  if (n.inputs.size() < 2) return false;
  const Shape& xs = g.value(n.inputs[0]).shape;
  const TensorData* w = g.constant(n.inputs[1]);
  if (!w || xs.size() != 4 || w->shape.size() != 4) return false;
  if (n.inputs.size() > 2 && n.inputs[2] >= 0 && !g.constant(n.inputs[2])) return false;
  return n.get_int("group", 1) == 1;
}

// The first convolution (fewer input channels than a block: the image) runs
// in int8 too where the calibration has its input's range, except on AMX,
// whose bfloat16 kernel runs it in a third of float32's time (its int8
// tiles would be mostly padding). Zen 4 (VNNI, no AMX), against the
// bfloat16 stem: ResNet50's 7x7 at batch 32 14.0 ms with the image's
// quantization 1.3, against 22.6 + 0.7 + the bfloat16 max pool's 2.4 and
// the quantization after it 0.5; VGG19's 3x3 17.2 + 1.3 against float32's
// 28.0 + 13.3 to quantize its output (the image's 8-bit pixels lose little
// to an 8-bit scale: logit error on the three photos ResNet50 1.54e-2 of the
// largest against 1.60e-2, DenseNet121 2.18e-2 against 2.09e-2, VGG19
// 5.24e-2 against 4.83e-2). Calibration records the range on every CPU.
bool conv_int8(const BuildContext& ctx, const Node& n) {
  return ctx.int8() && conv_int8_candidate(ctx, n) && ctx.int8_range(n.inputs[0]) && ctx.int8_weight_scales(n) &&
         (ctx.graph().value(n.inputs[0]).shape[1] >= channel_block() || !amx_bf16());
}

namespace {

// Whether the residual operand of `conv` exists in bfloat16 channels-last
// only: its output is then written so too, whoever reads it, so that the
// add accumulates in place (oneDNN's AMX 1x1 kernel takes nothing else).
bool sums_bf16_only(const BuildContext& ctx, const Node& conv) {
  return std::any_of(conv.post_ops.begin(), conv.post_ops.end(), [&](const PostOp& p) {
    return p.kind == PostOp::Sum && ctx.has_form(p.sum_input, Form::ChannelsLastBf16) && !ctx.has_form(p.sum_input, Form::ChannelsLast);
  });
}

// Whether every reader of `value` is an int8 convolution that reads it as
// its input, or a max pool whose output only such convolutions read.
bool int8_input_only(const BuildContext& ctx, int value) {
  const Graph& g = ctx.graph();
  const auto& readers = ctx.consumers(value);
  return !readers.empty() && !g.is_output(value) && !ctx.is_view(value) && std::all_of(readers.begin(), readers.end(), [&](int r) {
    const Node& n = g.nodes[static_cast<std::size_t>(r)];
    if (n.op == "MaxPool") return ctx.int8_value(n.outputs[0]);
    return n.op == "Conv" && conv_int8(ctx, n) && n.inputs[0] == value &&
           std::none_of(n.post_ops.begin(), n.post_ops.end(), [&](const PostOp& p) { return p.kind == PostOp::Sum && p.sum_input == value; });
  });
}

// A convolution's channels-last output that is a view into a concatenation,
// written into its place there.
void channels_last_into_view(BuildContext& ctx, int value) {
  const TensorRef from = ctx.input(value, Form::ChannelsLast);
  if (!channels_last_into_blocks_fits(from.md)) {
    ctx.input(value, Form::Blocked);
    return;
  }
  ctx.add(make_channels_last_into_blocks(from, ctx.output_images(value),
                                         "into concatenation '" + ctx.graph().value(value).name + "'"));
}

// With AVX512_BF16 (AMX or not), the output of an int8 convolution that
// only int8 convolutions read, as their input or as their residual operand
// (ResNet's residual stream), is kept in bfloat16 rather than float32: half
// the bytes to write, add and quantize again. So is one whose own residual
// operand is in bfloat16 (the stream's last: the add then stays in place).
// (Zen 4, ResNet50 at batch 32: 368 -> 338 ms; batch 1 unchanged; logit
// error on the three photos 1.60e-2 of the largest against 1.52e-2.)
bool int8_residual_bf16(const BuildContext& ctx, const Node& conv) {
  const Graph& g = ctx.graph();
  const int value = conv.outputs[0];
  if (!detail::cpu_features().avx512_bf16 || g.value(value).shape.size() != 4 || g.is_output(value) ||
      ctx.is_view(value))
    return false;
  if (sums_bf16_only(ctx, conv)) return true;
  const auto& readers = ctx.consumers(value);
  return !readers.empty() && std::all_of(readers.begin(), readers.end(), [&](int r) {
    const Node& n = g.nodes[static_cast<std::size_t>(r)];
    const bool operand =
        std::any_of(n.post_ops.begin(), n.post_ops.end(), [&](const PostOp& p) { return p.kind == PostOp::Sum && p.sum_input == value; });
    return n.op == "Conv" && conv_int8(ctx, n) && (n.inputs[0] == value || operand) &&
           std::count(n.inputs.begin() + 1, n.inputs.end(), value) == 0;
  });
}

// Whether `conv` (ResNet's last convolution of a block: a Sum then a ReLU)
// writes the residual stream in u8, accumulating in place over its
// operand's 8-bit form, as NNCF-quantized OpenVINO models do: no bfloat16
// stream and no quantization of it for the next block. That form is the u8
// one the block's first convolution read (an identity shortcut), or the s8
// or u8 one its producer, an int8 convolution with at most a ReLU that only
// `conv` reads, writes for it (a projection shortcut: the other branch's
// last convolution). It needs the ranges of both values, no reader of the
// operand after it, and every reader of its output to be an int8
// convolution reading it as its input, or as its residual operand where
// that one writes the stream too.
// (Zen 4, ResNet50, the builds taking turns: identity shortcuts batch 32
// 0.958 of the pass [0.549-0.983], batch 1 0.967 [0.846-0.997]; projection
// ones then batch 32 0.981 [0.964-0.998]; 2 quantizations of the stream
// left of 16, into the last two blocks; logit error on the three photos
// 1.63e-2 of the largest against 1.54e-2 without either, OpenVINO's 1.70e-2.)
bool int8_stream(const BuildContext& ctx, const Node& conv) {
  const Graph& g = ctx.graph();
  const int y = conv.outputs[0];
  if (conv.post_ops.size() != 2 || conv.post_ops[0].kind != PostOp::Sum || conv.post_ops[1].kind != PostOp::Relu ||
      !conv_int8(ctx, conv))
    return false;
  const int r = conv.post_ops[0].sum_input;
  const ActivationRange* rr = ctx.int8_range(r);
  const ActivationRange* ry = ctx.int8_range(y);
  if (!rr || !ry || ry->min < 0 || g.is_output(y) || ctx.is_view(y) || g.is_output(r) || ctx.is_view(r) ||
      g.value(r).shape != g.value(y).shape || r == conv.inputs[0])
    return false;
  const auto& nodes = g.nodes;
  const auto at = static_cast<std::size_t>(ctx.producer(y) - nodes.data());
  const auto& r_readers = ctx.consumers(r);
  // (the 8-bit form to write over: its producer's, written for `conv`
  // alone, or the u8 one made for an int8 convolution that read it before)
  const Node* made = ctx.producer(r);
  const bool written = made && made->op == "Conv" && r_readers.size() == 1 && conv_int8(ctx, *made) &&
                       (made->post_ops.empty() || (made->post_ops.size() == 1 && made->post_ops[0].kind == PostOp::Relu));
  const bool read_before =
      rr->min >= 0 &&
      std::none_of(r_readers.begin(), r_readers.end(), [&](int k) { return static_cast<std::size_t>(k) > at; }) &&
      std::any_of(r_readers.begin(), r_readers.end(), [&](int k) {
        const Node& m = nodes[static_cast<std::size_t>(k)];
        return static_cast<std::size_t>(k) < at && m.op == "Conv" && m.inputs[0] == r && conv_int8(ctx, m);
      });
  if (!written && !read_before) return false;
  const auto& readers = ctx.consumers(y);
  return !readers.empty() && std::all_of(readers.begin(), readers.end(), [&](int k) {
    const Node& n = nodes[static_cast<std::size_t>(k)];
    if (n.op != "Conv" || std::count(n.inputs.begin() + 1, n.inputs.end(), y) != 0) return false;
    const bool operand = !n.post_ops.empty() && n.post_ops[0].kind == PostOp::Sum && n.post_ops[0].sum_input == y;
    return operand ? n.inputs[0] != y && int8_stream(ctx, n) : n.inputs[0] == y && conv_int8(ctx, n);
  });
}

// Whether `conv`'s output is the operand that a convolution writing the
// stream accumulates over in its 8-bit form (int8_stream).
bool int8_stream_operand(const BuildContext& ctx, const Node& conv) {
  const auto& readers = ctx.consumers(conv.outputs[0]);
  if (readers.size() != 1) return false;
  const Node& n = ctx.graph().nodes[static_cast<std::size_t>(readers[0])];
  return n.op == "Conv" && !n.post_ops.empty() && n.post_ops[0].kind == PostOp::Sum &&
         n.post_ops[0].sum_input == conv.outputs[0] && int8_stream(ctx, n);
}

// Whether vinfer's int8 Winograd (winograd_u8.hpp) runs the convolution:
// a 3x3 of stride 1 and padding 1 on maps of 14x14 or more, u8 input,
// at most a ReLU after it, written in u8 or float32, channels multiples
// of 32, on a CPU with AVX-512 VNNI but not AMX (whose int8 tiles run
// oneDNN's direct kernels at several times VNNI's rate). Its transforms'
// work per tile grows with ic + oc, the multiplications it saves with
// ic x oc: with fewer than 128 channels on either side (64 -> 64, 64 ->
// 128, 128 -> 32) oneDNN's direct kernel stays as fast or faster.
// (Zen 4, 2 threads, bench/bench_conv's Int8 pairs, oneDNN's against
// this: 64 -> 64 on 224x224 4.4 against 4.7 ms, 64 -> 128 on 112x112 2.2
// against 2.4, 128 -> 32 on 56x56 0.26 against 0.26; 128 -> 128 on 28x28
// 0.28 against 0.19, 256 -> 256 on 56x56 4.1 against 2.4, 512 -> 512 on
// 28x28 4.0 against 2.4, on 14x14 0.99 against 0.56.)
bool int8_winograd_geometry(const detail::WindowParams& p, const Shape& xs, const TensorData& w,
                            Form src_form, Form dst_form, bool relu_only, WinogradU8Geometry& geo) {
  if (detail::debug_env_is(detail::DebugVar::WinogradInt8, "0") || amx_bf16() || !relu_only || src_form != Form::ChannelsLastU8 ||
      (dst_form != Form::ChannelsLastU8 && dst_form != Form::ChannelsLast))
    return false;
  const std::vector<std::int64_t> one{1, 1}, pad{1, 1};
  if (w.shape[2] != 3 || w.shape[3] != 3 || p.strides != one || p.dilations != one || p.pads_begin != pad ||
      p.pads_end != pad || xs[2] * xs[3] < 14 * 14 || std::min(xs[1], w.shape[0]) < 128)
    return false;
  geo.ic = static_cast<int>(xs[1]), geo.oc = static_cast<int>(w.shape[0]);
  geo.h = static_cast<int>(xs[2]), geo.w = static_cast<int>(xs[3]);
  return WinogradU8::supports(geo);
}

// A convolution in int8 (oneDNN's VNNI kernels, channels-last: its only
// fast int8 layout): the input quantized by its calibrated scale s_in,
// weights per output channel by s_w (max|w| / 127), int32 accumulation,
// then dst = s_in x s_w x (acc + bias / (s_in x s_w)) (oneDNN 2.6 adds the
// bias before the output scale), post-ops in float32. The output is written
// in int8 too (scaled by its own s_out) where only int8 convolutions read
// it and the epilogue is at most a ReLU (one that commutes with the scale),
// else in float32 channels-last; where it is part of a concatenation, it
// is then converted into its place. Wide 3x3s run vinfer's int8 Winograd
// instead (int8_winograd_geometry), in the same forms.
void build_int8_conv(BuildContext& ctx, const Node& n, const detail::WindowParams& p, const TensorData& w, const TensorData* b) {
  const Graph& g = ctx.graph();
  const int x = n.inputs[0], y = n.outputs[0];
  const Shape& xs = g.value(x).shape;
  const Shape& ys = g.value(y).shape;
  const std::vector<float>& sw = *ctx.int8_weight_scales(n);
  const std::int64_t oc = w.shape[0];
  const bool relu_only = n.post_ops.empty() || (n.post_ops.size() == 1 && n.post_ops[0].kind == PostOp::Relu);
  const Form src_form = ctx.int8_form(x);
  const bool stream = int8_stream(ctx, n);
  const Form dst_form = stream || (relu_only && (ctx.int8_value(y) || int8_stream_operand(ctx, n))) ? ctx.int8_form(y)
                        : int8_residual_bf16(ctx, n)               ? Form::ChannelsLastBf16
                                                                   : Form::ChannelsLast;
  const float s_in = ctx.int8_scale(x), s_out = is_int8(dst_form) ? ctx.int8_scale(y) : 1.f;
  if (WinogradU8Geometry geo; int8_winograd_geometry(p, xs, w, src_form, dst_form, relu_only, geo)) {
    auto op = std::make_unique<WinogradU8Op>(
        std::make_unique<WinogradU8>(geo, w.f.data(), b ? b->f.data() : nullptr, s_in, is_int8(dst_form) ? s_out : 0.f,
                                     !n.post_ops.empty()),
        omp_get_max_threads(), xs[0]);
    op->acts[DNNL_ARG_SRC] = ctx.input(x, src_form);
    op->acts[DNNL_ARG_DST] = ctx.output(y, dst_form);
    op->name = n.label();
    op->impl = "vinfer:wino_f23_u8_avx512_vnni";
    op->flops = 2.0 * static_cast<double>(numel(ys)) * static_cast<double>(w.numel() / oc);
    ctx.add(std::move(op));
    if (dst_form == Form::ChannelsLast && ctx.is_view(y)) channels_last_into_view(ctx, y);
    return;
  }
  std::vector<float> out_scales(static_cast<std::size_t>(oc)), w_scales(static_cast<std::size_t>(oc));
  TensorData bias;
  bias.shape = {oc};
  bias.f.assign(static_cast<std::size_t>(oc), 0.f);
  for (std::size_t o = 0; o < out_scales.size(); ++o) {
    out_scales[o] = s_in * sw[o] / s_out;
    w_scales[o] = 1.f / sw[o];
    if (b) bias.f[o] = b->f[o] / (s_in * sw[o]);
  }
  const memory::desc src_md = md_for(xs, src_form), dst_md = md_for(ys, dst_form);
  const memory::desc user_w(to_dims(w.shape), memory::data_type::f32, Tag::oihw);
  const memory::desc any_w(to_dims(w.shape), memory::data_type::s8, Tag::any);
  const memory::desc bias_md({oc}, memory::data_type::f32, Tag::a);
  memory::dims strides(p.strides.begin(), p.strides.end()), dil, pl(p.pads_begin.begin(), p.pads_begin.end()),
      pr(p.pads_end.begin(), p.pads_end.end());
  for (std::int64_t d : p.dilations) dil.push_back(d - 1);

  auto op = std::make_unique<PrimitiveOp>();
  std::vector<std::pair<int, TensorRef>> extra;
  dnnl::primitive_attr attr = default_attr();
  attr.set_output_scales(1 << 1, out_scales);
  attr.set_post_ops(
      make_post_ops(ctx, n, dst_form, extra, true, stream ? ctx.int8_scale(n.post_ops[0].sum_input) / s_out : 1.f));
  const auto pd = dnnl::convolution_forward::primitive_desc(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_md, any_w,
                                      bias_md, dst_md, strides, dil, pl, pr),
      attr, ctx.engine());
  op->prim = dnnl::convolution_forward(pd);
  dnnl::primitive_attr quantize;
  quantize.set_output_scales(1 << 0, w_scales);
  op->args[DNNL_ARG_WEIGHTS] = pack_weights(ctx.engine(), w, user_w, pd.weights_desc(), op->buffers, quantize);
  op->args[DNNL_ARG_BIAS] = pack_weights(ctx.engine(), bias, bias_md, pd.bias_desc(), op->buffers);
  op->acts[DNNL_ARG_SRC] = ctx.input(x, src_form);
  op->acts[DNNL_ARG_DST] = ctx.output(y, dst_form);
  for (auto& [arg, t] : extra) op->acts[arg] = t;
  op->name = n.label();
  op->flops = 2.0 * static_cast<double>(numel(ys)) * static_cast<double>(w.numel() / oc);
  finish(*op, pd);
  ctx.add(std::move(op));
  if (dst_form == Form::ChannelsLast && ctx.is_view(y)) channels_last_into_view(ctx, y);
}

}  // namespace

void build_conv(BuildContext& ctx, const Node& n) {
  if (squeeze_excite_absorbed(ctx, n) || conv_chain_absorbed(ctx, n) || build_conv_chain(ctx, n)) return;
  if (const Node* s = absorbable_scale_shift(ctx, n)) return build_preact_conv1x1(ctx, n, *s);
  if (ChannelScale cs; absorbable_channel_scale(ctx, n, cs)) return build_scaled_conv1x1(ctx, n, cs);
  const Graph& g = ctx.graph();
  const Shape& xs = g.value(n.inputs[0]).shape;
  const TensorData* w = g.constant(n.inputs[1]);
  if (!w) unsupported(n, "a non-constant weight");
  const TensorData* b = n.inputs.size() > 2 && n.inputs[2] >= 0 ? g.constant(n.inputs[2]) : nullptr;
  if (n.inputs.size() > 2 && n.inputs[2] >= 0 && !b) unsupported(n, "a non-constant bias");
  const detail::WindowParams p = detail::conv_params(n, xs, w->shape);
  const Shape& ys = g.value(n.outputs[0]).shape;
  const std::int64_t G = p.group;
  if (conv_int8(ctx, n)) return build_int8_conv(ctx, n, p, *w, b);
  GroupConvGeometry geo;
  bool timed = false;
  if (own_group_conv_geometry(ctx, n, xs, ys, p, *w, geo, timed) && (!timed || depthwise_on_vinfer(ctx, n, geo, p, *w, b)))
    return build_own_group_conv(ctx, n, geo, *w, b);
  const auto [in_form, out_form] = conv_layout(xs, ys, G);
  // Precision::BF16: the output is written in bfloat16 where only
  // convolutions that read it so read it.
  const Form src_form = conv_input_form(ctx, n);
  const bool bf16 = is_bf16(src_form);
  if (!bf16 && build_plain_conv1x1(ctx, n, xs, ys, p, *w, b, in_form)) return;
  // (AMX's kernels write channels-last only: in bfloat16 for readers that
  // take it so, else in float32, reordered for the others.)
  // (In int8, the first convolution on AMX writes bfloat16 for int8
  // convolutions, or a max pool before them: half float32's bytes, whose
  // precision the int8 input does not keep anyway; ResNet50's stem at batch
  // 32: 20.7 -> 12.2 ms.)
  const Form readers = src_form == Form::ChannelsLastBf16 && !ctx.is_view(n.outputs[0]) && !g.is_output(n.outputs[0]) &&
                               ((ctx.int8() && int8_input_only(ctx, n.outputs[0])) || sums_bf16_only(ctx, n))
                           ? Form::ChannelsLastBf16
                           : ctx.bf16_form(n.outputs[0]);
  const Form dst_form = src_form == Form::ChannelsLastBf16 ? (readers == Form::ChannelsLastBf16 ? readers : Form::ChannelsLast)
                        : bf16 && readers == Form::BlockedBf16 ? readers
                                                               : out_form;
  const memory::desc src_md = md_for(xs, src_form), dst_md = md_for(ys, dst_form);

  memory::desc user_w;
  if (G == 1) {
    user_w = memory::desc(to_dims(w->shape), memory::data_type::f32, Tag::oihw);
  } else {
    user_w = memory::desc({G, w->shape[0] / G, w->shape[1], w->shape[2], w->shape[3]}, memory::data_type::f32, Tag::goihw);
  }
  memory::desc any_w(user_w.dims(), bf16 ? memory::data_type::bf16 : memory::data_type::f32, Tag::any);
  memory::desc bias_md = memory::desc({w->shape[0]}, memory::data_type::f32, Tag::a);
  memory::dims strides(p.strides.begin(), p.strides.end()), dil, pl(p.pads_begin.begin(), p.pads_begin.end()),
      pr(p.pads_end.begin(), p.pads_end.end());
  for (std::int64_t d : p.dilations) dil.push_back(d - 1);  // oneDNN counts dilation from 0

  auto op = std::make_unique<PrimitiveOp>();
  std::vector<std::pair<int, TensorRef>> extra;
  dnnl::primitive_attr attr = default_attr();
  // A SiLU alone after it, where no 3x3 kernel is timed against vinfer's,
  // or a GELU alone (MaxViT's): vinfer's pass after oneDNN's convolution,
  // not oneDNN's post-op (make_in_place).
  Node stripped = n;
  const PostOp::Kind fn = n.post_ops.size() == 1 ? n.post_ops[0].kind : PostOp::Sum;
  bool own_fn = !bf16 && dst_form == Form::Blocked && simd_block_runs(channel_block()) && !ctx.is_view(n.outputs[0]) &&
                ((fn == PostOp::Swish && !(p.kernel == std::vector<std::int64_t>{3, 3} && xs[1] >= 16)) ||
                 (fn == PostOp::Gelu && !detail::debug_env_is(detail::DebugVar::Gelu, "onednn")));
  if (own_fn) stripped.post_ops.clear();
  attr.set_post_ops(make_post_ops(ctx, stripped, dst_form, extra, dst_form == Form::ChannelsLastBf16));
  auto desc_of = [&](const memory::desc& x, const memory::desc& y, dnnl::algorithm alg) {
    return b ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, x, any_w, bias_md, y, strides, dil, pl, pr)
             : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, x, any_w, y, strides, dil, pl, pr);
  };
  auto desc = [&](dnnl::algorithm alg) { return desc_of(src_md, dst_md, alg); };
  // Kernels are timed on as many images as vinfer's Winograd takes at a
  // time (fold_images; one at batch 1).
  auto some_images = [&](const Shape& s, Form f, int images) {
    Shape some = s;
    some[0] = images;
    return md_for(some, f);
  };
  // Winograd does fewer multiplications for a 3x3 convolution (stride 1:
  // oneDNN's F(2,3) 2.25x, AVX-512 only in 2.6; vinfer's F(4,3) 4x, AVX2
  // too; stride 2: vinfer's 1.44x). Which kernel runs it: timed at load
  // (tune_3x3), else rule_3x3.
  const bool tune =
      ctx.tune() && !detail::debug_env(detail::DebugVar::Winograd) && !detail::debug_env(detail::DebugVar::WinogradSplit);
  const bool stride1 = p.strides == std::vector<std::int64_t>{1, 1}, stride2 = p.strides == std::vector<std::int64_t>{2, 2};
  const bool f23_asked = detail::debug_env_is(detail::DebugVar::Winograd, "f23");
  const int min_map = stride2 ? 0 : tune || f23_asked ? 7 * 7 : 14 * 14;
  const bool three = !bf16 && G == 1 && p.kernel == std::vector<std::int64_t>{3, 3} &&
                     p.dilations == std::vector<std::int64_t>{1, 1} && xs[1] >= 16 &&
                     ((stride1 && ctx.winograd() && ys[2] * ys[3] >= min_map) || stride2);
  dnnl::convolution_forward::primitive_desc pd;
  if (three) {
    dnnl::convolution_forward::primitive_desc wino;
    try {
      if (stride1) wino = dnnl::convolution_forward::primitive_desc(desc(dnnl::algorithm::convolution_winograd), attr, ctx.engine());
    } catch (const dnnl::error&) {
      // not implemented for this ISA or shape
    }
    WinogradGeometry geo;
    float lo, hi;
    OutAct act;
    Residual residual;
    int sum_input;
    // vinfer's kernels take a residual that oneDNN would read as packed f32
    // blocks (one added in place, over dst, or a view they leave to oneDNN).
    const bool own_epilogue =
        own_epilogue_of(n, lo, hi, act, residual, sum_input) &&
        (sum_input < 0 ? extra.empty()
                       : extra.size() == 1 && extra[0].second.md == blocked_md(ys) && extra[0].second.image_bytes == 0);
    const TensorRef* res = sum_input >= 0 && own_epilogue ? &extra[0].second : nullptr;
    const bool own = ctx.winograd() && in_form == Form::Blocked && own_epilogue &&
                     own_winograd_geometry(n, p, xs, ys, min_map, geo);
    if (!own) {  // the geometry still keys the tuning
      geo = {static_cast<int>(xs[1]), static_cast<int>(ys[1]), static_cast<int>(xs[2]), static_cast<int>(xs[3]),
             static_cast<int>(ys[2]), static_cast<int>(ys[3]), static_cast<int>(p.pads_begin[0]),
             static_cast<int>(p.pads_begin[1]), channel_block(), stride2 ? 2 : 1};
    }
    Conv1x1Geometry gemm_geo;
    bool gemm_default = false;
    const bool gemm = stride2 && own_epilogue && !res && gemm_3x3_geometry(xs, ys, p, *w, in_form, gemm_geo, gemm_default);
    Conv3x3 kind = rule_3x3(geo, wino ? std::string(wino.impl_info_str()) : std::string(), own, gemm && gemm_default);
    geo.images = fold_images(geo, xs[0], Winograd3x3::Split::Tiles);  // timed so (positions: fewer, below)
    std::unique_ptr<Winograd3x3> kernel;
    if (tune && extra.empty()) {  // (a residual sum's operand is not at hand to time with)
      const memory::desc x1 = some_images(xs, in_form, geo.images), y1 = some_images(ys, out_form, geo.images);
      const auto direct =
          dnnl::convolution_forward::primitive_desc(desc_of(x1, y1, dnnl::algorithm::convolution_direct), attr, ctx.engine());
      dnnl::convolution_forward::primitive_desc wino1;
      const bool whole = xs[0] == geo.images;
      if (wino && !whole)
        wino1 = dnnl::convolution_forward::primitive_desc(desc_of(x1, y1, dnnl::algorithm::convolution_winograd), attr, ctx.engine());
      kind = tune_3x3(ctx, geo, own, gemm ? &gemm_geo : nullptr, lo, hi, act, *w, b, kind, whole ? wino : wino1, direct,
                      kernel);
    }
    if (kind == Conv3x3::VinferGemm) return add_plain_conv1x1(ctx, n, gemm_geo, *w, b, -1, lo, hi, act);
    if (!is_onednn(kind)) return add_own_winograd(ctx, n, geo, lo, hi, act, residual, res, *w, b, kind, std::move(kernel));
    if (kind == Conv3x3::OneDnnWinograd) pd = wino;
  }
  // ConvNeXt's blocks in channels-last: a convolution reads channels-last
  // where its input exists only so (the block's residual sum, after the MLP
  // transposed back by renaming bytes: op_transpose.cpp), and then writes
  // it too; it writes channels-last where every reader is an NCHW -> NHWC
  // Transpose (which then renames its bytes). Where oneDNN has a kernel for
  // that (no fused residual operand, not its reference kernel).
  Form src_f = src_form, dst_f = dst_form;
  if (!pd && !bf16 && !ctx.int8() && out_form == Form::Blocked && extra.empty()) {
    const int x = n.inputs[0], y = n.outputs[0];
    const auto& readers = ctx.consumers(y);
    // (not after a grouped convolution whose groups made it channels-last:
    // ResNeXt's and RegNet's stay as they were measured)
    const bool after_groups = std::any_of(g.nodes.begin(), g.nodes.end(), [&](const Node& p) {
      if (p.op != "Conv" || std::find(p.outputs.begin(), p.outputs.end(), x) == p.outputs.end()) return false;
      const std::int64_t groups = p.get_int("group", 1);
      return groups > 1 && groups != g.value(x).shape[1];
    });
    const bool cl_in =
        in_form == Form::Blocked && !ctx.has_form(x, Form::Blocked) && ctx.has_form(x, Form::ChannelsLast) && !after_groups;
    const bool cl_out = !g.is_output(y) && !ctx.is_view(y) &&
                        (cl_in || (!readers.empty() && std::all_of(readers.begin(), readers.end(), [&](int r) {
                                     const Node& t = g.nodes[static_cast<std::size_t>(r)];
                                     return t.op == "Transpose" && t.get_ints("perm") == std::vector<std::int64_t>{0, 2, 3, 1};
                                   })));
    // (a plain input, the image, is read channels-last too if oneDNN has no
    // kernel from plain to channels-last: it has only its reference one)
    for (const Form sf : {cl_in ? Form::ChannelsLast : src_form, Form::ChannelsLast}) {
      if (!(cl_in || cl_out) || pd) break;
      const Form df = cl_out ? Form::ChannelsLast : dst_form;
      try {
        const auto cl = dnnl::convolution_forward::primitive_desc(
            desc_of(md_for(xs, sf), md_for(ys, df), dnnl::algorithm::convolution_direct), attr, ctx.engine());
        if (std::string(cl.impl_info_str()).rfind("ref", 0) != 0) pd = cl, src_f = sf, dst_f = df;
      } catch (const dnnl::error&) {
        // no such kernel: blocked, as above
      }
    }
  }
  if (own_fn && dst_f != Form::Blocked) {  // (channels-last after all: oneDNN's post-op)
    own_fn = false;
    attr.set_post_ops(make_post_ops(ctx, n, dst_f, extra, false));
    pd = dnnl::convolution_forward::primitive_desc(
        desc_of(md_for(xs, src_f), md_for(ys, dst_f), dnnl::algorithm::convolution_direct), attr, ctx.engine());
  }
  TensorRef src = ctx.input(n.inputs[0], src_f);
  TensorRef dst = ctx.output(n.outputs[0], dst_f);
  if (!pd) pd = dnnl::convolution_forward::primitive_desc(desc(dnnl::algorithm::convolution_direct), attr, ctx.engine());
  op->prim = dnnl::convolution_forward(pd);
  op->args[DNNL_ARG_WEIGHTS] = pack_weights(ctx.engine(), *w, user_w, pd.weights_desc(), op->buffers);
  if (b) op->args[DNNL_ARG_BIAS] = pack_weights(ctx.engine(), *b, bias_md, pd.bias_desc(), op->buffers);
  op->acts[DNNL_ARG_SRC] = src;
  op->acts[DNNL_ARG_DST] = dst;
  for (auto& [arg, t] : extra) op->acts[arg] = t;
  op->name = n.label();
  op->flops = 2.0 * static_cast<double>(numel(ys)) * static_cast<double>(w->numel() / w->shape[0]);
  finish(*op, pd);
  ctx.add(std::move(op));
  if (own_fn)
    ctx.add(fn == PostOp::Swish ? make_in_place(dst, InPlaceFn::Silu, "SiLU after " + n.label())
                                : make_in_place(dst, InPlaceFn::Gelu, "GELU after " + n.label()));
  // A view into a concatenation is read as blocks: written there from channels-last.
  if (dst_f == Form::ChannelsLast && ctx.is_view(n.outputs[0])) channels_last_into_view(ctx, n.outputs[0]);
}

}  // namespace vinfer::cpu
