// Google Benchmark: 3x3 stride-1 convolutions of the zoo's shapes, vinfer's
// Winograd F(4,3) (and F(2,3) on 14x14 and 7x7 maps: *_f23) beside oneDNN's
// Winograd (F(2,3), AVX-512 only in 2.6) and its direct convolution, on the
// same blocked tensors; its 1x1 kernel, stride-2 3x3s and narrow-group
// convolutions beside oneDNN's; in int8, its Winograd F(2,3) beside
// oneDNN's direct kernel; /threads/cold.
//   ./build/bench/bench_conv --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <omp.h>

#include <dnnl.hpp>
#include <random>
#include <limits>
#include <memory>
#include <algorithm>
#include <vector>

#include "cpu/conv1x1.hpp"
#include "cpu/conv_chain.hpp"
#include "cpu/group_conv.hpp"
#include "cpu/winograd.hpp"
#include "cpu/winograd_u8.hpp"

namespace {

struct Shape3x3 {
  int ic, oc, hw;      // hw: the input's side
  bool preact = true;  // vinfer's 1x1: with DenseNet's pre-activation
  int stride = 1;      // 3x3s: 1 or 2 (pad 1 either way)
  int tile = 4;        // vinfer's stride-1 Winograd: F(4,3) or F(2,3)
  bool silu = false;   // 1x1s: SiLU after the bias (EfficientNet's), not ReLU
  int out() const { return (hw - 1) / stride + 1; }
};

// As the engine: nChw16c where oneDNN runs AVX-512 (ONEDNN_MAX_CPU_ISA=AVX2
// gives the AVX2 kernels and nChw8c).
int block() { return dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core ? 16 : 8; }

std::vector<float> random_values(std::size_t n, float scale) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Inside a network each layer's weights come from memory, not from the cache
// the previous iteration left: with cold = 1, 64 MiB are written between
// iterations (untimed).
void evict_caches(benchmark::State& st) {
  if (st.range(1) == 0) return;
  static std::vector<char> junk(64 << 20);
  st.PauseTiming();
  for (std::size_t i = 0; i < junk.size(); i += 64) junk[i] = static_cast<char>(junk[i] + 1);
  st.ResumeTiming();
}

void BM_WinogradVinfer(benchmark::State& st, Shape3x3 s) {
  omp_set_num_threads(static_cast<int>(st.range(0)));
  vinfer::cpu::WinogradGeometry g;
  g.ic = s.ic, g.oc = s.oc, g.h = g.w = s.hw, g.oh = g.ow = s.out(), g.pad_t = g.pad_l = 1, g.block = block();
  g.stride = s.stride, g.out_tile = s.tile;
  if (!vinfer::cpu::Winograd3x3::supports(g)) return st.SkipWithError("no kernel for this CPU");
  const auto w = random_values(static_cast<std::size_t>(s.oc) * s.ic * 9, 0.1f);
  const auto b = random_values(s.oc, 0.1f);
  const auto x = random_values(static_cast<std::size_t>(s.ic) * s.hw * s.hw, 1.f);
  std::vector<float> y(static_cast<std::size_t>(s.oc) * s.out() * s.out());
  vinfer::cpu::Winograd3x3 k(g, w.data(), b.data(), 0.f);
  for (auto _ : st) {
    evict_caches(st);
    k.run(x.data(), y.data());
  }
  st.counters["GFLOP/s"] = benchmark::Counter(2.0 * 9 * s.ic * s.oc * s.out() * s.out(),
                                              benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

// Times oneDNN's convolution pd on random input and weights (scaled by
// w_scale), labelled with its implementation; flops per run.
void time_onednn(benchmark::State& st, const dnnl::engine& eng, const dnnl::convolution_forward::primitive_desc& pd,
                 float w_scale, double flops) {
  dnnl::stream strm(eng);
  auto xv = random_values(pd.src_desc().get_size() / 4, 1.f);
  auto wv = random_values(pd.weights_desc().get_size() / 4, w_scale);
  auto bv = random_values(pd.bias_desc().get_size() / 4, 0.1f);
  dnnl::memory xm(pd.src_desc(), eng, xv.data()), wm(pd.weights_desc(), eng, wv.data()), bm(pd.bias_desc(), eng, bv.data()),
      ym(pd.dst_desc(), eng), sm(pd.scratchpad_desc(), eng);
  dnnl::convolution_forward conv(pd);
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, xm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_BIAS, bm},
                                             {DNNL_ARG_DST, ym}, {DNNL_ARG_SCRATCHPAD, sm}};
  for (auto _ : st) {
    evict_caches(st);
    conv.execute(strm, args);
    strm.wait();
  }
  st.SetLabel(pd.impl_info_str());
  st.counters["GFLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void onednn_conv(benchmark::State& st, Shape3x3 s, dnnl::algorithm alg, int kernel) {
  omp_set_num_threads(static_cast<int>(st.range(0)));
  using tag = dnnl::memory::format_tag;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  const tag blocked = block() == 16 ? tag::nChw16c : tag::nChw8c;
  const auto f32 = dnnl::memory::data_type::f32;
  const int out = kernel == 1 ? s.hw : s.out();
  dnnl::memory::desc src({1, s.ic, s.hw, s.hw}, f32, blocked), dst({1, s.oc, out, out}, f32, blocked),
      wany({s.oc, s.ic, kernel, kernel}, f32, tag::any), bias({s.oc}, f32, tag::a);
  dnnl::post_ops po;
  if (s.silu) po.append_eltwise(1.f, dnnl::algorithm::eltwise_swish, 1.f, 0.f);
  else po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  dnnl::convolution_forward::primitive_desc pd;
  try {
    pd = dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, alg, src, wany, bias, dst, {s.stride, s.stride},
                                        {kernel / 2, kernel / 2},
                                        {kernel / 2, kernel / 2}),
        attr, eng);
  } catch (const dnnl::error&) {
    return st.SkipWithError("oneDNN has no such implementation here");
  }
  time_onednn(st, eng, pd, 0.1f, 2.0 * kernel * kernel * s.ic * s.oc * out * out);
}
void BM_OneDnn(benchmark::State& st, Shape3x3 s, dnnl::algorithm alg) { onednn_conv(st, s, alg, 3); }
void BM_OneDnn1x1(benchmark::State& st, Shape3x3 s) { onednn_conv(st, s, dnnl::algorithm::convolution_direct, 1); }

// DenseNet's BatchNorm -> ReLU -> 1x1 convolution: vinfer's fused kernel
// against oneDNN's 1x1 convolution alone (which needs a separate pass for the
// normalization). Shapes {ic, oc, hw}: the largest layer of each dense block;
// and ResNet50's layer3/4 1x1s (no pre-activation), which vinfer's kernel runs
// so that they prefetch the next layers' weights; its layer1/2 1x1s, which
// stay on oneDNN's (faster there, measured in this benchmark); and
// EfficientNet-B0's expansions with SiLU on large maps (16, 24 and 40 input
// channels: few multiply-adds per output for its function and store).
void BM_Conv1x1Vinfer(benchmark::State& st, Shape3x3 s) {
  omp_set_num_threads(static_cast<int>(st.range(0)));
  vinfer::cpu::Conv1x1Geometry g;
  g.ic = s.ic, g.oc = s.oc, g.hw = s.hw * s.hw, g.block = block();
  if (!vinfer::cpu::Conv1x1Pre::supports(g)) return st.SkipWithError("no kernel for this CPU");
  const auto w = random_values(static_cast<std::size_t>(s.oc) * s.ic, 0.1f), b = random_values(s.oc, 0.1f);
  const auto sc = random_values(s.ic, 1.f), sh = random_values(s.ic, 1.f);
  // (blocked: channels rounded up to the block)
  const auto padded = [&](int c) { return static_cast<std::size_t>((c + g.block - 1) / g.block * g.block) * g.hw; };
  const auto x = random_values(padded(s.ic), 1.f);
  std::vector<float> y(padded(s.oc));
  vinfer::cpu::PreActivation pre;
  if (s.preact) pre.scale = sc.data(), pre.shift = sh.data(), pre.lo = 0.f;
  const float inf = std::numeric_limits<float>::infinity();
  vinfer::cpu::Conv1x1Pre k(g, w.data(), b.data(), pre, s.silu ? -inf : 0.f, inf,
                            s.silu ? vinfer::cpu::OutAct::Swish : vinfer::cpu::OutAct::Clamp);
  const int threads = static_cast<int>(st.range(0));
  vinfer::cpu::Block scratch = vinfer::cpu::aligned_block(k.scratch_bytes(threads));
  for (auto _ : st) {
    evict_caches(st);
    k.run(x.data(), y.data(), scratch.get(), threads);
  }
  st.counters["GFLOP/s"] = benchmark::Counter(2.0 * s.ic * s.oc * g.hw, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
}

#define SHAPES_1X1(X)             \
  X(block1, {256, 128, 56})       \
  X(block2, {512, 128, 28})       \
  X(block3, {1024, 128, 14})      \
  X(block4, {1024, 128, 7})       \
  X(resnet_l3_in, {1024, 256, 14, false}) \
  X(resnet_l3_out, {256, 1024, 14, false}) \
  X(resnet_l4_in, {2048, 512, 7, false})  \
  X(resnet_l4_out, {512, 2048, 7, false}) \
  X(resnet_l1_in, {256, 64, 56, false}) \
  X(resnet_l1_out, {64, 256, 56, false}) \
  X(resnet_l2_in, {512, 128, 28, false}) \
  X(resnet_l2_out, {128, 512, 28, false}) \
  X(effnet_expand_112, {16, 96, 112, false, 1, 4, true}) \
  X(effnet_expand_56, {24, 144, 56, false, 1, 4, true}) \
  X(effnet_expand_28, {40, 240, 28, false, 1, 4, true}) \
  X(mobilenet_expand_112, {16, 96, 112, false}) \
  X(mobilenet_expand_56, {24, 144, 56, false}) \
  X(mobilenet_project_56, {144, 24, 56, false}) \
  X(mnasnet_expand_56, {24, 72, 56, false}) \
  X(mnasnet_project_56, {72, 24, 56, false}) \
  X(mnasnet_expand_28, {40, 120, 28, false}) \
  X(mnasnet_project_28, {120, 40, 28, false}) \
  X(mobilenet_v3_expand_28, {24, 88, 28, false})
#define REGISTER_1X1(name, ...)                                                                                        \
  BENCHMARK_CAPTURE(BM_Conv1x1Vinfer, name, Shape3x3 __VA_ARGS__)->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond); \
  BENCHMARK_CAPTURE(BM_OneDnn1x1, name, Shape3x3 __VA_ARGS__)->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond);

// DenseNet's growth layers (128 -> 32) at 56, 28, 14; ResNet50's bottlenecks;
// VGG19's wide layers.
#define SHAPES(X)                 \
  X(densenet_56, {128, 32, 56})   \
  X(densenet_28, {128, 32, 28})   \
  X(densenet_14, {128, 32, 14})   \
  X(densenet_7, {128, 32, 7})     \
  X(resnet_56, {64, 64, 56})      \
  X(resnet_28, {128, 128, 28})    \
  X(resnet_14, {256, 256, 14})    \
  X(resnet_7, {512, 512, 7})      \
  X(vgg_112, {64, 128, 112})      \
  X(vgg_56, {256, 256, 56})       \
  X(vgg_28, {512, 512, 28})
#define REGISTER(name, ...)                                                                                         \
  BENCHMARK_CAPTURE(BM_WinogradVinfer, name, Shape3x3 __VA_ARGS__)->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond); \
  BENCHMARK_CAPTURE(BM_OneDnn, name##_wino, Shape3x3 __VA_ARGS__, dnnl::algorithm::convolution_winograd)            \
      ->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond);                                                \
  BENCHMARK_CAPTURE(BM_OneDnn, name##_direct, Shape3x3 __VA_ARGS__, dnnl::algorithm::convolution_direct)            \
      ->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond);
SHAPES(REGISTER)
#define SHAPES_F23(X)                          \
  X(densenet_14_f23, {128, 32, 14, true, 1, 2}) \
  X(densenet_7_f23, {128, 32, 7, true, 1, 2})   \
  X(resnet_14_f23, {256, 256, 14, true, 1, 2})  \
  X(resnet_7_f23, {512, 512, 7, true, 1, 2})
#define REGISTER_F23(name, ...) \
  BENCHMARK_CAPTURE(BM_WinogradVinfer, name, Shape3x3 __VA_ARGS__)->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond);
SHAPES_F23(REGISTER_F23)
SHAPES_1X1(REGISTER_1X1)

// int8 3x3s of stride 1 (u8 channels-last in and out, bias, ReLU): vinfer's
// int8 Winograd F(2,3) (AVX-512 VNNI) beside oneDNN's direct int8 kernel
// (brgconv on VNNI), on the shapes the engine gives the former (VGG19's and
// ResNet50's, 128 channels or more on both sides) and three it leaves to
// oneDNN (VGG19's 64 -> 64 and 64 -> 128, DenseNet's 128 -> 32).
void BM_Int8WinogradVinfer(benchmark::State& st, Shape3x3 s) {
  const int threads = static_cast<int>(st.range(0));
  omp_set_num_threads(threads);
  vinfer::cpu::WinogradU8Geometry g;
  g.ic = s.ic, g.oc = s.oc, g.h = g.w = s.hw;
  if (!vinfer::cpu::WinogradU8::supports(g)) return st.SkipWithError("no AVX-512 VNNI here");
  const auto w = random_values(static_cast<std::size_t>(s.oc) * s.ic * 9, 0.1f), b = random_values(s.oc, 0.1f);
  std::vector<std::uint8_t> x(static_cast<std::size_t>(s.ic) * s.hw * s.hw), y(static_cast<std::size_t>(s.oc) * s.hw * s.hw);
  std::mt19937 rng(7);
  for (std::uint8_t& v : x) v = static_cast<std::uint8_t>(rng() % 64);
  const vinfer::cpu::WinogradU8 k(g, w.data(), b.data(), 0.02f, 0.05f, true);
  const vinfer::cpu::Block scratch = vinfer::cpu::aligned_block(k.scratch_bytes(threads));
  for (auto _ : st) {
    evict_caches(st);
    k.run(x.data(), y.data(), scratch.get(), threads, 1);
  }
  st.counters["GOP/s"] = benchmark::Counter(2.0 * 9 * s.ic * s.oc * s.hw * s.hw, benchmark::Counter::kIsIterationInvariantRate,
                                            benchmark::Counter::kIs1000);
}
void BM_Int8OneDnn(benchmark::State& st, Shape3x3 s) {
  omp_set_num_threads(static_cast<int>(st.range(0)));
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::memory::desc src({1, s.ic, s.hw, s.hw}, dt::u8, tag::nhwc), dst({1, s.oc, s.hw, s.hw}, dt::u8, tag::nhwc),
      wany({s.oc, s.ic, 3, 3}, dt::s8, tag::any), bias({s.oc}, dt::f32, tag::a);
  dnnl::post_ops po;
  po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  dnnl::primitive_attr attr;
  attr.set_output_scales(1 << 1, std::vector<float>(static_cast<std::size_t>(s.oc), 0.01f));
  attr.set_post_ops(po);
  const dnnl::convolution_forward::primitive_desc pd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, wany,
                                      bias, dst, {1, 1}, {1, 1}, {1, 1}),
      attr, eng);
  time_onednn(st, eng, pd, 0.1f, 2.0 * 9 * s.ic * s.oc * s.hw * s.hw);
}
#define SHAPES_INT8(X)             \
  X(int8_vgg_224, {64, 64, 224})   \
  X(int8_vgg_112, {64, 128, 112})  \
  X(int8_vgg_56, {256, 256, 56})   \
  X(int8_vgg_28, {512, 512, 28})   \
  X(int8_vgg_14, {512, 512, 14})   \
  X(int8_resnet_28, {128, 128, 28}) \
  X(int8_resnet_14, {256, 256, 14}) \
  X(int8_densenet_56, {128, 32, 56})
#define REGISTER_INT8(name, ...)                                                                                    \
  BENCHMARK_CAPTURE(BM_Int8WinogradVinfer, name, Shape3x3 __VA_ARGS__)->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond); \
  BENCHMARK_CAPTURE(BM_Int8OneDnn, name, Shape3x3 __VA_ARGS__)->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond);
SHAPES_INT8(REGISTER_INT8)

// ResNet's stride-2 3x3s (layer2/3/4's first; the input's side): vinfer's
// stride-2 Winograd, its 3x3 windows as a GEMM on the 1x1 kernel
// (vinfer:conv3x3_gemm), oneDNN's direct convolution.
void BM_Conv3x3GemmVinfer(benchmark::State& st, Shape3x3 s) {
  omp_set_num_threads(static_cast<int>(st.range(0)));
  vinfer::cpu::Conv1x1Geometry g;
  g.ic = s.ic, g.oc = s.oc, g.hw = s.out() * s.out(), g.block = block(), g.stride = s.stride;
  g.in_h = g.in_w = s.hw, g.ow = s.out(), g.kernel = 3, g.pad = 1;
  if (!vinfer::cpu::Conv1x1Pre::supports(g)) return st.SkipWithError("no kernel for this CPU");
  const auto w = random_values(static_cast<std::size_t>(s.oc) * s.ic * 9, 0.1f), b = random_values(s.oc, 0.1f);
  const auto x = random_values(static_cast<std::size_t>(s.ic) * s.hw * s.hw, 1.f);
  std::vector<float> y(static_cast<std::size_t>(s.oc) * g.hw);
  vinfer::cpu::Conv1x1Pre k(g, w.data(), b.data(), vinfer::cpu::PreActivation{}, 0.f);
  const int threads = static_cast<int>(st.range(0));
  vinfer::cpu::Block scratch = vinfer::cpu::aligned_block(k.scratch_bytes(threads));
  for (auto _ : st) {
    evict_caches(st);
    k.run(x.data(), y.data(), scratch.get(), threads);
  }
  st.counters["GFLOP/s"] = benchmark::Counter(2.0 * 9 * s.ic * s.oc * g.hw, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
}
#define SHAPES_S2(X)                 \
  X(resnet_s2_56, {128, 128, 56, true, 2}) \
  X(resnet_s2_28, {256, 256, 28, true, 2}) \
  X(resnet_s2_14, {512, 512, 14, true, 2})
#define REGISTER_S2(name, ...)                                                                                        \
  BENCHMARK_CAPTURE(BM_WinogradVinfer, name, Shape3x3 __VA_ARGS__)->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond); \
  BENCHMARK_CAPTURE(BM_Conv3x3GemmVinfer, name, Shape3x3 __VA_ARGS__)->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond); \
  BENCHMARK_CAPTURE(BM_OneDnn, name##_direct, Shape3x3 __VA_ARGS__, dnnl::algorithm::convolution_direct)            \
      ->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond);
SHAPES_S2(REGISTER_S2)

// Grouped 3x3 convolutions with groups narrower than a block ({channels,
// channels per group, input side, stride}; ReLU after): ResNeXt50's and
// RegNetY-400MF's. vinfer's kernel on blocked tensors; oneDNN's on
// channels-last ones (it has no blocked kernel for such groups but its
// reference one), as the engine ran them before, without the two layout
// conversions that cost.
struct ShapeGroups {
  int c, gw, hw, stride;
  int out() const { return (hw - 1) / stride + 1; }
};

void BM_GroupConvVinfer(benchmark::State& st, ShapeGroups s) {
  omp_set_num_threads(static_cast<int>(st.range(0)));
  vinfer::cpu::GroupConvGeometry g;
  g.c = s.c, g.gw = s.gw, g.h = g.w = s.hw, g.oh = g.ow = s.out(), g.k = 3, g.stride = s.stride, g.pad_t = g.pad_l = 1;
  g.block = block();
  if (!vinfer::cpu::GroupConv::supports(g)) return st.SkipWithError("no kernel for this CPU");
  const auto w = random_values(static_cast<std::size_t>(s.c) * s.gw * 9, 0.3f), b = random_values(s.c, 0.1f);
  const auto x = random_values(static_cast<std::size_t>(g.blocks()) * g.block * s.hw * s.hw, 1.f);
  std::vector<float> y(static_cast<std::size_t>(g.blocks()) * g.block * g.oh * g.ow);
  vinfer::cpu::GroupConv k(g, w.data(), b.data(), 0.f);
  const int threads = static_cast<int>(st.range(0));
  vinfer::cpu::Block scratch = vinfer::cpu::aligned_block(k.scratch_bytes(threads));
  for (auto _ : st) {
    evict_caches(st);
    k.run(x.data(), y.data(), scratch.get(), threads);
  }
  st.counters["GFLOP/s"] = benchmark::Counter(2.0 * 9 * s.gw * s.c * g.oh * g.ow, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
}

void BM_GroupConvOneDnn(benchmark::State& st, ShapeGroups s) {
  omp_set_num_threads(static_cast<int>(st.range(0)));
  using tag = dnnl::memory::format_tag;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  const auto f32 = dnnl::memory::data_type::f32;
  const int out = s.out(), G = s.c / s.gw;
  dnnl::memory::desc src({1, s.c, s.hw, s.hw}, f32, tag::nhwc), dst({1, s.c, out, out}, f32, tag::nhwc),
      wany({G, s.gw, s.gw, 3, 3}, f32, tag::any), bias({s.c}, f32, tag::a);
  dnnl::post_ops po;
  po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  const auto pd = dnnl::convolution_forward::primitive_desc(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, wany,
                                      bias, dst, {s.stride, s.stride}, {1, 1}, {1, 1}),
      attr, eng);
  time_onednn(st, eng, pd, 0.3f, 2.0 * 9 * s.gw * s.c * out * out);
}
#define SHAPES_GROUPS(X)                 \
  X(resnext_56, {128, 4, 56, 1})         \
  X(resnext_56_s2, {256, 8, 56, 2})      \
  X(resnext_28, {256, 8, 28, 1})         \
  X(regnety_56, {48, 8, 56, 1})          \
  X(regnety_28, {104, 8, 28, 1})         \
  X(regnety_14, {208, 8, 14, 1})
#define REGISTER_GROUPS(name, ...)                                                                                  \
  BENCHMARK_CAPTURE(BM_GroupConvVinfer, name, ShapeGroups __VA_ARGS__)->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond); \
  BENCHMARK_CAPTURE(BM_GroupConvOneDnn, name, ShapeGroups __VA_ARGS__)->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond);
SHAPES_GROUPS(REGISTER_GROUPS)

// Depthwise convolutions (one channel per group, blocked in and out): the
// narrow-group kernel with one channel per group against oneDNN's jit_dw,
// each with the network's function (ReLU, or SiLU: EfficientNet's).
struct ShapeDepthwise {
  int c, hw, stride, k;
  bool silu;
  int out() const { return (hw + 2 * (k / 2) - k) / stride + 1; }
  double flops() const { return 2.0 * k * k * c * out() * out(); }
};

void BM_DepthwiseVinfer(benchmark::State& st, ShapeDepthwise s) {
  omp_set_num_threads(static_cast<int>(st.range(0)));
  vinfer::cpu::GroupConvGeometry g;
  g.c = s.c, g.gw = 1, g.h = g.w = s.hw, g.oh = g.ow = s.out(), g.k = s.k, g.stride = s.stride, g.pad_t = g.pad_l = s.k / 2;
  g.block = block();
  if (!vinfer::cpu::GroupConv::supports(g)) return st.SkipWithError("no kernel for this CPU");
  const auto w = random_values(static_cast<std::size_t>(s.c) * s.k * s.k, 0.3f), b = random_values(s.c, 0.1f);
  const auto x = random_values(static_cast<std::size_t>(g.blocks()) * g.block * s.hw * s.hw, 1.f);
  std::vector<float> y(static_cast<std::size_t>(g.blocks()) * g.block * g.oh * g.ow);
  const float inf = std::numeric_limits<float>::infinity();
  vinfer::cpu::GroupConv k(g, w.data(), b.data(), s.silu ? -inf : 0.f, inf,
                           s.silu ? vinfer::cpu::OutAct::Swish : vinfer::cpu::OutAct::Clamp);
  const int threads = static_cast<int>(st.range(0));
  vinfer::cpu::Block scratch = vinfer::cpu::aligned_block(k.scratch_bytes(threads));
  for (auto _ : st) {
    evict_caches(st);
    k.run(x.data(), y.data(), scratch.get(), threads);
  }
  st.counters["GFLOP/s"] = benchmark::Counter(s.flops(), benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void BM_DepthwiseOneDnn(benchmark::State& st, ShapeDepthwise s) {
  omp_set_num_threads(static_cast<int>(st.range(0)));
  using tag = dnnl::memory::format_tag;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  const tag blocked = block() == 16 ? tag::nChw16c : tag::nChw8c;
  const auto f32 = dnnl::memory::data_type::f32;
  const int out = s.out(), p = s.k / 2;
  dnnl::memory::desc src({1, s.c, s.hw, s.hw}, f32, blocked), dst({1, s.c, out, out}, f32, blocked),
      wany({s.c, 1, 1, s.k, s.k}, f32, tag::any), bias({s.c}, f32, tag::a);
  dnnl::post_ops po;
  if (s.silu) po.append_eltwise(1.f, dnnl::algorithm::eltwise_swish, 1.f, 0.f);
  else po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  const auto pd = dnnl::convolution_forward::primitive_desc(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, wany,
                                      bias, dst, {s.stride, s.stride}, {p, p}, {p, p}),
      attr, eng);
  time_onednn(st, eng, pd, 0.3f, s.flops());
}
// MobileNetV2's, MNASNet's and EfficientNet-B0's (channels, map, stride,
// kernel, SiLU)
#define SHAPES_DEPTHWISE(X)                     \
  X(mbv2_112_s2, {96, 112, 2, 3, false})        \
  X(mbv2_56, {144, 56, 1, 3, false})            \
  X(mbv2_28, {192, 28, 1, 3, false})            \
  X(mbv2_14, {384, 14, 1, 3, false})            \
  X(mbv2_7, {960, 7, 1, 3, false})              \
  X(mnas_56_5x5_s2, {72, 56, 2, 5, false})      \
  X(mnas_28_5x5, {120, 28, 1, 5, false})        \
  X(mnas_14_5x5, {480, 14, 1, 5, false})        \
  X(effb0_112, {32, 112, 1, 3, true})           \
  X(effb0_56, {144, 56, 1, 3, true})            \
  X(effb0_112_s2, {96, 112, 2, 3, true})        \
  X(effb0_56_5x5_s2, {144, 56, 2, 5, true})     \
  X(effb0_28_5x5, {240, 28, 1, 5, true})        \
  X(effb0_14_5x5, {672, 14, 1, 5, true})        \
  X(effb0_7_5x5, {1152, 7, 1, 5, true})
#define REGISTER_DEPTHWISE(name, ...)                                                                                     \
  BENCHMARK_CAPTURE(BM_DepthwiseVinfer, name, ShapeDepthwise __VA_ARGS__)->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond); \
  BENCHMARK_CAPTURE(BM_DepthwiseOneDnn, name, ShapeDepthwise __VA_ARGS__)->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond);
SHAPES_DEPTHWISE(REGISTER_DEPTHWISE)

// Inverted residuals (1x1 expansion with ReLU6, depthwise with ReLU6, 1x1
// projection, the residual where the shapes allow): vinfer's chain in one
// pass against the same three kernels run one after another.
struct ShapeChain {
  int ic, expanded, oc, hw, stride, k;
  int out() const { return (hw + 2 * (k / 2) - k) / stride + 1; }
};

struct ChainFixture {
  std::vector<float> x, e, d, y;
  std::unique_ptr<vinfer::cpu::ConvChain> chain;
  vinfer::cpu::Block scratch;
  vinfer::cpu::ConvChainStrides strides;
  bool residual;
  double flops;
  ChainFixture(const ShapeChain& s, int threads) {
    using namespace vinfer::cpu;
    const int B = block(), oh = s.out();
    auto padded = [&](int c) { return static_cast<std::size_t>((c + B - 1) / B * B); };
    x = random_values(padded(s.ic) * s.hw * s.hw, 1.f);
    e.assign(padded(s.expanded) * s.hw * s.hw, 0.f);
    d.assign(padded(s.expanded) * oh * oh, 0.f);
    y.assign(padded(s.oc) * oh * oh, 0.f);
    strides = {x.size(), e.size(), d.size(), y.size()};
    residual = s.stride == 1 && s.ic == s.oc;
    Conv1x1Geometry ex, pr;
    ex.ic = s.ic, ex.oc = s.expanded, ex.hw = s.hw * s.hw, ex.block = B;
    pr.ic = s.expanded, pr.oc = s.oc, pr.hw = oh * oh, pr.block = B;
    GroupConvGeometry g;
    g.c = s.expanded, g.gw = 1, g.h = g.w = s.hw, g.oh = g.ow = oh, g.k = s.k, g.stride = s.stride;
    g.pad_t = g.pad_l = s.k / 2, g.block = B;
    if (!ConvChain::supports(ex, g, pr, threads)) return;
    const auto w1 = random_values(static_cast<std::size_t>(s.expanded) * s.ic, 0.2f), b1 = random_values(s.expanded, 0.1f);
    const auto w2 = random_values(static_cast<std::size_t>(s.expanded) * s.k * s.k, 0.3f), b2 = random_values(s.expanded, 0.1f);
    const auto w3 = random_values(static_cast<std::size_t>(s.oc) * s.expanded, 0.1f), b3 = random_values(s.oc, 0.1f);
    chain = std::make_unique<ConvChain>(std::make_unique<Conv1x1Pre>(ex, w1.data(), b1.data(), PreActivation{}, 0.f, 6.f),
                                        std::make_unique<GroupConv>(g, w2.data(), b2.data(), 0.f, 6.f),
                                        std::make_unique<Conv1x1Pre>(pr, w3.data(), b3.data(), PreActivation{}));
    scratch = aligned_block(std::max({chain->scratch_bytes(threads), chain->expand().scratch_bytes(threads),
                                      chain->depthwise().scratch_bytes(threads), chain->project().scratch_bytes(threads)}));
    flops = 2.0 * (static_cast<double>(s.ic) * s.expanded * s.hw * s.hw +
                   static_cast<double>(s.expanded) * s.k * s.k * oh * oh + static_cast<double>(s.expanded) * s.oc * oh * oh);
  }
};

// one_pass: the chain; else its three kernels one after another.
void BM_Chain(benchmark::State& st, ShapeChain s, bool one_pass) {
  const int threads = static_cast<int>(st.range(0));
  omp_set_num_threads(threads);
  ChainFixture f(s, threads);
  if (!f.chain) return st.SkipWithError("no chain for this CPU or shape");
  const float* res = f.residual ? f.x.data() : nullptr;
  for (auto _ : st) {
    evict_caches(st);
    if (one_pass) {
      f.chain->run(f.x.data(), f.e.data(), f.d.data(), f.y.data(), res, f.scratch.get(), threads, 1, f.strides);
      continue;
    }
    f.chain->expand().run(f.x.data(), f.e.data(), f.scratch.get(), threads);
    f.chain->depthwise().run(f.e.data(), f.d.data(), f.scratch.get(), threads);
    f.chain->project().run(f.d.data(), f.y.data(), f.scratch.get(), threads, nullptr, res);
  }
  st.counters["GFLOP/s"] = benchmark::Counter(f.flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}
// MobileNetV2's and MNASNet's (input, expanded, output channels, map,
// stride, kernel)
#define SHAPES_CHAIN(X)                               \
  X(ChainMobileNetV2_56, {24, 144, 24, 56, 1, 3})     \
  X(ChainMobileNetV2_56_s2, {24, 144, 32, 56, 2, 3})  \
  X(ChainMobileNetV2_28, {32, 192, 32, 28, 1, 3})     \
  X(ChainMobileNetV2_14, {64, 384, 64, 14, 1, 3})     \
  X(ChainMobileNetV2_14_96, {96, 576, 96, 14, 1, 3})  \
  X(ChainMnasNet_56, {24, 72, 24, 56, 1, 3})          \
  X(ChainMnasNet_28_5x5, {40, 120, 40, 28, 1, 5})
#define REGISTER_CHAIN(name, ...)                                                                                  \
  BENCHMARK_CAPTURE(BM_Chain, name##_one_pass, ShapeChain __VA_ARGS__, true)->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond); \
  BENCHMARK_CAPTURE(BM_Chain, name##_three_kernels, ShapeChain __VA_ARGS__, false)->ArgsProduct({{1, 2}, {0, 1}})->Unit(benchmark::kMillisecond);
SHAPES_CHAIN(REGISTER_CHAIN)

}  // namespace

BENCHMARK_MAIN();
