// Every CPU kernel against the reference kernels (graph/reference.cpp) on
// small graphs covering each attribute: the oneDNN backend, with the fusion
// passes on, must give the reference's numbers with the passes off.
#include <gtest/gtest.h>
#include <omp.h>


#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <set>

#include "cpu/conv1x1.hpp"
#include "cpu/gemv.hpp"
#include "cpu/kernels.hpp"
#include "cpu/norm_pool.hpp"
#include "cpu/tune.hpp"
#include "cpu/winograd.hpp"
#include "cpu/winograd_u8.hpp"
#include "graph/activation.hpp"
#include "util/cpu_features.hpp"
#ifdef VINFER_HAS_CUDA
#include "cuda/cuda_backend.hpp"
#endif
#include "test_support.hpp"
#include "vinfer/devices.hpp"
#include "vinfer/engine.hpp"
#include "vinfer/error.hpp"
#include "vinfer/preprocess.hpp"
#include "vinfer/stats.hpp"
#include "vinfer/zoo.hpp"

namespace vinfer {
namespace {

using Ints = std::vector<std::int64_t>;

// Which of the channel-block kernels (8: AVX2, 16: AVX-512) a test compared.
// Those the CPU (or VINFER_ISA) rules out are named on stderr and as a test
// property; a test that compared none is reported as skipped, not passed.
class IsaCoverage {
 public:
  bool runs(int block) {
    const bool yes = cpu::simd_block_runs(block);
    (yes ? compared_ : skipped_).insert(block);
    return yes;
  }
  void report() const {
    if (skipped_.empty()) return;
    std::string names;
    for (int b : skipped_) names += (names.empty() ? "" : ", ") + std::to_string(b);
    ::testing::Test::RecordProperty("blocks_not_compared", names);
    std::fprintf(stderr, "note: channel blocks %s not compared (not run at ISA level %s)\n", names.c_str(),
                 detail::to_string(detail::cpu_features().level));
    if (compared_.empty()) GTEST_SKIP() << "no SIMD kernel runs at this ISA level: nothing was compared";
  }

 private:
  std::set<int> compared_, skipped_;
};

// Whether a CUDA device is there to test (builds with the CUDA backend, on a GPU machine).
bool have_cuda_device() {
  for (const BackendInfo& b : backends())
    if (b.name == "cuda" && !b.devices.empty()) return true;
  return false;
}

// max |a - b| over n values; NaN if any difference is (an output never
// written stays NaN, and std::max would skip it).
double max_abs_diff(const float* a, const float* b, std::size_t n) {
  double diff = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
    if (std::isnan(d)) return d;
    diff = std::max(diff, d);
  }
  return diff;
}

// max |a - b| / max |a|.
double rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  const double diff = max_abs_diff(a.data(), b.data(), std::min(a.size(), b.size()));
  double scale = 1e-30;
  for (std::size_t i = 0; i < a.size(); ++i) {
    scale = std::max(scale, static_cast<double>(std::fabs(a[i])));
  }
  return diff / scale;
}

// Runs `g` on the CPU backend (optimized) and the reference (unoptimized); returns max |diff| / max |ref|.
// Where a CUDA device is present, the CUDA backend runs it too and the worse of the two counts.
double cpu_vs_reference(const Graph& g, ModelInfo* info = nullptr, std::size_t* graph_nodes = nullptr) {
  EngineOptions ref_opt;
  ref_opt.backend = Backend::Reference;
  ref_opt.optimize = false;
  Model ref = Model::from_graph(g, "test", ref_opt);
  EngineOptions cpu_opt;
  cpu_opt.threads = 2;
  Model cpu = Model::from_graph(g, "test", cpu_opt);
  if (info) *info = cpu.info();
  if (graph_nodes) *graph_nodes = cpu.graph().nodes.size();
  const TensorData x = test::random_tensor(ref.input_shape(), 99);
  std::vector<float> a(ref.output_size()), b(cpu.output_size(), NAN);
  EXPECT_EQ(a.size(), b.size());
  ref.run(x.f.data(), a.data());
  cpu.run(x.f.data(), b.data());
  double worst = rel_diff(a, b);
  if (have_cuda_device()) {
    EngineOptions cu_opt;
    cu_opt.backend = Backend::Cuda;
    std::optional<Model> loaded;
    try {
      loaded.emplace(Model::from_graph(g, "test", cu_opt));
    } catch (const Error& e) {
      // Operators the CUDA backend refuses by name (attention, LayerNorm, ...) are not compared there.
      if (e.kind() != ErrorKind::Unsupported) throw;
      std::printf("CUDA backend: %s\n", e.what());
      return worst;
    }
    Model& cu = *loaded;
    std::vector<float> c(cu.output_size(), NAN);
    cu.run(x.f.data(), c.data());
    const double d = rel_diff(a, c);
    EXPECT_LT(d, 1e-4) << "CUDA backend";
    worst = std::max(worst, d);
  }
  return worst;
}

// The graph loaded on 2 threads with the environment setting var=value
// (none for a null var) while it builds: the implementations of its ops in
// order, space-separated; rel: how far its output is from the reference's.
std::string impls_with(const Graph& g, const char* var, const char* value, double& rel) {
  if (var) ::setenv(var, value, 1);
  rel = cpu_vs_reference(g);
  EngineOptions opt;
  opt.threads = 2;
  Model m = Model::from_graph(g, "test", opt);
  if (var) ::unsetenv(var);
  std::string impls;
  const TensorData x = test::random_tensor(m.input_shape(), 3);
  std::vector<float> y(m.output_size());
  for (const LayerProfile& l : m.profile(x.f.data(), y.data())) impls += l.impl + " ";
  return impls;
}

// cpu_vs_reference within 1e-5, and no op on oneDNN's reference kernel
// where oneDNN runs at AVX2 or better (at level plain it may need them).
void expect_fast_and_exact(const Graph& g, const std::string& what) {
  EXPECT_LT(cpu_vs_reference(g), 1e-5) << what;
  if (detail::cpu_features().level == detail::IsaLevel::Plain) return;
  EngineOptions opt;
  opt.threads = 2;
  Model m = Model::from_graph(g, "test", opt);
  std::vector<float> in(m.input_size(), 0.5f), out(m.output_size());
  for (const LayerProfile& l : m.profile(in.data(), out.data()))
    EXPECT_EQ(l.impl.rfind("ref", 0), std::string::npos) << what << ": " << l.name << " runs " << l.impl;
}

Graph conv_graph(Shape x, std::int64_t m, Ints k, std::map<std::string, AttrValue> attrs, bool bias, unsigned seed) {
  Graph g;
  const int in = g.add_input("x", x);
  const std::int64_t group = attrs.count("group") ? std::get<std::int64_t>(attrs["group"]) : 1;
  const int w = g.add_constant("w", test::random_tensor({m, x[1] / group, k[0], k[1]}, seed));
  std::vector<int> ins{in, w};
  if (bias) ins.push_back(g.add_constant("b", test::random_tensor({m}, seed + 1)));
  g.mark_output(g.add_node("Conv", ins, attrs)[0]);
  return g;
}

TEST(EngineOps, ConvVariants) {
  struct Case {
    const char* what;
    Shape x;
    std::int64_t m;
    Ints k;
    std::map<std::string, AttrValue> attrs;
    bool bias;
  };
  const std::vector<Case> cases = {
      {"first layer, 3 channels, stride 2", {1, 3, 31, 29}, 16, {7, 7}, {{"strides", Ints{2, 2}}, {"pads", Ints{3, 3, 3, 3}}}, true},
      {"1x1 no bias", {1, 32, 9, 9}, 24, {1, 1}, {}, false},
      {"asymmetric pads", {1, 16, 10, 12}, 8, {3, 3}, {{"pads", Ints{0, 1, 2, 1}}}, true},
      {"dilation 2", {1, 8, 15, 15}, 8, {3, 3}, {{"dilations", Ints{2, 2}}, {"pads", Ints{2, 2, 2, 2}}}, true},
      {"groups 2", {1, 16, 8, 8}, 32, {3, 3}, {{"group", std::int64_t{2}}, {"pads", Ints{1, 1, 1, 1}}}, true},
      {"depthwise stride 2", {1, 24, 13, 13}, 24, {3, 3}, {{"group", std::int64_t{24}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}, true},
      {"channels not a multiple of 8", {1, 12, 7, 9}, 10, {3, 1}, {{"pads", Ints{1, 0, 1, 0}}}, true},
      {"SAME_UPPER", {1, 8, 10, 11}, 8, {3, 3}, {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 2}}}, true},
  };
  unsigned seed = 1;
  for (const Case& c : cases) EXPECT_LT(cpu_vs_reference(conv_graph(c.x, c.m, c.k, c.attrs, c.bias, seed++)), 1e-5) << c.what;
}

// ConvTranspose (YOLO's segmentation head, U-Nets): oneDNN's deconvolution
// against the reference for each attribute ONNX gives it.
TEST(EngineOps, ConvTransposeVariants) {
  struct Case {
    const char* what;
    Shape x;
    std::int64_t m;  // output channels
    Ints k;
    std::map<std::string, AttrValue> attrs;
    bool bias;
  };
  const std::vector<Case> cases = {
      {"2x2 stride 2 (YOLOv8-seg's upsampling)", {1, 32, 10, 12}, 32, {2, 2}, {{"strides", Ints{2, 2}}}, true},
      {"3x3 stride 1, pads", {1, 8, 9, 7}, 16, {3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, false},
      {"stride 2, output_padding", {1, 16, 6, 6}, 8, {3, 3}, {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"output_padding", Ints{1, 1}}}, true},
      {"dilation 2, asymmetric pads", {1, 8, 7, 8}, 8, {3, 3}, {{"dilations", Ints{2, 2}}, {"pads", Ints{0, 1, 2, 0}}}, true},
      {"groups 2", {1, 16, 5, 5}, 12, {3, 3}, {{"group", std::int64_t{2}}, {"strides", Ints{2, 2}}}, true},
      {"output_shape", {1, 8, 4, 5}, 8, {3, 3}, {{"strides", Ints{3, 2}}, {"output_shape", Ints{12, 10}}}, true},
      {"SAME_UPPER", {1, 8, 5, 6}, 4, {3, 3}, {{"strides", Ints{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}, true},
      {"channels not a multiple of 8", {1, 5, 6, 6}, 3, {4, 4}, {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}, true},
  };
  unsigned seed = 40;
  for (const Case& c : cases) {
    Graph g;
    const int in = g.add_input("x", c.x);
    const std::int64_t group = c.attrs.count("group") ? std::get<std::int64_t>(c.attrs.at("group")) : 1;
    std::vector<int> ins{in, g.add_constant("w", test::random_tensor({c.x[1], c.m / group, c.k[0], c.k[1]}, seed++))};
    if (c.bias) ins.push_back(g.add_constant("b", test::random_tensor({c.m}, seed++)));
    g.mark_output(g.add_node("ConvTranspose", ins, c.attrs)[0]);
    EXPECT_LT(cpu_vs_reference(g), 1e-5) << c.what;
    EngineOptions o;
    o.threads = 2;
    Model m = Model::from_graph(g, "test", o);
    std::vector<float> x(m.input_size(), 0.5f), y(m.output_size());
    for (const LayerProfile& l : m.profile(x.data(), y.data()))
      EXPECT_EQ(l.impl.find("reference"), std::string::npos) << c.what << " runs " << l.impl;
  }
}

// Resize in mode nearest on vinfer's gather (YOLO's 2x upsampling; every
// coordinate mode and rounding), the other modes on its separable passes,
// against the reference.
TEST(EngineOps, ResizeVariants) {
  struct Case {
    const char* what;
    Shape x;
    std::vector<float> scales;
    std::map<std::string, AttrValue> attrs;
  };
  const std::vector<Case> cases = {
      {"YOLO: 2x, asymmetric, floor", {1, 8, 10, 12}, {1, 1, 2, 2},
       {{"coordinate_transformation_mode", std::string("asymmetric")}, {"nearest_mode", std::string("floor")}}},
      {"half_pixel, round_prefer_floor, down", {1, 3, 9, 7}, {1, 1, 0.6f, 0.5f}, {}},
      {"align_corners, ceil, up 1.7", {2, 2, 5, 6}, {1, 1, 1.7f, 1.3f},
       {{"coordinate_transformation_mode", std::string("align_corners")}, {"nearest_mode", std::string("ceil")}}},
      {"pytorch_half_pixel, round_prefer_ceil, channels too", {1, 4, 6, 6}, {1, 0.5f, 3, 1},
       {{"coordinate_transformation_mode", std::string("pytorch_half_pixel")}, {"nearest_mode", std::string("round_prefer_ceil")}}},
      {"linear, half_pixel (the segmenters' upsampling)", {1, 5, 7, 9}, {1, 1, 4.3f, 3.5f}, {{"mode", std::string("linear")}}},
      {"linear, align_corners, down", {1, 3, 12, 10}, {1, 1, 0.5f, 0.7f},
       {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("align_corners")}}},
      {"linear antialias down", {1, 2, 16, 16}, {1, 1, 0.3f, 0.45f}, {{"mode", std::string("linear")}, {"antialias", std::int64_t{1}}}},
      {"cubic, exclude_outside", {1, 2, 6, 7}, {1, 1, 2.5f, 1.5f},
       {{"mode", std::string("cubic")}, {"exclude_outside", std::int64_t{1}}, {"cubic_coeff_a", -0.5f}}},
  };
  for (const Case& c : cases) {
    const bool nearest = !c.attrs.count("mode");
    Graph g;
    const int x = g.add_input("x", c.x);
    const int roi = g.add_constant("roi", TensorData::f32({0}, {}));
    const int sc = g.add_constant("scales", TensorData::f32({static_cast<std::int64_t>(c.scales.size())}, c.scales));
    auto attrs = c.attrs;
    if (nearest) attrs["mode"] = std::string("nearest");
    g.mark_output(g.add_node("Resize", {x, roi, sc}, attrs)[0]);
    ModelInfo info;
    if (nearest) EXPECT_EQ(cpu_vs_reference(g, &info), 0.0) << c.what;
    else EXPECT_LT(cpu_vs_reference(g, &info), 1e-6) << c.what;
    const std::string impl = nearest ? "vinfer:resize_nearest" : "vinfer:resize_separable";
    EXPECT_TRUE(std::any_of(info.kernels.begin(), info.kernels.end(), [&](const auto& k) { return k.second == impl; })) << c.what;
  }
}

// Every activation (graph/activation.hpp): the formula against values
// PyTorch gives (torch.nn.functional at these points), then each standalone
// on 4-D and 2-D tensors and fused into the convolution before it, on every
// backend against the reference; ONNX's non-default parameters read.
TEST(EngineOps, Activations) {
  struct Point {
    PostOp::Kind kind;
    float alpha, beta, x, want;
  };
  for (const Point& p : {Point{PostOp::HardSwish, 0, 0, -3.5f, 0.f}, Point{PostOp::HardSwish, 0, 0, 1.f, 0.6666667f},
                         Point{PostOp::HardSwish, 0, 0, 3.5f, 3.5f}, Point{PostOp::HardSigmoid, 1.f / 6, 0.5f, 1.f, 0.6666667f},
                         Point{PostOp::HardSigmoid, 0.2f, 0.5f, -4.f, 0.f}, Point{PostOp::LeakyRelu, 0.01f, 0, -2.f, -0.02f},
                         Point{PostOp::Tanh, 0, 0, 0.5f, 0.46211716f}, Point{PostOp::Gelu, 0, 0, 1.f, 0.84134475f},
                         Point{PostOp::Gelu, 0, 0, -2.f, -0.04550026f}, Point{PostOp::Swish, 0, 0, 1.f, 0.7310586f}}) {
    PostOp a;
    a.kind = p.kind, a.alpha = p.alpha, a.beta = p.beta;
    EXPECT_NEAR(detail::apply_activation(a, p.x), p.want, 1e-6) << to_string(p.kind) << "(" << p.x << ")";
  }
  for (const std::string& op : detail::activation_ops()) {
    std::map<std::string, AttrValue> attrs;
    if (op == "HardSigmoid") attrs = {{"alpha", 1.f / 6}, {"beta", 0.5f}};  // as PyTorch exports it
    if (op == "LeakyRelu") attrs = {{"alpha", 0.1f}};
    if (op == "Clip") attrs = {{"min", -0.5f}, {"max", 0.75f}, {"vinfer.opset", std::int64_t{6}}};
    for (const Shape& x : {Shape{1, 20, 5, 5}, Shape{1, 37}}) {
      Graph g;
      g.mark_output(g.add_node(op, {g.add_input("x", x)}, attrs)[0]);
      EXPECT_LT(cpu_vs_reference(g), 1e-6) << op << " on " << shape_str(x);
    }
    Graph g;
    const int x = g.add_input("x", {1, 16, 6, 6});
    const int w = g.add_constant("w", test::random_tensor({16, 16, 3, 3}, 7));
    const int c = g.add_node("Conv", {x, w}, {{"pads", Ints{1, 1, 1, 1}}})[0];
    g.mark_output(g.add_node(op, {c}, attrs)[0]);
    ModelInfo info;
    std::size_t nodes = 0;
    EXPECT_LT(cpu_vs_reference(g, &info, &nodes), 1e-5) << op << " after a Conv";
    EXPECT_EQ(nodes, 1u) << op << " is fused into the Conv";
  }
  Graph g;  // ONNX's Gelu with the tanh approximation is refused by name
  g.mark_output(g.add_node("Gelu", {g.add_input("x", {1, 4})}, {{"approximate", std::string("tanh")}})[0]);
  try {
    Model::from_graph(g, "test", EngineOptions{});
    ADD_FAILURE() << "Gelu(approximate='tanh') loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("approximate='tanh'"), std::string::npos) << e.what();
  }
}

// Sqrt, and Pow by a constant scalar (older exporters' decomposed
// LayerNormalization: x - mean, squared, mean, + eps, root) on oneDNN's
// element-wise kernels, as the reference computes them; a runtime exponent
// stays on the reference evaluator.
TEST(EngineOps, SqrtAndPowByAConstant) {
  for (const float e : {2.f, 3.f, 0.5f}) {
    for (const Shape& s : {Shape{1, 20, 5, 5}, Shape{1, 7, 37}}) {
      Graph g;
      const int x = g.add_input("x", s);
      const int sq = g.add_node("Pow", {g.add_node("Abs", {x})[0], g.add_constant("e", TensorData::f32({}, {e}))})[0];
      g.mark_output(g.add_node("Sqrt", {sq})[0]);
      ModelInfo info;
      EXPECT_LT(cpu_vs_reference(g, &info), 1e-6) << "exponent " << e << " on " << shape_str(s);
      for (const auto& [node, impl] : info.kernels)
        if (node.rfind("Pow", 0) == 0 || node.rfind("Sqrt", 0) == 0) EXPECT_NE(impl, "vinfer:reference") << node;
    }
  }
  Graph g;
  const int x = g.add_input("x", {1, 8});
  g.mark_output(g.add_node("Pow", {g.add_node("Abs", {x})[0], x}, {}, 1, "runtime_exponent")[0]);
  ModelInfo info;
  EXPECT_LT(cpu_vs_reference(g, &info), 1e-6);
  bool named = false;
  for (const std::string& p : info.passes)
    named |= p.find("reference_fallback") == 0 && p.find("Pow 'runtime_exponent' (") != std::string::npos;
  EXPECT_TRUE(named) << "a runtime exponent runs on the reference evaluator";
}

// ConvNeXt's blocks (depthwise 7x7 -> NHWC -> LayerNorm -> MLP -> NCHW ->
// layer scale -> residual), two in a row after a 4x4 stride-4 stem whose
// output is transposed too: exact, the convolutions in channels-last so that
// no Transpose copies (each renames its input's bytes), none on oneDNN's
// reference kernel. 40 channels: no whole number of blocks.
TEST(EngineOps, ConvNextBlocksStayChannelsLast) {
  const std::int64_t c = 40;
  Graph g;
  const int x = g.add_input("x", {2, 3, 36, 36});
  auto constant = [&](const char* name, Shape s, unsigned seed) { return g.add_constant(name, test::random_tensor(std::move(s), seed)); };
  auto transpose = [&](int v, Ints perm) { return g.add_node("Transpose", {v}, {{"perm", perm}})[0]; };
  auto norm = [&](int v) {  // over the channels, in NHWC
    return g.add_node("LayerNormalization", {v, g.add_constant("s", test::random_tensor({c}, 5, 0.5f, 1.5f)), constant("b", {c}, 6)},
                      {{"axis", std::int64_t{-1}}, {"epsilon", 1e-6f}})[0];
  };
  const int stem = g.add_node("Conv", {x, constant("w0", {c, 3, 4, 4}, 1), constant("b0", {c}, 2)},
                              {{"strides", Ints{4, 4}}})[0];
  int y = transpose(norm(transpose(stem, {0, 2, 3, 1})), {0, 3, 1, 2});
  for (unsigned b = 0; b < 2; ++b) {
    const int dw = g.add_node("Conv", {y, constant("wd", {c, 1, 7, 7}, 10 + b), constant("bd", {c}, 20 + b)},
                              {{"group", c}, {"pads", Ints{3, 3, 3, 3}}})[0];
    const int h = g.add_node("Relu", {g.add_node("MatMul", {norm(transpose(dw, {0, 2, 3, 1})), constant("w1", {c, 2 * c}, 30 + b)})[0]})[0];
    const int back = transpose(g.add_node("MatMul", {h, constant("w2", {2 * c, c}, 40 + b)})[0], {0, 3, 1, 2});
    y = g.add_node("Add", {g.add_node("Mul", {constant("gamma", {c, 1, 1}, 50 + b), back})[0], y})[0];
  }
  g.mark_output(g.add_node("GlobalAveragePool", {y})[0]);
  EXPECT_LT(cpu_vs_reference(g), 1e-5);
  if (detail::cpu_features().level == detail::IsaLevel::Plain) return;  // (oneDNN's reference kernels there)
  EngineOptions opt;
  opt.threads = 2;
  Model m = Model::from_graph(g, "test", opt);
  const TensorData in = test::random_tensor(m.input_shape(), 3);
  std::vector<float> out(m.output_size());
  std::string layers;
  for (const LayerProfile& l : m.profile(in.f.data(), out.data())) {
    layers += l.name + " [" + l.impl + "]\n";
    EXPECT_NE(l.name.rfind("Transpose", 0), 0u) << l.name;
    EXPECT_NE(l.impl.rfind("ref", 0), 0u) << l.name;
  }
  EXPECT_EQ(layers.find("to blocked"), std::string::npos) << layers;
}

// LayerNormalization over the last axis and over the last two, with and
// without bias, against the reference (itself against numbers worked by hand
// below); ConvNeXt's channels-last block and ViT's attention products run too.
TEST(EngineOps, LayerNormAndAttention) {
  for (const std::int64_t axis : {-1, 1}) {
    for (const bool bias : {true, false}) {
      Graph g;
      const int x = g.add_input("x", {2, 5, 24});
      const std::int64_t len = axis == -1 ? 24 : 120;
      std::vector<int> ins{x, g.add_constant("s", test::random_tensor({len}, 3, 0.5f, 1.5f))};
      if (bias) ins.push_back(g.add_constant("b", test::random_tensor({len}, 4)));
      g.mark_output(g.add_node("LayerNormalization", ins, {{"axis", axis}, {"epsilon", 1e-3f}})[0]);
      EXPECT_LT(cpu_vs_reference(g), 2e-5) << "axis " << axis << " bias " << bias;
    }
  }
  {  // [1, 3] = (-1, 0, 1): mean 0, variance 2/3 -> (-1.2247, 0, 1.2247)
    Graph g;
    const int x = g.add_input("x", {1, 3});
    g.mark_output(g.add_node("LayerNormalization", {x, g.add_constant("s", TensorData::f32({3}, {1.f, 1.f, 2.f}))},
                             {{"epsilon", 0.f}})[0]);
    EngineOptions ref;
    ref.backend = Backend::Reference;
    Model m = Model::from_graph(g, "test", ref);
    const float in[3] = {-1.f, 0.f, 1.f};
    float out[3];
    m.run(in, out);
    EXPECT_NEAR(out[0], -1.2247449f, 1e-6);
    EXPECT_NEAR(out[1], 0.f, 1e-6);
    EXPECT_NEAR(out[2], 2 * 1.2247449f, 1e-6);
  }
  {  // attention: softmax(q k^T / 8) v over 2 heads, with q, k, v gathered from one packed tensor
    Graph g;
    const int x = g.add_input("x", {3, 1, 2, 5, 4});
    auto pick = [&](std::int64_t i) {
      return g.add_node("Gather", {x, g.add_constant("i" + std::to_string(i), TensorData::i64({}, {i}))}, {{"axis", std::int64_t{0}}})[0];
    };
    const int q = pick(0), k = pick(1), v = pick(2);
    const int kt = g.add_node("Transpose", {k}, {{"perm", Ints{0, 1, 3, 2}}})[0];
    const int s = g.add_node("MatMul", {q, kt})[0];
    const int p = g.add_node("Softmax", {g.add_node("Div", {s, g.add_constant("d", TensorData::f32({}, {8.f}))})[0]})[0];
    g.mark_output(g.add_node("MatMul", {p, v})[0]);
    ModelInfo info;
    EXPECT_LT(cpu_vs_reference(g, &info), 1e-6);
    for (const std::string& line : info.passes) EXPECT_EQ(line.rfind("reference_fallback", 0), std::string::npos) << line;
  }
  {  // a class token concatenated in front, then MatMul by a broadcast batch
    Graph g;
    const int x = g.add_input("x", {1, 4, 6});
    const int c = g.add_node("Concat", {g.add_constant("tok", test::random_tensor({1, 1, 6}, 8)), x}, {{"axis", std::int64_t{1}}})[0];
    g.mark_output(g.add_node("MatMul", {c, g.add_node("Transpose", {c}, {{"perm", Ints{0, 2, 1}}})[0]})[0]);
    ModelInfo info;
    EXPECT_LT(cpu_vs_reference(g, &info), 1e-6);
    for (const std::string& line : info.passes) EXPECT_EQ(line.rfind("reference_fallback", 0), std::string::npos) << line;
  }
}

// Slice on runtime values (ShuffleNet's channel split): a reorder, not the
// reference fallback, for windows on any axis, negative and clamped bounds.
TEST(EngineOps, SliceRuntimeValues) {
  struct Case {
    Shape x;
    Ints starts, ends, axes;
  };
  for (const Case& c : {Case{{1, 116, 7, 7}, {58}, {116}, {1}}, Case{{1, 116, 7, 7}, {0}, {58}, {1}},
                        Case{{1, 32, 9, 9}, {1, -3}, {4, 100}, {2, 3}}, Case{{1, 50}, {-20}, {-1}, {-1}},
                        Case{{2, 3, 8, 5}, {2}, {7}, {2}}}) {
    Graph g;
    const int x = g.add_input("x", c.x);
    auto ints = [&](const char* name, const Ints& v) {
      return g.add_constant(name, TensorData::i64({static_cast<std::int64_t>(v.size())}, v));
    };
    const int y = g.add_node("Slice", {x, ints("s", c.starts), ints("e", c.ends), ints("a", c.axes)})[0];
    g.mark_output(g.add_node("Relu", {y})[0]);
    ModelInfo info;
    EXPECT_LT(cpu_vs_reference(g, &info), 1e-7) << shape_str(c.x);
    for (const std::string& p : info.passes) EXPECT_EQ(p.rfind("reference_fallback", 0), std::string::npos) << p;
  }
  // Plain concatenation along an inner axis (rows of runs from each input).
  Graph g;
  const int x = g.add_input("x", {2, 3, 4, 5});
  const int y = g.add_node("Sigmoid", {x})[0];
  g.mark_output(g.add_node("Concat", {x, y, x}, {{"axis", std::int64_t{2}}})[0]);
  EXPECT_LT(cpu_vs_reference(g), 1e-7);
}

// ShuffleNet's channel shuffle and split (graph pass fuse_channel_shuffle)
// run as vinfer's channel gathers, exactly, with no Transpose, Reshape,
// Slice or Split left (either form of the split). Channel counts that are no multiple of a vector (ShuffleNet
// v2 1.0's 116), a batch, three groups.
TEST(EngineOps, ChannelShuffleGathers) {
  for (const bool split : {false, true})
  for (const auto& [shape, groups] : {std::pair<Shape, std::int64_t>{{2, 24, 5, 7}, 2}, {{1, 48, 6, 3}, 3}, {{1, 116, 7, 7}, 2}}) {
    const Graph g = test::channel_shuffle_graph(shape, groups, split);
    EXPECT_LT(cpu_vs_reference(g), 1e-6) << shape_str(shape);
    EngineOptions opt;
    opt.threads = 2;
    Model m = Model::from_graph(g, "test", opt);
    const TensorData x = test::random_tensor(m.input_shape(), 3);
    std::vector<float> y(m.output_size());
    int gathers = 0;
    for (const LayerProfile& l : m.profile(x.f.data(), y.data())) {
      for (const char* op : {"Transpose", "Reshape", "Slice", "Split"}) EXPECT_NE(l.name.rfind(op, 0), 0u) << l.name;
      if (l.name.rfind("vinfer.ChannelGather", 0) == 0) {
        ++gathers;
        EXPECT_EQ(l.impl.rfind("vinfer:channel_gather", 0), 0u) << l.impl;  // (each ISA's: the suite's VINFER_ISA runs)
      }
    }
    EXPECT_EQ(gathers, 3) << shape_str(shape);
  }
}

// Strided Slice, Split, Pad and the reductions on runtime values (Swin's patch
// merging, window padding and normalization): kernels, not the fallback,
// except for steps a strided view cannot express.
TEST(EngineOps, StridedSlicePadAndReductions) {
  auto ints = [](Graph& g, const char* name, const Ints& v) {
    return g.add_constant(name, TensorData::i64({static_cast<std::int64_t>(v.size())}, v));
  };
  auto fallback = [](const ModelInfo& info) {
    for (const std::string& p : info.passes)
      if (p.rfind("reference_fallback", 0) == 0) return true;
    return false;
  };
  for (const std::int64_t step : {2, 3, -2}) {
    Graph g;
    const int x = g.add_input("x", {1, 9, 8, 6});
    const Ints starts = step > 0 ? Ints{1, 0} : Ints{-1, 100};
    const Ints ends = step > 0 ? Ints{100, 8} : Ints{0, -100};
    g.mark_output(g.add_node("Slice", {x, ints(g, "s", starts), ints(g, "e", ends), ints(g, "a", {2, 3}), ints(g, "t", {step, step})})[0]);
    ModelInfo info;
    EXPECT_LT(cpu_vs_reference(g, &info), 1e-7) << "step " << step;
    // (Step 3 here: oneDNN takes no view whose span along an axis passes the
    // next axis's stride, so the reference copies it.)
    EXPECT_EQ(fallback(info), step != 2) << "step " << step;
  }
  {
    Graph g;
    const int x = g.add_input("x", {1, 3, 5, 4});
    g.mark_output(g.add_node("Pad", {x, ints(g, "p", {0, 0, 1, 2, 0, 1, 3, 0}), g.add_constant("v", TensorData::f32({}, {0.5f}))})[0]);
    ModelInfo info;
    EXPECT_LT(cpu_vs_reference(g, &info), 1e-7);
    EXPECT_FALSE(fallback(info));
  }
  for (const std::int64_t parts : {2, 3}) {  // opset 18's num_outputs (7 = 3 + 3 + 1), and the split input
    Graph g;
    const int x = g.add_input("x", {1, 7, 4, 3});
    std::vector<int> ins{x};
    std::map<std::string, AttrValue> attrs{{"axis", std::int64_t{1}}};
    if (parts == 3) attrs["num_outputs"] = std::int64_t{3};
    else ins.push_back(ints(g, "split", {5, 2}));
    const std::vector<int> outs = g.add_node("Split", ins, attrs, static_cast<int>(parts));
    int y = outs[0];
    for (std::size_t o = 1; o < outs.size(); ++o)
      y = g.add_node("Concat", {y, outs[o]}, {{"axis", std::int64_t{1}}})[0];
    g.mark_output(g.add_node("Relu", {y})[0]);
    ModelInfo info;
    EXPECT_LT(cpu_vs_reference(g, &info), 1e-7) << parts << " parts";
    EXPECT_FALSE(fallback(info));
  }
  {  // Swin's broadcasts, which oneDNN runs only on its reference kernel: per row, and a mask over one middle axis
    Graph g;
    const int x = g.add_input("x", {2, 3, 4, 5});
    const int norm = g.add_node("ReduceL2", {x}, {{"axes", Ints{-1}}, {"keepdims", std::int64_t{1}}})[0];
    const int unit = g.add_node("Div", {x, g.add_node("Clip", {norm}, {{"min", 1e-12f}, {"vinfer.opset", std::int64_t{6}}})[0]})[0];
    const int wide = g.add_node("Reshape", {unit, ints(g, "s", {1, 2, 3, 4, 5})})[0];
    g.mark_output(g.add_node("Add", {wide, g.add_constant("mask", test::random_tensor({1, 2, 1, 4, 5}, 9))})[0]);
    expect_fast_and_exact(g, "normalize and mask");
  }
  for (const char* op : {"ReduceSum", "ReduceMax", "ReduceL2", "ReduceMean"})
    for (const std::int64_t keep : {0, 1}) {
      Graph g;
      const int x = g.add_input("x", {2, 7, 5});
      g.mark_output(g.add_node(op, {x}, {{"axes", Ints{-1}}, {"keepdims", keep}})[0]);
      ModelInfo info;
      EXPECT_LT(cpu_vs_reference(g, &info), 1e-6) << op << " keepdims " << keep;
      EXPECT_FALSE(fallback(info)) << op;
    }
}

// A node no CPU kernel runs (here Erf, which is fast only inside a GELU)
// runs on the reference evaluator instead of refusing the model, and info
// says so; Gather by several constant indices has a kernel.
TEST(EngineOps, ReferenceFallbackRunsWhatNoKernelRuns) {
  Graph g;
  const int x = g.add_input("x", {1, 6, 4});
  const int idx = g.add_constant("idx", TensorData::i64({3}, {5, 0, -4}));
  const int y = g.add_node("Gather", {x, idx}, {{"axis", std::int64_t{1}}})[0];
  g.mark_output(g.add_node("Erf", {y}, {}, 1, "pick")[0]);
  ModelInfo info;
  EXPECT_LT(cpu_vs_reference(g, &info), 1e-7);
  bool named = false;
  for (const std::string& p : info.passes) named |= p.find("reference_fallback: 1 node") == 0 && p.find("Erf 'pick'") != std::string::npos;
  EXPECT_TRUE(named) << "info.passes does not name the fallback";
  EngineOptions opt;
  Model m = Model::from_graph(g, "test", opt);
  std::vector<float> in(m.input_size(), 0.5f), out(m.output_size());
  bool on_reference = false;
  for (const LayerProfile& l : m.profile(in.data(), out.data())) on_reference |= l.impl == "vinfer:reference";
  EXPECT_TRUE(on_reference);
}

// The layers of MobileNet, EfficientNet, RegNet and ResNeXt that oneDNN runs
// only with its reference kernel (100-1000x slower) unless the backend picks
// the layout: grouped convolutions whose groups are not whole channel blocks,
// convolutions reading a channel count that is not a whole number of blocks
// (after a residual addition), and squeeze-and-excite's Mul(scale, x). Each
// exact, and (where oneDNN runs at AVX2 or better) none on a `ref` kernel.
TEST(EngineOps, MobileLayersRunOnFastKernels) {
  auto add_conv = [](Graph& g, int x, std::int64_t ic, std::int64_t oc, std::int64_t k, std::int64_t group, unsigned seed) {
    const int w = g.add_constant("w" + std::to_string(seed), test::random_tensor({oc, ic / group, k, k}, seed));
    const std::int64_t p = k / 2;
    return g.add_node("Conv", {x, w}, {{"group", group}, {"pads", Ints{p, p, p, p}}})[0];
  };
  struct Case {
    const char* what;
    std::int64_t c, groups;
  };
  for (const Case& c : {Case{"ResNeXt: 4 channels per group", 128, 32}, Case{"RegNet: 8 per group", 48, 6},
                        Case{"24 per group", 48, 2}, Case{"depthwise, 40 channels", 40, 40}}) {
    Graph g;
    const int x = g.add_input("x", {1, c.c, 14, 14});
    const int y = add_conv(g, x, c.c, c.c, 3, c.groups, 1);
    g.mark_output(g.add_node("Relu", {y})[0]);
    expect_fast_and_exact(g, c.what);
  }
  {  // MobileNetV2: a 24-channel residual sum read by a 1x1 expansion
    Graph g;
    const int x = g.add_input("x", {1, 24, 14, 14});
    const int a = add_conv(g, x, 24, 24, 1, 1, 2);
    const int s = g.add_node("Add", {a, x})[0];
    g.mark_output(add_conv(g, s, 24, 144, 1, 1, 3));
    expect_fast_and_exact(g, "24-channel residual into a 1x1");
  }
  {  // HardSwish as opset-13 exports write it, x * HardSigmoid(x), unfused (x has a third reader), 24 channels
    Graph g;
    const int x = g.add_input("x", {1, 24, 14, 14});
    const int c = add_conv(g, x, 24, 24, 1, 1, 5);
    const int h = g.add_node("HardSigmoid", {c}, {{"alpha", 1.f / 6}, {"beta", 0.5f}})[0];
    g.mark_output(g.add_node("Add", {g.add_node("Mul", {c, h})[0], c})[0]);
    expect_fast_and_exact(g, "HardSigmoid on 24 channels");
  }
  {  // squeeze-and-excite as torchvision writes it: Mul(scale, x)
    Graph g;
    const int x = g.add_input("x", {1, 40, 14, 14});
    const int pooled = g.add_node("GlobalAveragePool", {x})[0];
    const int scale = g.add_node("Sigmoid", {add_conv(g, pooled, 40, 40, 1, 1, 4)})[0];
    g.mark_output(g.add_node("Mul", {scale, x})[0]);
    expect_fast_and_exact(g, "squeeze-and-excite");
  }
}

// Grouped convolutions whose groups are narrower than a channel block
// (ResNeXt's 4 and 8 channels per group, RegNet's 8) run on vinfer's kernel
// on blocked tensors: exact against the reference for each group width the
// block allows, a partial last block, a batch, stride 2, no padding, a 5x5
// and a 1x1 (the kernel's per-pixel form), outputs wider than one strip of
// its ring, ReLU and SiLU after it; blocked in and out (oneDNN's ran them
// channels-last, a conversion on each side). Depthwise ones with SiLU
// (EfficientNet's) too: 3x3 and 5x5 (5x5 with AVX-512 only), stride 1 and
// 2, maps narrower than a register tile, partial tiles at either edge, no
// padding; with ReLU the load-time timing picks the kernel
// (DepthwiseWithClampTimedAgainstOneDnn). The oneDNN path
// (VINFER_GROUP_CONV=onednn) stays exact too.
TEST(EngineOps, NarrowGroupConvolutions) {
  struct Case {
    const char* what;
    Shape x;
    std::int64_t gw, k, stride, pad;
    const char* act;
  };
  const Case cases[] = {
      {"4 per group, 40 channels, batch 2, ReLU", {2, 40, 9, 11}, 4, 3, 1, 1, "Relu"},
      {"8 per group, stride 2, SiLU", {1, 24, 13, 13}, 8, 3, 2, 1, "Swish"},
      {"2 per group, 5x5", {1, 20, 7, 6}, 2, 5, 1, 2, nullptr},
      {"4 per group, 1x1", {1, 32, 5, 7}, 4, 1, 1, 0, "Relu"},
      {"8 per group, no padding", {1, 16, 6, 5}, 8, 3, 1, 0, nullptr},
      {"4 per group, wider than a strip", {1, 32, 5, 61}, 4, 3, 1, 1, "Relu"},
      {"8 per group, wider than a strip, stride 2", {1, 48, 9, 40}, 8, 3, 2, 1, nullptr},
      {"depthwise 3x3, SiLU, 40 channels, batch 2", {2, 40, 11, 21}, 1, 3, 1, 1, "Swish"},
      {"depthwise 3x3, stride 2, SiLU", {1, 24, 13, 30}, 1, 3, 2, 1, "Swish"},
      {"depthwise 5x5, SiLU, narrower than a tile", {1, 16, 7, 5}, 1, 5, 1, 2, "Swish"},
      {"depthwise 5x5, stride 2, SiLU", {1, 56, 12, 27}, 1, 5, 2, 2, "Swish"},
      {"depthwise 3x3, no padding, SiLU", {1, 16, 6, 19}, 1, 3, 1, 0, "Swish"},
      {"depthwise 3x3, ReLU (timed against oneDNN's)", {1, 32, 9, 9}, 1, 3, 1, 1, "Relu"},
  };
  unsigned seed = 40;
  for (const Case& c : cases) {
    Graph g;
    const int x = g.add_input("x", c.x);
    const std::int64_t ch = c.x[1];
    const int w = g.add_constant("w", test::random_tensor({ch, c.gw, c.k, c.k}, seed++));
    const int b = g.add_constant("b", test::random_tensor({ch}, seed++));
    int y = g.add_node("Conv", {x, w, b},
                       {{"group", ch / c.gw}, {"strides", Ints{c.stride, c.stride}}, {"pads", Ints{c.pad, c.pad, c.pad, c.pad}}})[0];
    if (c.act && std::string(c.act) == "Swish") y = g.add_node("Mul", {y, g.add_node("Sigmoid", {y})[0]})[0];
    else if (c.act) y = g.add_node(c.act, {y})[0];
    g.mark_output(y);
    for (const char* setting : {"", "onednn"}) {
      double rel = 0;
      const std::string impls = impls_with(g, *setting ? "VINFER_GROUP_CONV" : nullptr, setting, rel);
      EXPECT_LT(rel, 1e-5) << c.what << " " << setting;
      const bool own = impls.find("vinfer:group_conv") != std::string::npos || impls.find("vinfer:depthwise") != std::string::npos;
      if (*setting) {
        EXPECT_FALSE(own) << c.what << ": " << impls;
        continue;
      }
      const int block = detail::cpu_features().level == detail::IsaLevel::Avx512 ? 16 : 8;
      if (detail::cpu_features().level == detail::IsaLevel::Plain || c.gw >= block) continue;
      const bool depthwise = c.gw == 1, silu = c.act && std::string(c.act) == "Swish";
      const bool own_depthwise = depthwise && silu && (c.k == 3 || block == 16);
      const bool timed = depthwise && !silu && (c.k == 3 || block == 16);  // (either kernel: the timing's choice)
      if (!timed) {
        EXPECT_EQ(own, !depthwise || own_depthwise) << c.what << ": " << impls;
        EXPECT_EQ(impls.find("vinfer:depthwise") != std::string::npos, own_depthwise) << c.what << ": " << impls;
      }
      EngineOptions opt;
      opt.threads = 2;
      Model m = Model::from_graph(g, "test", opt);
      std::vector<float> in(m.input_size(), 0.5f), out(m.output_size());
      for (const LayerProfile& l : m.profile(in.data(), out.data()))
        EXPECT_NE(l.name.rfind("to channels-last", 0), 0u) << c.what << ": " << l.name;
    }
  }
}

// An inverted residual (1x1 expansion, depthwise convolution, 1x1
// projection, and the block's residual or not; or ResNeXt's bottleneck, a
// grouped 3x3 in the middle) runs as one op, vinfer's
// chain (conv_chain.hpp), exact against the reference, and bit for bit what
// the same three kernels give run one after another (VINFER_CONV_CHAIN=0
// with vinfer's 1x1 and depthwise kernels forced): every output row and
// every expanded row computed, with 1 to 3 threads (the rows a thread shares
// with its neighbours: 3x3 and 5x5, stride 1 and 2, odd maps, a batch,
// a partial channel block; ReLU6 and ReLU, or HardSwish). Not where the map has fewer than 7 rows a
// thread (one thread takes 7 rows), nor from 16 input channels or fewer.
TEST(EngineOps, InvertedResidualInOnePass) {
  struct Case {
    const char* what;
    Shape x;
    std::int64_t expanded, out, k, stride;
    bool residual, hard_swish = false;
    std::int64_t gw = 1;  // channels per group of the middle convolution
  };
  const Case cases[] = {
      {"MobileNetV2's, 3x3, residual", {1, 24, 28, 28}, 72, 24, 3, 1, true},
      {"MobileNetV3's, HardSwish, residual", {1, 40, 14, 14}, 120, 40, 3, 1, true, true},
      {"HardSwish, 5x5, stride 2", {1, 24, 29, 29}, 72, 40, 5, 2, false, true},
      {"ResNeXt's: 4 channels per group, residual", {1, 64, 21, 21}, 128, 64, 3, 1, true, false, 4},
      {"8 channels per group, stride 2", {1, 32, 28, 30}, 64, 48, 3, 2, false, false, 8},
      {"5x5, stride 2, odd map", {1, 24, 31, 29}, 96, 40, 5, 2, false},
      {"batch 2, a partial block, residual", {2, 40, 21, 17}, 120, 40, 3, 1, true},
      {"5x5, stride 1, tall map", {1, 32, 45, 9}, 64, 24, 5, 1, false},
      {"3x3, stride 2", {1, 24, 42, 14}, 48, 32, 3, 2, false},
      {"a map of 7 rows", {1, 24, 7, 7}, 48, 24, 3, 1, true},
      {"16 input channels", {1, 16, 28, 28}, 48, 24, 3, 1, false},
  };
  const detail::IsaLevel level = detail::cpu_features().level;
  unsigned seed = 300;
  for (const Case& c : cases) {
    Graph g;
    const int x = g.add_input("x", c.x);
    const std::int64_t ic = c.x[1];
    auto conv = [&](int in, std::int64_t from, std::int64_t to, std::int64_t k, std::int64_t group, std::int64_t stride) {
      const int w = g.add_constant("w" + std::to_string(seed), test::random_tensor({to, from / group, k, k}, seed));
      const int b = g.add_constant("b" + std::to_string(seed), test::random_tensor({to}, seed + 1));
      seed += 2;
      const std::int64_t pad = k / 2;
      return g.add_node("Conv", {in, w, b},
                        {{"group", group}, {"strides", Ints{stride, stride}}, {"pads", Ints{pad, pad, pad, pad}}})[0];
    };
    // HardSwish, or `other` (ReLU6 if none)
    auto act = [&](int v, const char* other) {
      if (c.hard_swish) return g.add_node("HardSwish", {v})[0];
      if (other) return g.add_node(other, {v})[0];
      return g.add_node("Clip", {v}, {{"min", 0.f}, {"max", 6.f}, {"vinfer.opset", std::int64_t{6}}})[0];
    };
    const int e = act(conv(x, ic, c.expanded, 1, 1, 1), nullptr);
    const int d = act(conv(e, c.expanded, c.expanded, c.k, c.expanded / c.gw, c.stride), "Relu");
    int y = conv(d, c.expanded, c.out, 1, 1, 1);
    if (c.residual) y = g.add_node("Add", {y, x})[0];
    g.mark_output(y);
    const int block = level == detail::IsaLevel::Avx512 ? 16 : 8;
    const bool runs = (level == detail::IsaLevel::Avx512 || (level == detail::IsaLevel::Avx2 && c.k == 3)) && c.gw < block;
    for (const int threads : {1, 2, 3}) {
      const std::string what = std::string(c.what) + ", " + std::to_string(threads) + " thread(s)";
      EXPECT_LT(cpu_vs_reference(g), 1e-5) << what;
      auto run = [&](bool chain, std::string& impls) {
        if (!chain) ::setenv("VINFER_CONV_CHAIN", "0", 1);
        ::setenv("VINFER_GROUP_CONV", "vinfer", 1);
        ::setenv("VINFER_CONV1X1", "vinfer", 1);
        EngineOptions opt;
        opt.threads = threads;
        Model m = Model::from_graph(g, "test", opt);
        ::unsetenv("VINFER_CONV_CHAIN"), ::unsetenv("VINFER_GROUP_CONV"), ::unsetenv("VINFER_CONV1X1");
        const TensorData in = test::random_tensor(m.input_shape(), 3);
        std::vector<float> out(m.output_size());
        impls.clear();
        for (const LayerProfile& l : m.profile(in.f.data(), out.data())) impls += l.impl + " ";
        return out;
      };
      std::string chained, apart;
      const std::vector<float> one = run(true, chained), three = run(false, apart);
      const std::int64_t oh = (c.x[2] + 2 * (c.k / 2) - c.k) / c.stride + 1;
      const bool expect = runs && ic > 16 && oh >= 7 * threads;
      EXPECT_EQ(chained.find("vinfer:conv_chain") != std::string::npos, expect) << what << ": " << chained;
      EXPECT_EQ(apart.find("vinfer:conv_chain"), std::string::npos) << what << ": " << apart;
      EXPECT_EQ(one, three) << what;
    }
  }
}

// Runs an element-wise kernel (x padded to whole vectors) on each ISA this
// CPU has, AVX2 and AVX-512, and check(isa's name, y) on its output;
// returns on how many it ran.
template <class Check>
int on_each_isa(void (*avx2)(const float*, float*, std::int64_t), void (*avx512)(const float*, float*, std::int64_t),
                std::vector<float>& x, const Check& check) {
  while (x.size() % 16) x.push_back(0.f);
  int ran = 0;
  for (const bool wide : {false, true}) {
    const bool runs = wide ? __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")
                           : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (!runs) continue;
    ++ran;
    std::vector<float> y(x.size());
    (wide ? avx512 : avx2)(x.data(), y.data(), static_cast<std::int64_t>(x.size()));
    check(wide ? "avx512" : "avx2", y);
  }
  return ran;
}

// SiLU as vinfer's kernels apply it after a convolution (out_act.hpp) on
// each ISA this CPU runs, against x / (1 + e^-x) in double: relative error
// within 5e-7 + 8e-8 |x| (the rounding of x log2(e) grows with |x|, where
// SiLU is e^x-small: 1e-6 at |x| = 6), or 1e-34 absolute (below x = -87,
// where e^-x is clamped); NaN stays NaN, +inf stays +inf. (Below about
// -1e9 the clamp leaves x times a tiny reciprocal, as before.)
TEST(Kernels, SiluAgainstDouble) {
  std::vector<float> x;
  for (int i = -100 * 64; i <= 100 * 64; ++i) x.push_back(static_cast<float>(i) / 64.f);
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {1e-30f, -1e-30f, 0.3333f, -2.71828f, 87.f, -87.f, 88.7f, -88.7f, 120.f, -120.f, 1e30f, inf,
                  std::numeric_limits<float>::quiet_NaN()})
    x.push_back(v);
  const int ran = on_each_isa(cpu::silu_avx2, cpu::silu_avx512, x, [&](const char* isa, const std::vector<float>& y) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i])) {
        EXPECT_TRUE(std::isnan(y[i])) << isa;
      } else if (x[i] == inf) {
        EXPECT_EQ(y[i], inf) << isa;
      } else {
        const double v = x[i], want = v / (1 + std::exp(-v));
        EXPECT_LE(std::fabs(y[i] - want), (5e-7 + 8e-8 * std::fabs(v)) * std::fabs(want) + 1e-34)
            << isa << " SiLU(" << x[i] << ") = " << y[i] << ", want " << want;
      }
    }
  });
  if (!ran) GTEST_SKIP() << "neither AVX2 nor AVX-512 here";
}

// A depthwise convolution with a clamp (MobileNetV2's ReLU6, MNASNet's
// ReLU; here to [0, 1.5], so that both bounds bite) runs on vinfer's kernel
// where timing at load finds it faster, else on oneDNN's: exact either way
// (72 channels: a partial block with
// AVX-512; batch 2; 3x3 and 5x5 of stride 1 and 2); VINFER_GROUP_CONV=vinfer
// takes vinfer's (5x5: AVX-512 only), and without timing oneDNN's runs. A
// second load makes the same choice (remembered per shape).
TEST(EngineOps, DepthwiseWithClampTimedAgainstOneDnn) {
  for (const std::int64_t k : {3, 5})
    for (const std::int64_t stride : {1, 2}) {
      Graph g;
      const int x = g.add_input("x", {2, 72, 23, 21});
      const int y = g.add_node("Conv", {x, g.add_constant("w", test::random_tensor({72, 1, k, k}, 95)),
                                        g.add_constant("b", test::random_tensor({72}, 96))},
                               {{"group", std::int64_t{72}}, {"strides", Ints{stride, stride}},
                                {"pads", Ints{k / 2, k / 2, k / 2, k / 2}}})[0];
      g.mark_output(g.add_node("Clip", {y}, {{"min", 0.f}, {"max", 1.5f}, {"vinfer.opset", std::int64_t{6}}})[0]);
      const std::string what = std::to_string(k) + "x" + std::to_string(k) + " stride " + std::to_string(stride);
      const detail::IsaLevel level = detail::cpu_features().level;
      const bool runs = level == detail::IsaLevel::Avx512 || (level == detail::IsaLevel::Avx2 && k == 3);
      double rel = 0;
      std::string impls = impls_with(g, "VINFER_GROUP_CONV", "vinfer", rel);
      EXPECT_LT(rel, 1e-5) << what;
      EXPECT_EQ(impls.find("vinfer:depthwise") != std::string::npos, runs) << what << ": " << impls;
      impls = impls_with(g, nullptr, nullptr, rel);
      EXPECT_LT(rel, 1e-5) << what;
      EXPECT_EQ(impls_with(g, nullptr, nullptr, rel), impls) << what;
      EngineOptions opt;
      opt.threads = 2;
      opt.tune = false;
      Model m = Model::from_graph(g, "test", opt);
      const TensorData in = test::random_tensor(m.input_shape(), 3);
      std::vector<float> out(m.output_size());
      for (const LayerProfile& l : m.profile(in.f.data(), out.data()))
        EXPECT_EQ(l.impl.find("vinfer:depthwise"), std::string::npos) << what << ": " << l.impl;
    }
}

// GELU as vinfer's pass applies it after a matrix product (out_act.hpp) on
// each ISA this CPU runs, against x Phi(x) in double: absolute error within
// 2e-7 (1 + |x|) (Abramowitz and Stegun's erfc, 1.5e-7); NaN stays NaN,
// +inf stays +inf, -inf gives -7.6e-23 (the limit is 0).
TEST(Kernels, GeluAgainstDouble) {
  std::vector<float> x;
  for (int i = -12 * 512; i <= 12 * 512; ++i) x.push_back(static_cast<float>(i) / 512.f);
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {1e-30f, -1e-30f, 0.3333f, -2.71828f, 9.99f, -9.99f, 10.01f, -10.01f, 40.f, -40.f, 1e30f, -1e30f, inf, -inf,
                  std::numeric_limits<float>::quiet_NaN()})
    x.push_back(v);
  const int ran = on_each_isa(cpu::gelu_avx2, cpu::gelu_avx512, x, [&](const char* isa, const std::vector<float>& y) {
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i])) {
        EXPECT_TRUE(std::isnan(y[i])) << isa;
      } else if (std::isinf(x[i])) {
        if (x[i] > 0) EXPECT_EQ(y[i], inf) << isa;
        else EXPECT_LE(std::fabs(y[i]), 1e-22f) << isa << " GELU(-inf) = " << y[i];
      } else {
        const double v = x[i], want = 0.5 * v * std::erfc(-v / std::sqrt(2.0));
        EXPECT_LE(std::fabs(y[i] - want), 2e-7 * (1 + std::fabs(v)))
            << isa << " GELU(" << x[i] << ") = " << y[i] << ", want " << want;
      }
    }
  });
  if (!ran) GTEST_SKIP() << "neither AVX2 nor AVX-512 here";
}

// A matrix product on oneDNN ending in GELU (ConvNeXt's, ViT's first MLP
// layer) gets vinfer's GELU pass in place after it where its columns are
// whole vectors, not oneDNN's post-op: exact against the reference, rows of
// 3-D and 2-D inputs, with and without a bias; 44 columns (not whole
// vectors) or VINFER_GELU=onednn keep the post-op.
TEST(EngineOps, GeluAfterMatMul) {
  for (const std::int64_t cols : {48, 44})
    for (const bool bias : {true, false})
      for (const bool rows3d : {true, false}) {
        Graph g;
        const Shape xs = rows3d ? Shape{2, 50, 64} : Shape{37, 64};
        const int x = g.add_input("x", xs);
        int y = g.add_node("MatMul", {x, g.add_constant("w", test::random_tensor({64, cols}, 91, -0.6f, 0.6f))})[0];
        if (bias) y = g.add_node("Add", {y, g.add_constant("b", test::random_tensor({cols}, 92))})[0];
        g.mark_output(g.add_node("Gelu", {y})[0]);
        for (const char* setting : {"", "onednn"}) {
          const std::string what = std::to_string(cols) + " columns, " + (bias ? "bias, " : "") +
                                   (rows3d ? "3-D" : "2-D") + " " + setting;
          double rel = 0;
          const std::string impls = impls_with(g, *setting ? "VINFER_GELU" : nullptr, setting, rel);
          EXPECT_LT(rel, 1e-5) << what;
          const bool simd = detail::cpu_features().level != detail::IsaLevel::Plain;
          EXPECT_EQ(impls.find("vinfer:gelu") != std::string::npos, simd && cols == 48 && !*setting) << what << ": " << impls;
        }
      }
}

// A convolution ending in GELU (MaxViT's 1x1s and depthwise 3x3s) gets the
// same pass after oneDNN's kernel: exact, batch 1 and 2, 40 output channels
// (a partial block); VINFER_GELU=onednn keeps the post-op.
TEST(EngineOps, GeluAfterOneDnnConvolution) {
  for (const std::int64_t batch : {1, 2})
    for (const bool depthwise : {false, true}) {
      Graph g;
      const int x = g.add_input("x", {batch, 40, 17, 15});
      const int y =
          depthwise ? g.add_node("Conv", {x, g.add_constant("w", test::random_tensor({40, 1, 3, 3}, 83, -2.f, 2.f))},
                                 {{"group", std::int64_t{40}}, {"pads", Ints{1, 1, 1, 1}}})[0]
                    : g.add_node("Conv", {x, g.add_constant("w", test::random_tensor({40, 40, 1, 1}, 83, -0.5f, 0.5f)),
                                          g.add_constant("b", test::random_tensor({40}, 84))})[0];
      g.mark_output(g.add_node("Gelu", {y})[0]);
      for (const char* setting : {"", "onednn"}) {
        double rel = 0;
        const std::string impls = impls_with(g, *setting ? "VINFER_GELU" : nullptr, setting, rel);
        const std::string what = std::string(depthwise ? "depthwise" : "1x1") + ", batch " + std::to_string(batch) + " " + setting;
        EXPECT_LT(rel, 1e-5) << what;
        const bool simd = detail::cpu_features().level != detail::IsaLevel::Plain;
        EXPECT_EQ(impls.find("vinfer:gelu") != std::string::npos, simd && !*setting) << what << ": " << impls;
      }
    }
}

// A convolution on oneDNN ending in SiLU (EfficientNet's stem: 3 input
// channels) gets vinfer's SiLU pass in place after it, not oneDNN's swish
// post-op: exact, batch 2, 40 output channels (a partial block). Written
// channels-last (read only by a Transpose to NHWC), it keeps the post-op.
TEST(EngineOps, SiluAfterOneDnnConvolution) {
  for (const std::int64_t batch : {1, 2})
    for (const bool nhwc : {false, true}) {
      Graph g;
      const int x = g.add_input("x", {batch, 3, 33, 30});
      const int y = g.add_node("Conv", {x, g.add_constant("w", test::random_tensor({40, 3, 3, 3}, 81)),
                                        g.add_constant("b", test::random_tensor({40}, 82))},
                               {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}})[0];
      int out = g.add_node("Mul", {y, g.add_node("Sigmoid", {y})[0]})[0];
      if (nhwc) out = g.add_node("Transpose", {out}, {{"perm", Ints{0, 2, 3, 1}}})[0];
      g.mark_output(out);
      double rel = 0;
      const std::string impls = impls_with(g, nullptr, nullptr, rel);
      EXPECT_LT(rel, 1e-5) << "batch " << batch << (nhwc ? ", NHWC" : "");
      const bool simd = detail::cpu_features().level != detail::IsaLevel::Plain;
      EXPECT_EQ(impls.find("vinfer:silu") != std::string::npos, simd && !nhwc) << impls;
    }
}

// Squeeze-and-excite's Mul(s, x) before a 1x1 projection (EfficientNet's,
// MobileNetV3's, RegNetY's) is applied by vinfer's 1x1 kernel as it packs x:
// exact, the Mul not run; with a partial input block (40 channels), an odd
// output block (24), a residual sum after the projection, a batch of two
// (each image its own scale), both operand orders. VINFER_CONV1X1=noscale
// runs the Mul apart; =vinfer fuses with AVX2 too.
TEST(EngineOps, SqueezeExciteScaleInto1x1) {
  for (const bool residual : {false, true})
    for (const bool scale_first : {true, false}) {
      Graph g;
      const int x = g.add_input("x", {2, 40, 7, 7});
      const int pooled = g.add_node("GlobalAveragePool", {x})[0];
      const int squeeze = g.add_node(
          "Relu", {g.add_node("Conv", {pooled, g.add_constant("w1", test::random_tensor({10, 40, 1, 1}, 61))})[0]})[0];
      const int s = g.add_node(
          "Sigmoid", {g.add_node("Conv", {squeeze, g.add_constant("w2", test::random_tensor({40, 10, 1, 1}, 62))})[0]})[0];
      const int scaled = g.add_node("Mul", scale_first ? std::vector<int>{s, x} : std::vector<int>{x, s})[0];
      const std::int64_t oc = residual ? 40 : 24;
      int y = g.add_node("Conv", {scaled, g.add_constant("w3", test::random_tensor({oc, 40, 1, 1}, 63)),
                                  g.add_constant("b3", test::random_tensor({oc}, 64))})[0];
      if (residual) y = g.add_node("Add", {y, x})[0];
      g.mark_output(y);
      const std::string what = std::string(residual ? "with" : "without") + " a residual, " +
                               (scale_first ? "Mul(s, x)" : "Mul(x, s)");
      for (const char* setting : {"", "noscale", "vinfer"}) {
        double rel = 0;
        const std::string impls = impls_with(g, *setting ? "VINFER_CONV1X1" : nullptr, setting, rel);
        EXPECT_LT(rel, 1e-5) << what << " " << setting;
        const bool fused = impls.find("vinfer:conv1x1_scaled") != std::string::npos;
        const detail::IsaLevel level = detail::cpu_features().level;
        const bool expected = level != detail::IsaLevel::Plain && std::string(setting) != "noscale" &&
                              (level == detail::IsaLevel::Avx512 || std::string(setting) == "vinfer");
        EXPECT_EQ(fused, expected) << what << " " << setting << ": " << impls;
        if (!expected) continue;
        if (*setting) ::setenv("VINFER_CONV1X1", setting, 1);
        EngineOptions opt;
        opt.threads = 2;
        Model m = Model::from_graph(g, "test", opt);
        if (*setting) ::unsetenv("VINFER_CONV1X1");
        std::vector<float> in(m.input_size(), 0.5f), out(m.output_size());
        for (const LayerProfile& l : m.profile(in.data(), out.data()))
          EXPECT_NE(l.name.rfind("Mul", 0), 0u) << what << ": " << l.name << " runs apart";
      }
    }
}

// Squeeze-and-excite's gate (GlobalAveragePool, 1x1 Conv, function, 1x1
// Conv, gate function) runs as one op where vinfer's kernels run: exact,
// for EfficientNet's (SiLU, Sigmoid), MobileNetV3's (ReLU, HardSigmoid) and
// RegNetY's (ReLU, Sigmoid) forms; channels that are not whole blocks (40,
// 200 with 50 in the middle: several groups of output vectors, the first
// layer's depth split among threads), a batch of two, no biases, the gate
// applied by the op itself (x * s written; early stages) or by the
// projection that scales its input. A pool with a second reader, or
// VINFER_SQUEEZE_EXCITE=0, leaves three ops. The pool may be spelled as
// torch's dynamo exporter writes it: ReduceMean over axes [-2, -1] given as
// an input, keeping the dimensions.
TEST(EngineOps, SqueezeExciteGateAsOneOp) {
  struct Case {
    const char* what;
    Shape x;
    std::int64_t r;
    const char* mid;   // Relu or Swish
    const char* gate;  // Sigmoid or HardSigmoid
    bool bias, projection, pool_read_twice, reduce_mean = false;
  };
  const Case cases[] = {
      {"EfficientNet's, 40 channels, batch 2", {2, 40, 9, 11}, 10, "Swish", "Sigmoid", true, false, false},
      {"MobileNetV3's, 200 channels", {1, 200, 7, 7}, 50, "Relu", "HardSigmoid", true, true, false},
      {"RegNetY's, no biases, batch 2", {2, 48, 14, 14}, 12, "Relu", "Sigmoid", false, true, false},
      {"a 1x1 map, 1152 channels", {1, 1152, 1, 1}, 48, "Swish", "Sigmoid", true, true, false},
      {"the pool read twice", {1, 32, 5, 5}, 8, "Relu", "Sigmoid", true, false, true},
      {"x * s in pieces of a 70x70 map", {2, 24, 70, 70}, 6, "Swish", "Sigmoid", true, false, false},
      {"the pool as a ReduceMean", {2, 40, 9, 11}, 10, "Swish", "Sigmoid", true, true, false, true},
  };
  unsigned seed = 70;
  for (const Case& c : cases) {
    Graph g;
    const int x = g.add_input("x", c.x);
    const std::int64_t ch = c.x[1];
    const int pooled = c.reduce_mean ? g.add_node("ReduceMean", {x, g.add_constant("axes", TensorData::i64({2}, {-2, -1}))},
                                                  {{"keepdims", std::int64_t{1}}})[0]
                                     : g.add_node("GlobalAveragePool", {x})[0];
    auto conv = [&](int in, std::int64_t out, std::int64_t depth) {
      std::vector<int> ins{in, g.add_constant("w" + std::to_string(seed), test::random_tensor({out, depth, 1, 1}, seed))};
      ++seed;
      if (c.bias) ins.push_back(g.add_constant("b" + std::to_string(seed), test::random_tensor({out}, seed))), ++seed;
      return g.add_node("Conv", ins)[0];
    };
    int mid = conv(pooled, c.r, ch);
    mid = std::string(c.mid) == "Swish" ? g.add_node("Mul", {mid, g.add_node("Sigmoid", {mid})[0]})[0]
                                        : g.add_node(c.mid, {mid})[0];
    int gate = conv(mid, ch, c.r);
    gate = std::string(c.gate) == "HardSigmoid"
               ? g.add_node("HardSigmoid", {gate}, {{"alpha", 1.f / 6}, {"beta", 0.5f}})[0]
               : g.add_node(c.gate, {gate})[0];
    int y = g.add_node("Mul", {x, gate})[0];
    if (c.projection) y = conv(y, 24, ch);
    if (c.pool_read_twice) y = g.add_node("Add", {y, pooled})[0];
    g.mark_output(y);
    for (const char* setting : {"", "0"}) {
      double rel = 0;
      const std::string impls = impls_with(g, *setting ? "VINFER_SQUEEZE_EXCITE" : nullptr, setting, rel);
      EXPECT_LT(rel, 1e-5) << c.what << " " << setting;
      const bool one_op = impls.find("vinfer:squeeze_excite") != std::string::npos;
      const bool expected =
          !*setting && !c.pool_read_twice && detail::cpu_features().level != detail::IsaLevel::Plain;
      EXPECT_EQ(one_op, expected) << c.what << " " << setting << ": " << impls;
      if (!expected) continue;
      // The pool and the two convolutions are that op, run once; the projection its own.
      EngineOptions opt;
      opt.threads = 2;
      Model m = Model::from_graph(g, "test", opt);
      std::vector<float> in(m.input_size(), 0.5f), out(m.output_size());
      int pools = 0, convs = 0, muls = 0;
      for (const LayerProfile& l : m.profile(in.data(), out.data())) {
        pools += l.name.rfind("GlobalAveragePool", 0) == 0;
        convs += l.name.rfind("Conv", 0) == 0;
        muls += l.name.rfind("Mul", 0) == 0;
      }
      EXPECT_EQ(pools, 1) << c.what;
      EXPECT_EQ(convs, c.projection ? 1 : 0) << c.what;
      EXPECT_EQ(muls, 0) << c.what;  // x * s: in the projection, or written by the gate's op
    }
  }
}

// The kernel's ways of sharing the work and holding its weights.
struct WinogradForm {
  cpu::Winograd3x3::Split split;
  bool half;
  const char* name;
};
const WinogradForm kWinogradForms[] = {{cpu::Winograd3x3::Split::Tiles, false, "tiles"},
                                       {cpu::Winograd3x3::Split::Positions, false, "positions"},
                                       {cpu::Winograd3x3::Split::Positions, true, "positions, half transformed"}};

// vinfer's Winograd 3x3s (src/cpu/winograd*.cpp: F(4,3) and F(2,3) for
// stride 1, the polyphase form for stride 2) against plain loops, for both channel blocks,
// every padding they take, partial tiles and chunks, channel counts that are
// not a multiple of the block (input padding lanes NaN, output ones zero),
// bias, clamping and SiLU, a residual added before or after the function.
// Winograd rounds differently from direct convolution: the bound is relative
// to the largest output.
TEST(Winograd, MatchesDirectConvolution) {
  struct Case {
    int ic, oc, h, w, pad_t, pad_l, pad_b, pad_r, block;
    bool bias;
    float lo, hi;
    int stride = 1;
    int tile = 4;  // stride 1: F(4,3) or F(2,3)
    bool silu = false;  // SiLU instead of the clamp
    cpu::Residual residual = cpu::Residual::None;
  };
  const auto before = cpu::Residual::BeforeAct, after = cpu::Residual::AfterAct;
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<Case> cases = {
      {16, 16, 28, 28, 1, 1, 1, 1, 8, false, -inf, inf},   // DenseNet-like, whole chunks
      {32, 24, 13, 17, 1, 1, 1, 1, 8, true, 0.f, inf},     // partial tiles, ReLU, 8 + 16 column blocks
      {16, 32, 9, 30, 0, 2, 2, 0, 16, true, -0.5f, 0.5f},  // block 16, uneven pads, Clip
      {48, 16, 6, 6, 2, 2, 2, 2, 16, false, -inf, inf},    // output larger than a tile grid of the input
      {16, 48, 50, 45, 1, 1, 1, 1, 16, true, 0.f, inf},    // 156 tiles: several chunks per thread, a tail
      {8, 8, 62, 61, 1, 1, 1, 1, 8, false, -inf, inf},     // 256 tiles in 6-row register tiles
      {8, 16, 4, 4, 1, 1, 1, 1, 8, true, 0.f, inf},        // one tile: threads without tiles
      // Stride 2: ResNet's shape (pad 1, even size), odd sizes (a last tile
      // with one output row or column), no padding, uneven pads, 16 blocks.
      {16, 32, 28, 28, 1, 1, 1, 1, 8, true, 0.f, inf, 2},
      {32, 16, 13, 11, 1, 1, 1, 1, 16, true, -0.5f, 0.5f, 2},
      {16, 16, 9, 10, 0, 0, 0, 0, 8, false, -inf, inf, 2},
      {32, 48, 15, 14, 2, 0, 1, 2, 16, true, 0.f, inf, 2},
      {16, 32, 56, 50, 1, 1, 1, 1, 16, false, -inf, inf, 2},  // 700 tiles: many chunks, a tail
      {8, 8, 3, 3, 1, 1, 1, 1, 8, true, 0.f, inf, 2},         // one tile
      // F(2,3): ResNet50's layer4 shape (7x7, a last tile of one output row
      // and column), DenseNet's 14x14, uneven pads, many chunks, one tile.
      {32, 32, 7, 7, 1, 1, 1, 1, 16, true, 0.f, inf, 1, 2},
      {16, 24, 14, 14, 1, 1, 1, 1, 8, false, -inf, inf, 1, 2},
      {16, 32, 9, 12, 0, 2, 2, 0, 16, true, -0.5f, 0.5f, 1, 2},
      {8, 16, 40, 37, 1, 1, 1, 1, 8, true, 0.f, inf, 1, 2},   // 380 tiles
      {16, 16, 2, 2, 1, 1, 1, 1, 16, false, -inf, inf, 1, 2},
      // SiLU (EfficientNetV2's fused blocks) in each form.
      {48, 32, 30, 29, 1, 1, 1, 1, 16, true, -inf, inf, 1, 4, true},
      {16, 24, 11, 13, 1, 1, 1, 1, 8, true, -inf, inf, 1, 4, true},
      {32, 48, 29, 28, 1, 1, 1, 1, 16, true, -inf, inf, 2, 2, true},
      {16, 16, 7, 7, 1, 1, 1, 1, 8, false, -inf, inf, 1, 2, true},
      // Partial channel blocks (EfficientNetV2's 24-channel maps) in each form.
      {24, 24, 30, 29, 1, 1, 1, 1, 16, true, -inf, inf, 1, 4, true},
      {12, 20, 13, 11, 1, 1, 1, 1, 8, true, 0.f, inf, 1, 4},
      {24, 96, 29, 28, 1, 1, 1, 1, 16, true, -inf, inf, 2, 2, true},
      {20, 40, 9, 10, 1, 1, 1, 1, 16, false, 0.1f, 0.5f, 1, 2},  // padding lanes zero, not 0.1
      // A residual: EfficientNetV2's (SiLU, then the shortcut; 24 channels),
      // ResNet's order (the sum, then ReLU), in each form.
      {24, 24, 30, 29, 1, 1, 1, 1, 16, true, -inf, inf, 1, 4, true, after},
      {16, 16, 13, 11, 1, 1, 1, 1, 8, true, 0.f, inf, 1, 4, false, before},
      {32, 20, 29, 28, 1, 1, 1, 1, 16, true, -inf, inf, 2, 2, true, after},
      {16, 32, 9, 12, 0, 2, 2, 0, 16, true, 0.f, inf, 1, 2, false, before},
  };
  IsaCoverage isa;
  for (const Case& c : cases) {
    cpu::WinogradGeometry g;
    g.ic = c.ic, g.oc = c.oc, g.h = c.h, g.w = c.w, g.pad_t = c.pad_t, g.pad_l = c.pad_l, g.block = c.block;
    g.stride = c.stride, g.out_tile = c.tile;
    g.oh = (c.h + c.pad_t + c.pad_b - 3) / c.stride + 1, g.ow = (c.w + c.pad_l + c.pad_r - 3) / c.stride + 1;
    if (!cpu::Winograd3x3::supports(g)) {
      EXPECT_FALSE(cpu::simd_block_runs(c.block)) << "a geometry the kernels should take";
      isa.runs(c.block);  // counted as not compared
      continue;
    }
    isa.runs(c.block);
    const TensorData x = test::random_tensor({1, c.ic, c.h, c.w}, 5), w = test::random_tensor({c.oc, c.ic, 3, 3}, 6),
                     b = test::random_tensor({c.oc}, 7), r = test::random_tensor({1, c.oc, g.oh, g.ow}, 8);
    auto blocked = [&](int ch, int hw) { return static_cast<std::size_t>(ch / c.block) * hw * c.block; };
    auto padded = [&](int ch) { return (ch + c.block - 1) / c.block * c.block; };
    std::vector<float> src(blocked(padded(c.ic), c.h * c.w), NAN), dst(blocked(padded(c.oc), g.oh * g.ow), NAN),
        want(dst.size(), 0.f), res(dst.size(), NAN);
    for (int ch = 0; ch < c.ic; ++ch)
      for (int p = 0; p < c.h * c.w; ++p)
        src[blocked(ch, c.h * c.w) + static_cast<std::size_t>(p) * c.block + ch % c.block] = x.f[ch * c.h * c.w + p];
    double scale = 1e-30;
    for (int o = 0; o < c.oc; ++o)
      for (int y = 0; y < g.oh; ++y)
        for (int xx = 0; xx < g.ow; ++xx) {
          const std::size_t out = blocked(o, g.oh * g.ow) + static_cast<std::size_t>(y * g.ow + xx) * c.block + o % c.block;
          const double rv = r.f[(o * g.oh + y) * g.ow + xx];
          res[out] = static_cast<float>(rv);
          double acc = c.bias ? b.f[o] : 0.0;
          for (int i = 0; i < c.ic; ++i)
            for (int ky = 0; ky < 3; ++ky)
              for (int kx = 0; kx < 3; ++kx) {
                const int iy = y * c.stride + ky - c.pad_t, ix = xx * c.stride + kx - c.pad_l;
                if (iy >= 0 && iy < c.h && ix >= 0 && ix < c.w)
                  acc += static_cast<double>(w.f[((o * c.ic + i) * 3 + ky) * 3 + kx]) * x.f[(i * c.h + iy) * c.w + ix];
              }
          if (c.residual == before) acc += rv;
          scale = std::max(scale, std::fabs(acc));
          double v = c.silu ? acc / (1 + std::exp(-acc)) : std::clamp<double>(acc, c.lo, c.hi);
          if (c.residual == after) v += rv;
          want[out] = static_cast<float>(v);
        }
    // Both ways of sharing the work (by positions, with whole and half
    // transformed weights); each thread count splits the tiles (runs,
    // chunks, partial register tiles) and the positions differently.
    const int max_threads = omp_get_max_threads();
    for (const WinogradForm& f : kWinogradForms) {
      cpu::Winograd3x3 k(g, w.f.data(), c.bias ? b.f.data() : nullptr, c.lo, c.hi, f.split, f.half,
                         c.silu ? cpu::OutAct::Swish : cpu::OutAct::Clamp, c.residual);
      const float* with = c.residual == cpu::Residual::None ? nullptr : res.data();
      for (int threads : {1, 2, 3}) {
        std::fill(dst.begin(), dst.end(), NAN);
        omp_set_num_threads(threads);
        if (with) {
          cpu::Block own = cpu::aligned_block(k.scratch_bytes(threads));
          k.run(src.data(), dst.data(), own.get(), threads, nullptr, 0, with);
        } else {
          k.run(src.data(), dst.data());
        }
        const double diff = max_abs_diff(dst.data(), want.data(), dst.size());
        EXPECT_LT(diff / scale, 1e-5) << "stride " << c.stride << " tile " << c.tile << (c.silu ? " silu" : "")
                                      << " residual " << static_cast<int>(c.residual) << " ic " << c.ic << " oc " << c.oc << " " << c.h << "x" << c.w << " block "
                                      << c.block << " threads " << threads << " by " << f.name;
        // Prefetching other weights meanwhile (as in a network) changes nothing.
        std::vector<float> again(dst.size(), NAN);
        cpu::Block scratch = cpu::aligned_block(k.scratch_bytes(threads));
        const std::vector<cpu::ByteSpan> next = {{w.f.data(), w.f.size() * sizeof(float)}, {b.f.data(), 4}};
        k.run(src.data(), again.data(), scratch.get(), threads, &next, 0, with);
        EXPECT_EQ(max_abs_diff(again.data(), dst.data(), dst.size()), 0.0) << "with a prefetch list, threads " << threads;
      }
    }
    omp_set_num_threads(max_threads);
  }
  isa.report();
}

// A batch's images folded into one run (their tiles one list, one pass over
// the weights) give each image what a run of that image alone gives: every
// form and split, images apart by more than their size (as in a larger
// buffer), a run of fewer images than the kernel was made for, 1-3 threads.
TEST(Winograd, FoldedImagesMatchOneByOne) {
  struct Case {
    int stride, tile, block, h;
  };
  const std::vector<Case> cases = {{1, 4, 8, 13}, {1, 4, 16, 7}, {1, 2, 16, 7}, {1, 2, 8, 10}, {2, 2, 16, 14}, {2, 2, 8, 9}};
  IsaCoverage isa;
  const int max_threads = omp_get_max_threads();
  for (const Case& c : cases) {
    cpu::WinogradGeometry g;
    g.ic = 2 * c.block, g.oc = 3 * c.block, g.h = g.w = c.h, g.pad_t = g.pad_l = 1, g.block = c.block;
    g.stride = c.stride, g.out_tile = c.tile;
    g.oh = g.ow = (c.h + 2 - 3) / c.stride + 1;
    isa.runs(c.block);
    if (!cpu::Winograd3x3::supports(g)) {
      EXPECT_FALSE(cpu::simd_block_runs(c.block)) << "a geometry the kernels should take";
      continue;
    }
    const std::size_t src_one = static_cast<std::size_t>(g.ic) * g.h * g.w, dst_one = static_cast<std::size_t>(g.oc) * g.oh * g.ow;
    const std::size_t src_gap = src_one + 48, dst_gap = dst_one + 32;  // images further apart than packed
    const int images = 3;
    const TensorData x = test::random_tensor({images, static_cast<std::int64_t>(src_gap)}, 11),
                     w = test::random_tensor({g.oc, g.ic, 3, 3}, 12), b = test::random_tensor({g.oc}, 13);
    for (const WinogradForm& f : kWinogradForms) {
      cpu::Winograd3x3 one(g, w.f.data(), b.f.data(), 0.f, std::numeric_limits<float>::infinity(), f.split, f.half);
      cpu::WinogradGeometry gb = g;
      gb.images = images;
      cpu::Winograd3x3 folded(gb, w.f.data(), b.f.data(), 0.f, std::numeric_limits<float>::infinity(), f.split, f.half);
      folded.set_image_strides(src_gap, dst_gap);
      for (int threads : {1, 2, 3}) {
        omp_set_num_threads(threads);
        std::vector<float> want(images * dst_gap, 0.f), got(images * dst_gap, -7.f);
        for (int i = 0; i < images; ++i) one.run(x.f.data() + i * src_gap, want.data() + i * dst_gap);
        cpu::Block scratch = cpu::aligned_block(folded.scratch_bytes(threads));
        const std::string what = "stride " + std::to_string(c.stride) + " tile " + std::to_string(c.tile) + " block " +
                                 std::to_string(c.block) + " threads " + std::to_string(threads) + " by " + f.name;
        for (int run : {images, 2}) {  // all of them, then the first two
          std::fill(got.begin(), got.end(), -7.f);
          folded.run(x.f.data(), got.data(), scratch.get(), threads, nullptr, run);
          for (int i = 0; i < images; ++i) {
            const float* y = got.data() + i * dst_gap;
            if (i < run) {
              EXPECT_EQ(max_abs_diff(y, want.data() + i * dst_gap, dst_one), 0.0) << what << " image " << i << " of " << run;
            } else {
              EXPECT_TRUE(std::all_of(y, y + dst_one, [](float v) { return v == -7.f; })) << what << ": image " << i << " written";
            }
            EXPECT_TRUE(std::all_of(y + dst_one, y + dst_gap, [](float v) { return v == -7.f; })) << what << ": gap written";
          }
        }
      }
    }
  }
  omp_set_num_threads(max_threads);
  isa.report();
}

// Asked to (compact_weights), F(4,3) split by positions holds its weights
// half transformed (G g: 3 of U's 6 columns) and makes U per panel as it
// runs: the same outputs as the split by tiles (full U) within rounding, in
// half the memory; F(2,3), stride 2 and the split by tiles keep the full
// form, as does every kernel not asked. A kernel's own scratch is allocated
// once: runs after the first (as the load-time timing makes them) use the
// same pages.
TEST(Winograd, PositionsHoldHalfTransformedWeights) {
  struct Case {
    int stride, tile, block, oc;
    std::size_t num, den;  // positions' weights / tiles'
  };
  const std::vector<Case> cases = {{1, 4, 8, 24, 3, 6}, {1, 4, 16, 48, 3, 6}, {1, 2, 16, 32, 1, 1},
                                   {1, 2, 8, 16, 1, 1}, {2, 2, 16, 32, 1, 1}};
  IsaCoverage isa;
  using Split = cpu::Winograd3x3::Split;
  for (const Case& c : cases) {
    cpu::WinogradGeometry g;
    g.ic = 2 * c.block, g.oc = c.oc, g.h = g.w = 15, g.pad_t = g.pad_l = 1, g.block = c.block;
    g.stride = c.stride, g.out_tile = c.tile;
    g.oh = g.ow = (15 + 2 - 3) / c.stride + 1;
    isa.runs(c.block);
    if (!cpu::Winograd3x3::supports(g)) {
      EXPECT_FALSE(cpu::simd_block_runs(c.block)) << "a geometry the kernels should take";
      continue;
    }
    const TensorData x = test::random_tensor({1, g.ic, 15, 15}, 8), w = test::random_tensor({g.oc, g.ic, 3, 3}, 9),
                     b = test::random_tensor({g.oc}, 10);
    const float inf = std::numeric_limits<float>::infinity();
    cpu::Winograd3x3 tiles(g, w.f.data(), b.f.data(), -inf, inf, Split::Tiles, true),
        whole(g, w.f.data(), b.f.data(), -inf, inf, Split::Positions),
        positions(g, w.f.data(), b.f.data(), -inf, inf, Split::Positions, true);
    const std::string what = "stride " + std::to_string(c.stride) + " tile " + std::to_string(c.tile) + " block " +
                             std::to_string(c.block);
    EXPECT_EQ(tiles.transformed_weight_bytes(), cpu::Winograd3x3::weight_bytes(g)) << what;
    EXPECT_EQ(whole.transformed_weight_bytes(), cpu::Winograd3x3::weight_bytes(g)) << what;
    EXPECT_FALSE(tiles.half_transformed() || whole.half_transformed()) << what;
    EXPECT_EQ(positions.half_transformed(), c.num != c.den) << what;
    EXPECT_EQ(positions.transformed_weight_bytes() * c.den, tiles.transformed_weight_bytes() * c.num) << what;
    std::vector<float> want(static_cast<std::size_t>(g.oc) * g.oh * g.ow), y(want.size());
    tiles.run(x.f.data(), want.data());
    double scale = 1e-30;
    for (float v : want) scale = std::max(scale, std::fabs(static_cast<double>(v)));
    positions.run(x.f.data(), y.data());
    const void* scratch = positions.own_scratch();
    ASSERT_NE(scratch, nullptr);
    EXPECT_LT(max_abs_diff(y.data(), want.data(), y.size()) / scale, 1e-5) << what;
    const std::vector<float> first = y;
    for (int round = 0; round < 3; ++round) {
      std::fill(y.begin(), y.end(), NAN);
      positions.run(x.f.data(), y.data());
      EXPECT_EQ(positions.own_scratch(), scratch) << what << ": run allocated again";
      EXPECT_EQ(max_abs_diff(y.data(), first.data(), y.size()), 0.0) << what;
    }
  }
  isa.report();
}

// EngineOptions::compact_weights in a network: each 3x3 layer vinfer's
// F(4,3) runs split by positions (ResNet18's 28x28 and 14x14 ones, by the
// rule without timing) holds half its transformed weights and the outputs
// are the whole form's within rounding; every other layer runs as without
// the option.
TEST(Winograd, CompactWeightsHalveThePositionsSplit) {
  const Graph g = zoo_graph("resnet18", "", nullptr, 3);
  EngineOptions opt;
  opt.threads = 2;
  opt.tune = false;
  Model whole = Model::from_graph(g, "resnet18", opt);
  opt.compact_weights = true;
  Model compact = Model::from_graph(g, "resnet18", opt);
  std::vector<float> x(whole.input_size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 89) / 89.f - 0.5f;
  std::vector<float> a(whole.output_size(), NAN), b(whole.output_size(), NAN);
  const std::vector<LayerProfile> pw = whole.profile(x.data(), a.data()), pc = compact.profile(x.data(), b.data());
  double scale = 0;
  for (float v : a) scale = std::max(scale, std::fabs(static_cast<double>(v)));
  EXPECT_LT(max_abs_diff(a.data(), b.data(), a.size()) / scale, 1e-5);
  ASSERT_EQ(pw.size(), pc.size());
  int halved = 0;
  for (std::size_t i = 0; i < pw.size(); ++i) {
    ASSERT_EQ(pw[i].name, pc[i].name);
    const bool positions = pw[i].impl.find("wino_f43_pos_") != std::string::npos;
    EXPECT_EQ(pw[i].impl.find("_half"), std::string::npos) << pw[i].impl;
    if (positions) {
      ++halved;
      EXPECT_NE(pc[i].impl.find("wino_f43_pos_half_"), std::string::npos) << pc[i].impl;
      EXPECT_EQ(pc[i].weight_bytes * 2, pw[i].weight_bytes) << pc[i].name;
    } else {
      EXPECT_EQ(pc[i].impl, pw[i].impl) << pc[i].name;
      EXPECT_EQ(pc[i].weight_bytes, pw[i].weight_bytes) << pc[i].name;
    }
  }
  // layer2.0.conv2 and layer2.1.conv1 (2.25 MiB of transformed weights on
  // 49 tiles; layer2.1.conv2 adds the residual, which oneDNN's kernel runs)
  if (cpu::Winograd3x3::supports({128, 128, 28, 28, 28, 28, 1, 1, detail::cpu_features().avx512 ? 16 : 8}))
    EXPECT_GE(halved, 2);
}

// vinfer's int8 Winograd (cpu/winograd_u8.hpp) on u8 inputs: a 3x3 of
// stride 1 and padding 1 with weights and a bias (ramp: values that change
// slowly from pixel to pixel, as activations do, wrapping; else any u8
// values).
struct WinogradU8Case {
  int ic, oc, h, w, images;
  bool relu, u8_out, ramp;
};
const WinogradU8Case kWinogradU8Cases[] = {
    {32, 32, 15, 15, 2, false, false, false},  // partial tiles at the right and bottom, f32 out
    {64, 96, 14, 14, 1, true, true, false},    // few tiles: the threads share the panels
    {512, 64, 16, 16, 2, true, true, true},    // several chunks per thread
    {128, 64, 28, 28, 1, true, false, true},
};

struct WinogradU8Data {
  std::vector<std::uint8_t> x;
  TensorData w, b;
  float s_in = 0.02f, s_out = 0.f;
};
WinogradU8Data winograd_u8_data(const WinogradU8Case& c, unsigned seed) {
  WinogradU8Data d;
  std::mt19937 rng(seed);
  d.x.resize(static_cast<std::size_t>(c.images) * c.h * c.w * c.ic);
  for (std::size_t i = 0; i < d.x.size(); ++i) {
    const std::size_t ch = i % static_cast<std::size_t>(c.ic), px = i / static_cast<std::size_t>(c.ic);
    const int y = static_cast<int>(px / static_cast<std::size_t>(c.w) % static_cast<std::size_t>(c.h));
    const int xx = static_cast<int>(px % static_cast<std::size_t>(c.w));
    d.x[i] = c.ramp ? static_cast<std::uint8_t>((ch * 7 + static_cast<std::size_t>(y * 5 + xx * 3)) % 200 + rng() % 8)
                    : static_cast<std::uint8_t>(rng() % 256);
  }
  d.w = test::random_tensor({c.oc, c.ic, 3, 3}, seed + 1);
  for (float& v : d.w.f) v /= std::sqrt(9.f * static_cast<float>(c.ic));
  d.b = test::random_tensor({c.oc}, seed + 2);
  d.s_out = c.u8_out ? 4.f / 255.f : 0.f;  // (outputs reach a few units: some saturate)
  return d;
}

// The AVX-512 VNNI kernel computes exactly its plain arithmetic (the same
// integers, the same float operations in the same order), on 1 and 2
// threads.
TEST(WinogradU8, KernelIsItsPlainArithmetic) {
  if (!detail::cpu_features().avx512_vnni) GTEST_SKIP() << "no AVX-512 VNNI here: the kernel does not run";
  for (const WinogradU8Case& c : kWinogradU8Cases) {
    const WinogradU8Data d = winograd_u8_data(c, 11);
    cpu::WinogradU8Geometry geo;
    geo.ic = c.ic, geo.oc = c.oc, geo.h = c.h, geo.w = c.w;
    ASSERT_TRUE(cpu::WinogradU8::supports(geo));
    const cpu::WinogradU8 k(geo, d.w.f.data(), d.b.f.data(), d.s_in, d.s_out, c.relu);
    const std::size_t out = static_cast<std::size_t>(c.images) * c.h * c.w * c.oc * (c.u8_out ? 1 : sizeof(float));
    std::vector<std::uint8_t> want(out), got(out);
    k.run_plain(d.x.data(), want.data(), c.images);
    for (int threads : {1, 2}) {
      const cpu::Block scratch = cpu::aligned_block(k.scratch_bytes(threads));
      std::fill(got.begin(), got.end(), std::uint8_t{0xAB});
      k.run(d.x.data(), got.data(), scratch.get(), threads, c.images);
      EXPECT_EQ(std::memcmp(want.data(), got.data(), out), 0)
          << c.ic << " -> " << c.oc << " on " << c.h << "x" << c.w << ", " << threads << " thread(s)";
    }
  }
}

// The plain arithmetic against the float convolution of the same u8 input,
// next to what int8 direct convolution computes there (weights quantized
// per output channel, as oneDNN's): within 1.2 % of the largest output,
// and at most four times the direct form's error (0.3-0.4 % here; the
// transformed weights' quantization and the inputs', a tile's values
// reaching +-1020 where neighbouring pixels differ by up to 255, add about
// twice that; in a network the activations' own quantization weighs more:
// VGG19's logit error 5.5e-2 of the largest against 5.2e-2 direct).
TEST(WinogradU8, PlainArithmeticAgainstTheConvolution) {
  for (WinogradU8Case c : kWinogradU8Cases) {
    c.u8_out = false;
    const WinogradU8Data d = winograd_u8_data(c, 21);
    cpu::WinogradU8Geometry geo;
    geo.ic = c.ic, geo.oc = c.oc, geo.h = c.h, geo.w = c.w;
    const cpu::WinogradU8 k(geo, d.w.f.data(), d.b.f.data(), d.s_in, 0.f, c.relu);
    std::vector<float> got(static_cast<std::size_t>(c.images) * c.h * c.w * c.oc);
    k.run_plain(d.x.data(), got.data(), c.images);
    std::vector<float> wq = d.w.f;  // per output channel to +-127
    const std::size_t per_oc = static_cast<std::size_t>(c.ic) * 9;
    for (std::size_t o = 0; o < static_cast<std::size_t>(c.oc); ++o) {
      float top = 0;
      for (std::size_t i = 0; i < per_oc; ++i) top = std::max(top, std::fabs(wq[o * per_oc + i]));
      for (std::size_t i = 0; i < per_oc; ++i) wq[o * per_oc + i] = std::nearbyint(wq[o * per_oc + i] / top * 127.f) * top / 127.f;
    }
    double worst = 0, worst_direct = 0, largest = 0;
    for (int n = 0; n < c.images; ++n)
      for (int y = 0; y < c.h; ++y)
        for (int x = 0; x < c.w; ++x)
          for (int o = 0; o < c.oc; ++o) {
            double acc = d.b.f[static_cast<std::size_t>(o)], direct = acc;
            for (int i = 0; i < c.ic; ++i)
              for (int ky = 0; ky < 3; ++ky)
                for (int kx = 0; kx < 3; ++kx) {
                  const int yy = y + ky - 1, xx = x + kx - 1;
                  if (yy < 0 || yy >= c.h || xx < 0 || xx >= c.w) continue;
                  const double v = d.s_in * d.x[((static_cast<std::size_t>(n) * c.h + yy) * c.w + xx) * c.ic + i];
                  const std::size_t at = ((static_cast<std::size_t>(o) * c.ic + i) * 3 + ky) * 3 + kx;
                  acc += v * d.w.f[at], direct += v * wq[at];
                }
            if (c.relu) acc = std::max(acc, 0.0), direct = std::max(direct, 0.0);
            const float g = got[((static_cast<std::size_t>(n) * c.h + y) * c.w + x) * c.oc + o];
            worst = std::max(worst, std::fabs(g - acc)), worst_direct = std::max(worst_direct, std::fabs(direct - acc));
            largest = std::max(largest, std::fabs(acc));
          }
    EXPECT_LE(worst, 1.2e-2 * largest) << c.ic << " -> " << c.oc;
    EXPECT_LE(worst, 4 * worst_direct) << c.ic << " -> " << c.oc;
  }
}

// vinfer's 1x1 convolution (src/cpu/conv1x1*) against plain loops: both
// channel blocks, with and without the pre-activation (and its ReLU), bias,
// residual, clamps, SiLU, stride 1 and 2, 3x3 windows with padding, maps split
// by pixels and (few pixels) by output channels, partial register tiles, an
// odd number of output vectors, input channels that end in a partial block
// (its padding lanes hold NaN), output channels that end in one (its padding
// lanes written as zeros), a scale given per image at run time
// (squeeze-and-excite's), 1-3 threads.
TEST(Conv1x1Pre, MatchesPlainLoops) {
  enum Pre { None, Affine, AffineRelu, PerImage };
  struct Case {
    int ic, oc, hw, block;
    Pre pre;
    bool bias, residual;
    float lo, hi;
    int in_h = 0, in_w = 0;  // gathered from this input map (hw: unused), by default a 1x1 of stride 2
    int kernel = 1, stride = 2, pad = 0;
    cpu::OutAct act = cpu::OutAct::Clamp;
  };
  const float inf = std::numeric_limits<float>::infinity();
  const cpu::OutAct silu = cpu::OutAct::Swish;
  const std::vector<Case> cases = {
      {64, 128, 3136, 16, AffineRelu, true, false, 0.f, inf},  // DenseNet's first block
      {96, 48, 49, 16, AffineRelu, false, false, -inf, inf},   // 7x7: channel split; 48 = 32 + 16
      {128, 64, 196, 16, AffineRelu, true, false, 0.f, inf},   // 14x14: equal pixel shares, blocks of 32-33, tiles of 10-11
      {32, 16, 197, 16, Affine, true, false, -0.5f, 0.5f},     // partial tile, one vector, Clip
      {40, 24, 61, 8, AffineRelu, true, false, 0.f, inf},      // AVX2 blocks: 16 + 8, partial 6-row tile
      {16, 64, 1000, 8, Affine, false, false, -inf, inf},
      {256, 1024 - 16, 196, 16, None, true, true, 0.f, inf},  // ResNet50's layer3 conv3 (+ shortcut, ReLU), odd vectors
      {512, 96, 49, 16, None, true, true, 0.f, inf},          // layer4-like: channel split, with the residual
      {48, 40, 50, 8, None, false, true, -1.f, 1.f},          // AVX2, residual, Clip
      {64, 32, 49, 16, None, true, false, -inf, inf},         // no pre-activation, no residual
      {1024, 272, 49, 16, None, true, true, 0.f, inf},        // weights over 1 MiB on 7x7: one block of 49 pixels
      {1024, 264, 60, 8, None, true, true, 0.f, inf},         // AVX2, one block of 60 (11 tiles of 5-6 rows)
      {64, 96, 0, 16, None, true, true, 0.f, inf, 14, 14},    // stride 2 (ResNet's shortcut): 14x14 -> 7x7
      {32, 48, 0, 16, None, false, false, -inf, inf, 13, 11},  // stride 2, odd sizes: 13x11 -> 7x6
      {16, 24, 0, 8, None, true, true, 0.f, inf, 28, 27},     // AVX2, stride 2: 28x27 -> 14x14, blocks of 24
      // 3x3 windows as a GEMM (im2col): ResNet's stride-2 3x3 (14x14 -> 7x7,
      // one block, channel split), odd sizes, stride 1, a pre-activation
      // (padding stays zero), AVX2.
      {512, 272, 0, 16, None, true, true, 0.f, inf, 14, 14, 3, 2, 1},
      {32, 48, 0, 16, None, true, false, -inf, inf, 13, 10, 3, 2, 1},
      {32, 32, 0, 16, None, false, true, 0.f, inf, 9, 11, 3, 1, 1},
      {48, 32, 0, 16, AffineRelu, true, false, -inf, inf, 8, 8, 3, 2, 1},
      {24, 16, 0, 8, None, true, true, 0.f, inf, 15, 16, 3, 2, 1},
      // Partial input blocks (EfficientNet's 24- and 40-channel maps), SiLU.
      {24, 144, 200, 16, None, true, false, -inf, inf, 0, 0, 1, 2, 0, silu},
      {16, 96, 1000, 16, None, true, false, -inf, inf, 0, 0, 1, 2, 0, silu},
      {1152, 48, 49, 16, None, false, false, -inf, inf, 0, 0, 1, 2, 0, silu},  // channel split
      {20, 24, 77, 8, None, true, false, -inf, inf, 0, 0, 1, 2, 0, silu},
      {72, 32, 49, 16, AffineRelu, true, false, -inf, inf},
      {40, 32, 0, 16, None, true, true, 0.f, inf, 14, 14},
      {20, 16, 0, 8, None, true, false, -inf, inf, 9, 9, 3, 2, 1},
      // Partial output blocks; squeeze-and-excite's scale, with a residual.
      {64, 24, 196, 16, None, true, true, -inf, inf},
      {32, 40, 0, 16, None, true, false, 0.f, inf, 9, 9, 3, 2, 1},
      {20, 12, 77, 8, AffineRelu, false, false, -inf, inf, 0, 0, 1, 2, 0, silu},
      {144, 40, 196, 16, PerImage, true, true, -inf, inf},
      {120, 48, 49, 16, PerImage, false, false, -inf, inf},
      {20, 12, 60, 8, PerImage, true, false, 0.f, 6.f},
  };
  IsaCoverage isa;
  for (const Case& c : cases) {
    cpu::Conv1x1Geometry g;
    g.ic = c.ic, g.oc = c.oc, g.hw = c.hw, g.block = c.block;
    if (c.in_h > 0) {
      g.stride = c.stride, g.kernel = c.kernel, g.pad = c.pad, g.in_h = c.in_h, g.in_w = c.in_w;
      g.ow = (c.in_w + 2 * c.pad - c.kernel) / c.stride + 1;
      g.hw = ((c.in_h + 2 * c.pad - c.kernel) / c.stride + 1) * g.ow;
    }
    const int hw = g.hw, in_px = static_cast<int>(g.in_pixels()), taps = g.kernel * g.kernel;
    if (!cpu::Conv1x1Pre::supports(g)) {
      EXPECT_FALSE(cpu::simd_block_runs(c.block)) << "ic " << c.ic << " oc " << c.oc << " kernel " << c.kernel;
      isa.runs(c.block);
      continue;
    }
    isa.runs(c.block);
    const TensorData x = test::random_tensor({c.ic, in_px}, 21), w = test::random_tensor({c.oc, c.ic * taps}, 22),
                     b = test::random_tensor({c.oc}, 23), sc = test::random_tensor({c.ic}, 24),
                     sh = test::random_tensor({c.ic}, 25), r = test::random_tensor({c.oc, hw}, 26);
    // Blocked index of channel ch, pixel p of a map of `px` pixels.
    auto at = [&](int ch, int p, int px) { return (static_cast<std::size_t>(ch / c.block) * px + p) * c.block + ch % c.block; };
    // The input pixel that tap t of output pixel p reads, or -1 (padding).
    auto from = [&](int p, int t) {
      if (c.in_h == 0) return p;
      const int iy = p / g.ow * g.stride + t / g.kernel - g.pad, ix = p % g.ow * g.stride + t % g.kernel - g.pad;
      return iy >= 0 && iy < g.in_h && ix >= 0 && ix < g.in_w ? iy * g.in_w + ix : -1;
    };
    const int ic_blocks = (c.ic + c.block - 1) / c.block * c.block, oc_blocks = (c.oc + c.block - 1) / c.block * c.block;
    std::vector<float> src(static_cast<std::size_t>(ic_blocks) * in_px, NAN), res(static_cast<std::size_t>(oc_blocks) * hw),
        want(res.size());
    for (int i = 0; i < c.ic; ++i)
      for (int p = 0; p < in_px; ++p) src[at(i, p, in_px)] = x.f[static_cast<std::size_t>(i) * in_px + p];
    for (int o = 0; o < c.oc; ++o)
      for (int p = 0; p < hw; ++p) res[at(o, p, hw)] = r.f[static_cast<std::size_t>(o) * hw + p];
    double scale = 1e-30;
    for (int o = 0; o < c.oc; ++o)
      for (int p = 0; p < hw; ++p) {
        double acc = c.bias ? b.f[o] : 0.0;
        for (int i = 0; i < c.ic; ++i)
          for (int t = 0; t < taps; ++t) {
            const int q = from(p, t);
            if (q < 0) continue;  // zero padding (after the pre-activation)
            double v = x.f[static_cast<std::size_t>(i) * in_px + q];
            if (c.pre == PerImage) v = v * sc.f[i];
            else if (c.pre != None) v = v * sc.f[i] + sh.f[i];
            if (c.pre == AffineRelu) v = std::max(v, 0.0);
            acc += v * w.f[(static_cast<std::size_t>(o) * c.ic + i) * taps + t];
          }
        if (c.residual) acc += res[at(o, p, hw)];
        scale = std::max(scale, std::fabs(acc));
        want[at(o, p, hw)] = static_cast<float>(c.act == silu ? acc / (1 + std::exp(-acc)) : std::clamp<double>(acc, c.lo, c.hi));
      }
    cpu::PreActivation pre;
    if (c.pre == PerImage) pre.per_image = true;
    else if (c.pre != None) pre.scale = sc.f.data(), pre.shift = sh.f.data(), pre.lo = c.pre == AffineRelu ? 0.f : -inf;
    std::vector<float> image_scale(static_cast<std::size_t>(ic_blocks), 0.f);  // blocked: padded with zeros
    std::copy(sc.f.begin(), sc.f.end(), image_scale.begin());
    const float* run_scale = c.pre == PerImage ? image_scale.data() : nullptr;
    cpu::Conv1x1Pre k(g, w.f.data(), c.bias ? b.f.data() : nullptr, pre, c.lo, c.hi, c.act);
    const float* residual = c.residual ? res.data() : nullptr;
    const int max_threads = omp_get_max_threads();
    for (int threads : {1, 2, 3}) {
      std::vector<float> dst(want.size(), NAN);
      cpu::Block scratch = cpu::aligned_block(k.scratch_bytes(threads));
      omp_set_num_threads(threads);
      k.run(src.data(), dst.data(), scratch.get(), threads, nullptr, residual, 1, 0, 0, run_scale);
      const double diff = max_abs_diff(dst.data(), want.data(), dst.size());
      EXPECT_LT(diff / scale, 1e-5) << "ic " << c.ic << " oc " << c.oc << " hw " << hw << " kernel " << g.kernel
                                    << " stride " << g.stride << " block " << c.block << " threads " << threads;
      std::vector<float> again(want.size(), NAN);
      const std::vector<cpu::ByteSpan> next = {{x.f.data(), x.f.size() * sizeof(float)}, {w.f.data(), 100}};
      k.run(src.data(), again.data(), scratch.get(), threads, &next, residual, 1, 0, 0, run_scale);
      EXPECT_EQ(max_abs_diff(again.data(), dst.data(), dst.size()), 0.0) << "with a prefetch list, threads " << threads;
    }
    omp_set_num_threads(max_threads);
  }
  isa.report();
}

// Kernel blocks: 64-byte aligned, zeroed, writable and disjoint, whether
// from aligned_alloc (small, or VINFER_HUGE_PAGES=0), the shared huge-page
// chunks (several per chunk, and past a chunk's end) or mapped on their own
// (large); freed in any order.
TEST(AlignedBlock, ZeroedAlignedAndDisjoint) {
  for (const char* setting : {"1", "0"}) {
    ::setenv("VINFER_HUGE_PAGES", setting, 1);
    std::vector<std::size_t> sizes = {100, 64 << 10, (1 << 20) + 3, 40 << 20};
    for (int i = 0; i < 40; ++i) sizes.push_back((std::size_t{900} << 10) + 64 * i);  // 35 MiB: past one chunk
    std::vector<cpu::Block> blocks;
    for (std::size_t n : sizes) {
      blocks.push_back(cpu::aligned_block(n));
      auto* p = static_cast<unsigned char*>(blocks.back().get());
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u) << n;
      std::size_t nonzero = 0;
      for (std::size_t i = 0; i < n; i += 61) nonzero += p[i] != 0;
      EXPECT_EQ(nonzero, 0u) << n;
      std::memset(p, 0xab, n);  // all of it writable; overlaps would show below
    }
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      const auto* p = static_cast<const unsigned char*>(blocks[b].get());
      EXPECT_EQ(p[0], 0xab);
      EXPECT_EQ(p[sizes[b] - 1], 0xab);
      for (std::size_t c = b + 1; c < blocks.size(); ++c) {
        const auto* q = static_cast<const unsigned char*>(blocks[c].get());
        EXPECT_TRUE(p + sizes[b] <= q || q + sizes[c] <= p) << "blocks " << b << " and " << c << " overlap";
      }
    }
    for (std::size_t b = 0; b < blocks.size(); b += 2) blocks[b].reset();  // every other one first
    blocks.clear();
  }
  ::unsetenv("VINFER_HUGE_PAGES");
}

// `vinfer info` says what happens about huge pages: off with
// VINFER_HUGE_PAGES=0, otherwise on or why not.
TEST(AlignedBlock, InfoSaysWhetherHugePagesAreOn) {
  Graph g;
  const int x = g.add_input("x", {1, 16, 4, 4});
  g.mark_output(g.add_node("Relu", {x})[0]);
  auto line = [&] {
    EngineOptions opt;
    opt.threads = 1;
    const Model m = Model::from_graph(g, "test", opt);
    for (const std::string& p : m.info().passes)
      if (p.rfind("huge_pages: ", 0) == 0) return p;
    return std::string();
  };
  ::setenv("VINFER_HUGE_PAGES", "0", 1);
  EXPECT_EQ(line(), "huge_pages: off (VINFER_HUGE_PAGES=0)");
  ::unsetenv("VINFER_HUGE_PAGES");
  const std::string on = line();
  EXPECT_EQ(on.rfind("huge_pages: ", 0), 0u) << on;
  EXPECT_EQ(on.find("off"), std::string::npos) << on;
}

// The cursor that spreads the next layers' weights over a kernel's GEMM
// calls: every line of every span is prefetched, in runs of at most k lines
// covered by k prefetches at most a line apart, each run at most one line
// past its end (the next run's first line), whatever the calls estimate.
TEST(Prefetch, CursorCoversEveryLine) {
  alignas(64) static char mem[64 * 1000];
  const std::vector<cpu::ByteSpan> spans = {{mem, 64 * 300}, {mem + 64 * 300, 0}, {mem + 64 * 400, 64 * 250 + 10},
                                            {mem + 64 * 700, 1}};
  const std::size_t total_lines = 300 + 251 + 1;
  for (int threads : {1, 2, 3}) {
    for (long calls : {1L, 7L, 1000L}) {
      std::vector<int> hits(1000, 0);
      std::size_t runs = 0, hit_count = 0;
      for (int t = 0; t < threads; ++t) {
        cpu::PrefetchCursor cursor(&spans, t, threads, calls);
        for (int call = 0; call < 2000; ++call) {
          const int k = 16 + call % 50;
          const char* p = nullptr;
          int step = -1;
          cursor.next(k, p, step);
          ASSERT_GE(step, 0);
          ASSERT_LE(step, 64);
          if (step == 0) {
            EXPECT_EQ(p, cpu::idle_prefetch_line());
            break;
          }
          ASSERT_GE(p, mem);
          // The lines this call's k prefetches touch, each counted once.
          const std::size_t first = static_cast<std::size_t>(p - mem) / 64;
          const std::size_t last = static_cast<std::size_t>(p - mem + static_cast<std::ptrdiff_t>(k - 1) * step) / 64;
          ASSERT_LE(last - first, static_cast<std::size_t>(k));
          ASSERT_LT(last, hits.size());
          for (std::size_t line = first; line <= last; ++line) ++hits[line], ++hit_count;
          ++runs;
        }
      }
      std::size_t covered = 0;
      for (std::size_t line = 0; line < hits.size(); ++line) {
        const bool in_span = line < 300 || (line >= 400 && line < 651) || line == 700;
        if (in_span) {
          EXPECT_GE(hits[line], 1) << "line " << line << " threads " << threads << " calls " << calls;
          covered += hits[line] >= 1;
        }
      }
      EXPECT_EQ(covered, total_lines);
      EXPECT_LE(hit_count, total_lines + runs) << "lines fetched twice, threads " << threads << " calls " << calls;
    }
  }
  // No spans, or nothing in them: only the idle line.
  const std::vector<cpu::ByteSpan> empty = {{mem, 0}};
  for (const std::vector<cpu::ByteSpan>* s : {static_cast<const std::vector<cpu::ByteSpan>*>(nullptr), &empty}) {
    cpu::PrefetchCursor cursor(s, 0, 2, 10);
    const char* p = nullptr;
    int step = -1;
    cursor.next(32, p, step);
    EXPECT_EQ(step, 0);
    EXPECT_EQ(p, cpu::idle_prefetch_line());
  }
}

// The same kernels as the engine picks them (VINFER_WINOGRAD=vinfer forces
// them where oneDNN has its own or the rule would not), inside a graph with a
// fused ReLU or SiLU (x * Sigmoid(x), as exporters write it).
TEST(Winograd, EngineUsesItWhenAsked) {
  struct Case {
    Shape x;
    Ints pads;  // top, left, bottom, right
    std::int64_t stride;
    int oh, ow;
  };
  // Stride 1 and 2; the last with uneven pads on odd sizes (a partial last tile).
  for (const Case& c : {Case{{1, 32, 30, 29}, {1, 1, 1, 1}, 1, 30, 29}, Case{{1, 32, 30, 29}, {1, 1, 1, 1}, 2, 15, 15},
                        Case{{1, 16, 11, 10}, {0, 1, 2, 1}, 2, 6, 5}}) {
    for (bool silu : {false, true}) {
      Graph g = conv_graph(c.x, 32, {3, 3}, {{"pads", c.pads}, {"strides", Ints{c.stride, c.stride}}}, true, 11);
      const int conv_out = g.outputs[0];
      g.outputs.clear();
      g.mark_output(silu ? g.add_node("Mul", {conv_out, g.add_node("Sigmoid", {conv_out})[0]})[0]
                         : g.add_node("Relu", {conv_out})[0]);
      double rel;
      const std::string impls = impls_with(g, "VINFER_WINOGRAD", "vinfer", rel);
      EXPECT_LT(rel, 1e-5) << "stride " << c.stride << " " << c.x[2] << "x" << c.x[3] << (silu ? " silu" : "");
      const int ic = static_cast<int>(c.x[1]), h = static_cast<int>(c.x[2]), w = static_cast<int>(c.x[3]);
      const int pad_t = static_cast<int>(c.pads[0]), pad_l = static_cast<int>(c.pads[1]);
      if (cpu::Winograd3x3::supports({ic, 32, h, w, c.oh, c.ow, pad_t, pad_l, 8, static_cast<int>(c.stride)})) {
        EXPECT_NE(impls.find(c.stride == 1 ? "wino_f43" : "wino_s2"), std::string::npos) << impls;
        EXPECT_EQ(impls.find("_silu") != std::string::npos, silu) << impls;
      }
    }
  }
}

// A residual Add fused into the 3x3 runs in vinfer's Winograd, in either
// order: EfficientNetV2's (SiLU, then the shortcut; 24 channels, a partial
// block) and ResNet's (the sum, then ReLU), against the reference, in one op;
// 7 images, which the kernel takes in two runs (fold_images: 5 of 196 tiles
// at most), each with its images' share of the residual.
TEST(Winograd, EngineAddsResiduals) {
  for (bool silu_first : {true, false}) {
    const std::int64_t ch = silu_first ? 24 : 32;
    Graph g = conv_graph({7, ch, 56, 55}, ch, {3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, true, 13);
    const int x = g.inputs[0], conv_out = g.outputs[0];
    g.outputs.clear();
    if (silu_first) {
      const int act = g.add_node("Mul", {conv_out, g.add_node("Sigmoid", {conv_out})[0]})[0];
      g.mark_output(g.add_node("Add", {act, x})[0]);
    } else {
      g.mark_output(g.add_node("Relu", {g.add_node("Add", {conv_out, x})[0]})[0]);
    }
    double rel;
    const std::string impls = impls_with(g, "VINFER_WINOGRAD", "vinfer", rel);
    EXPECT_LT(rel, 1e-5) << (silu_first ? "SiLU, then the residual" : "the residual, then ReLU");
    if (!cpu::Winograd3x3::supports({static_cast<int>(ch), static_cast<int>(ch), 56, 55, 56, 55, 1, 1, 8, 1})) continue;
    EXPECT_NE(impls.find(silu_first ? "wino_f43_silu" : "wino_f43"), std::string::npos) << impls;
    EXPECT_EQ(impls.find("binary"), std::string::npos) << impls;  // no separate Add
  }
}

// VINFER_WINOGRAD=f23 runs vinfer's F(2,3) on stride-1 3x3s from 7x7 up (the
// timing chooses it otherwise): ResNet50's layer4 shape (7x7, a one-row last
// tile) and a 14x14 map with uneven pads, split by positions and by tiles.
TEST(Winograd, EngineRunsF23WhenAsked) {
  struct Case {
    Shape x;
    Ints pads;
    std::int64_t m;
  };
  for (const Case& c : {Case{{1, 64, 7, 7}, {1, 1, 1, 1}, 64}, Case{{1, 16, 14, 13}, {0, 1, 2, 1}, 32}}) {
    Graph g = conv_graph(c.x, c.m, {3, 3}, {{"pads", c.pads}}, true, 12);
    const int conv_out = g.outputs[0];
    g.outputs.clear();
    g.mark_output(g.add_node("Relu", {conv_out})[0]);
    double rel;
    const std::string impls = impls_with(g, "VINFER_WINOGRAD", "f23", rel);
    EXPECT_LT(rel, 1e-5) << c.x[2] << "x" << c.x[3];
    cpu::WinogradGeometry geo{static_cast<int>(c.x[1]), static_cast<int>(c.m), static_cast<int>(c.x[2]),
                              static_cast<int>(c.x[3]), 0, 0, static_cast<int>(c.pads[0]), static_cast<int>(c.pads[1]), 8,
                              1, 2};
    geo.oh = geo.h + static_cast<int>(c.pads[0] + c.pads[2]) - 2, geo.ow = geo.w + static_cast<int>(c.pads[1] + c.pads[3]) - 2;
    if (cpu::Winograd3x3::supports(geo)) EXPECT_NE(impls.find("wino_f23"), std::string::npos) << impls;
  }
}

// The load-time chooser, on scripted times (a fake clock): the fastest run
// of each candidate counts, the warm-up run does not, candidate 0 (the rule's
// choice) stays unless another beats it by more than the margin, rounds stop
// at the budget once five have run, and `prepare` runs before every run.
TEST(Tune, FastestOnScriptedTimes) {
  struct Script {
    std::vector<cpu::TuneCandidate> runs;
    cpu::TuneMeasure measure;
    std::shared_ptr<std::vector<std::size_t>> calls, prepared;
  };
  auto scripted = [](std::vector<std::vector<double>> times) {
    Script sc;
    sc.calls = std::make_shared<std::vector<std::size_t>>(times.size(), 0);
    sc.prepared = std::make_shared<std::vector<std::size_t>>(times.size(), 0);
    auto cur = std::make_shared<std::size_t>(0);
    for (std::size_t k = 0; k < times.size(); ++k)
      sc.runs.push_back({[cur, k] { *cur = k; }, [p = sc.prepared, k] { ++(*p)[k]; }});
    sc.measure = [times, calls = sc.calls, cur](const std::function<void()>& run) {
      run();
      const std::vector<double>& t = times[*cur];
      return t[std::min((*calls)[*cur]++, t.size() - 1)];
    };
    return sc;
  };
  {  // candidate 1's warm-up is slow and its best run is fastest of all
    const Script sc = scripted({{5, 4, 4, 4}, {50, 3, 2.5, 3}, {5, 3.9, 3.9, 3.9}});
    const cpu::TuneResult r = cpu::fastest(sc.runs, 1e9, 0.03, sc.measure);
    EXPECT_EQ(r.choice, 1);
    EXPECT_DOUBLE_EQ(r.best_ms[1], 2.5);
    EXPECT_EQ((*sc.calls)[0], 16u) << "warm-up + 15 rounds within the budget";
    EXPECT_EQ((*sc.prepared)[2], 16u);
  }
  {  // 2 % faster than the default is within the margin: the default stays
    const Script sc = scripted({{1, 1.0}, {1, 0.98}});
    EXPECT_EQ(cpu::fastest(sc.runs, 1e9, 0.03, sc.measure).choice, 0);
    EXPECT_EQ(cpu::fastest(sc.runs, 1e9, 0.01, sc.measure).choice, 1);
  }
  {  // a spent budget stops after five rounds
    const Script sc = scripted({{10}, {10}});
    const cpu::TuneResult r = cpu::fastest(sc.runs, 1, 0.03, sc.measure);
    EXPECT_EQ((*sc.calls)[0], 6u);
    EXPECT_DOUBLE_EQ(r.spent_ms, 120);
  }
}

// The cache file: choices of this CPU come back into the process (without
// timing), other CPUs' lines and this one's choices are written back, and a
// file that is not a cache, or a line that is not one of ours, is ignored.
TEST(Tune, CacheFileRoundTrip) {
  const std::string dir = ::testing::TempDir() + "vinfer_tune_cache_test";
  const std::string path = dir + "/sub/tune.txt";
  std::filesystem::remove_all(dir);
  EXPECT_EQ(cpu::load_tune_cache(path), 0) << "missing file";
  std::filesystem::create_directories(dir + "/sub");
  std::ofstream(path) << "not a cache\nX\tconv3x3 test-a\t2\n";
  EXPECT_EQ(cpu::load_tune_cache(path), 0) << "wrong header";
  const std::string cpu_name = cpu::tune_cache_cpu();
  EXPECT_NE(cpu_name.find(machine_info().cpu), std::string::npos) << cpu_name;
  if (!machine_info().cpu_id.empty()) EXPECT_NE(cpu_name.find(machine_info().cpu_id), std::string::npos) << cpu_name;
  std::ofstream(path) << "vinfer tune cache 1\n"
                      << "Other CPU\tconv3x3 test-b\t1\n"
                      << cpu_name << "\tconv3x3 test-c\t2\n"
                      << cpu_name << "\tconv3x3 test-d\tnot a number\n";
  EXPECT_EQ(cpu::load_tune_cache(path), 1);
  bool timed = false;
  EXPECT_EQ(cpu::tuned_choice("conv3x3 test-c", [&] { return timed = true, 0; }).first, 2);
  EXPECT_FALSE(timed) << "a cached choice is not timed again";
  EXPECT_EQ(cpu::tuned_choice("conv3x3 test-b", [] { return 3; }).first, 3) << "another CPU's line does not count";
  EXPECT_GE(cpu::save_tune_cache(path), 2);
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.rfind("vinfer tune cache 1\n", 0), 0u) << text;
  EXPECT_NE(text.find("Other CPU\tconv3x3 test-b\t1\n"), std::string::npos) << text;
  EXPECT_NE(text.find(cpu_name + "\tconv3x3 test-c\t2\n"), std::string::npos) << text;
  EXPECT_NE(text.find(cpu_name + "\tconv3x3 test-b\t3\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("not a number"), std::string::npos) << text;
  EXPECT_EQ(cpu::save_tune_cache(dir + "/sub"), 0) << "a directory in the way: nothing written, no throw";
  std::filesystem::remove_all(dir);
}

// Tuning inside the engine: a 3x3 layer that oneDNN and vinfer's Winograd
// can both run is timed once per shape and process, whichever kernel wins
// the result is right, and with tune off there is no timing. (24x24: under
// 28x28 oneDNN's direct convolution is a candidate on every ISA; oneDNN has
// no Winograd for AVX2.)
TEST(Tune, EngineTimesEachShapeOnce) {
  Graph g = conv_graph({1, 32, 24, 24}, 32, {3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, true, 21);
  const int conv_out = g.outputs[0];
  g.outputs.clear();
  g.mark_output(g.add_node("Relu", {conv_out})[0]);
  ModelInfo info;
  EXPECT_LT(cpu_vs_reference(g, &info), 1e-5);
  auto tune_line = [](const ModelInfo& i) {
    for (const std::string& p : i.passes)
      if (p.rfind("tune_conv", 0) == 0) return p;
    return std::string();
  };
  const bool eligible = cpu::Winograd3x3::supports({32, 32, 24, 24, 24, 24, 1, 1, detail::cpu_features().avx512 ? 16 : 8});
  if (!eligible) GTEST_SKIP() << "no Winograd kernel for this CPU";
  EXPECT_EQ(tune_line(info).rfind("tune_conv: 1 layers", 0), 0u) << tune_line(info);
  EngineOptions opt;
  opt.threads = 2;
  Model again = Model::from_graph(g, "test", opt);
  EXPECT_NE(tune_line(again.info()).find("0 shapes timed"), std::string::npos) << tune_line(again.info());
  opt.tune = false;
  Model fixed = Model::from_graph(g, "test", opt);
  EXPECT_EQ(tune_line(fixed.info()), "");
}

// VINFER_TUNE_LOG=1: one stderr line per timed shape, every candidate with
// its fastest run, and the choice (a shape no other test times: the choices
// are kept per process).
TEST(Tune, LogSaysWhatWasTimed) {
  if (!cpu::Winograd3x3::supports({48, 48, 20, 20, 20, 20, 1, 1, detail::cpu_features().avx512 ? 16 : 8}))
    GTEST_SKIP() << "no Winograd kernel for this CPU";
  Graph g = conv_graph({1, 48, 20, 20}, 48, {3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, true, 23);
  ::setenv("VINFER_TUNE_LOG", "1", 1);
  testing::internal::CaptureStderr();
  EngineOptions opt;
  opt.threads = 2;
  Model m = Model::from_graph(g, "test", opt);
  const std::string log = testing::internal::GetCapturedStderr();
  ::unsetenv("VINFER_TUNE_LOG");
  const std::string head = "vinfer: timed conv3x3 48>48 20x20>20x20 pad 1,1";
  ASSERT_EQ(log.rfind(head, 0), 0u) << log;
  EXPECT_NE(log.find(" ms (rule) "), std::string::npos) << log;
  EXPECT_NE(log.find("onednn_"), std::string::npos) << log;  // its Winograd (AVX-512) or direct
  EXPECT_NE(log.find("vinfer_winograd_"), std::string::npos) << log;
  EXPECT_NE(log.find(" -> "), std::string::npos) << log;
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;
}

// DenseNet's pattern inside a graph: BatchNormalization -> Relu -> 1x1 Conv
// (-> Relu) runs as one fused op when the normalized tensor has no other
// reader, and stays two ops (and still right) when it has.
TEST(Conv1x1Pre, EngineFusesThePreActivation) {
  for (const bool second_reader : {false, true}) {
    Graph g;
    const int x = g.add_input("x", {1, 64, 9, 11});
    auto param = [&](const char* name, unsigned seed, float lo) {
      TensorData t = test::random_tensor({64}, seed);
      for (float& v : t.f) v = lo + std::fabs(v);  // variances and scales away from zero
      return g.add_constant(name, t);
    };
    const int bn = g.add_node("BatchNormalization", {x, param("gamma", 31, 0.5f), param("beta", 32, -0.5f),
                                                     param("mean", 33, -0.3f), param("var", 34, 0.2f)})[0];
    const int act = g.add_node("Relu", {bn})[0];
    const int w = g.add_constant("w", test::random_tensor({48, 64, 1, 1}, 35));
    const int b = g.add_constant("b", test::random_tensor({48}, 36));
    const int conv = g.add_node("Conv", {act, w, b})[0];
    int out = g.add_node("Relu", {conv})[0];
    if (second_reader) out = g.add_node("Add", {out, g.add_node("Conv", {act, w, b})[0]})[0];
    g.mark_output(out);
    double rel;  // VINFER_CONV1X1=vinfer: by default only with AVX-512; this tests the AVX2 kernel too
    const std::string impls = impls_with(g, "VINFER_CONV1X1", "vinfer", rel);
    EXPECT_LT(rel, 1e-5) << "second reader " << second_reader;
    cpu::Conv1x1Geometry geo;
    geo.ic = 64, geo.oc = 48, geo.hw = 99, geo.block = detail::cpu_features().avx512 ? 16 : 8;
    if (!cpu::Conv1x1Pre::supports(geo)) continue;
    EXPECT_EQ(impls.find("conv1x1_preact") != std::string::npos, !second_reader) << impls;
    EXPECT_EQ(impls.find("scale_shift") != std::string::npos, second_reader) << impls;
  }
}

// A ResNet bottleneck's downsampling on a small map: vinfer's kernel runs
// its convolutions (AVX-512 by default; VINFER_CONV1X1=vinfer for the AVX2
// kernel): the 3x3 of stride 2 as a GEMM over its windows, the last 1x1,
// and the downsampling shortcut (a 1x1 of stride 2) with the residual Sum and
// the ReLU after it fused; VINFER_CONV1X1=onednn gives oneDNN's. Same
// results either way.
TEST(Conv1x1Pre, EngineRunsResNetsOneByOnesWithTheShortcut) {
  Graph g;
  const int x = g.add_input("x", {1, 64, 14, 14});
  const std::map<std::string, AttrValue> stride2 = {{"strides", Ints{2, 2}}};
  const int c1 = g.add_node("Conv", {x, g.add_constant("w1", test::random_tensor({32, 64, 3, 3}, 61)),
                                     g.add_constant("b1", test::random_tensor({32}, 62))},
                            {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}})[0];
  const int r1 = g.add_node("Relu", {c1})[0];
  const int c2 = g.add_node("Conv", {r1, g.add_constant("w2", test::random_tensor({64, 32, 1, 1}, 63)),
                                     g.add_constant("b2", test::random_tensor({64}, 64))})[0];
  const int shortcut = g.add_node("Conv", {x, g.add_constant("w3", test::random_tensor({64, 64, 1, 1}, 65))}, stride2)[0];
  g.mark_output(g.add_node("Relu", {g.add_node("Add", {c2, shortcut})[0]})[0]);
  cpu::Conv1x1Geometry geo;
  geo.ic = 64, geo.oc = 32, geo.hw = 49, geo.block = detail::cpu_features().avx512 ? 16 : 8;
  const bool runs = cpu::Conv1x1Pre::supports(geo);
  for (const char* setting : {"vinfer", "onednn"}) {
    ::setenv("VINFER_CONV1X1", setting, 1);
    ::setenv("VINFER_WINOGRAD", "onednn", 1);  // the 3x3 as a GEMM, not the stride-2 Winograd
    EXPECT_LT(cpu_vs_reference(g), 1e-5) << setting;
    EngineOptions opt;
    opt.threads = 2;
    Model m = Model::from_graph(g, "test", opt);
    ::unsetenv("VINFER_CONV1X1");
    ::unsetenv("VINFER_WINOGRAD");
    const TensorData in = test::random_tensor(m.input_shape(), 3);
    std::vector<float> y(m.output_size());
    std::vector<std::string> impls;  // of the convolutions (the rest: layout conversions at both ends)
    for (const LayerProfile& l : m.profile(in.f.data(), y.data()))
      if (l.name.rfind("Conv ", 0) == 0) impls.push_back(l.impl);
    // Three convolutions, and nothing else but the conversions: the Add and
    // both ReLUs are fused into them.
    ASSERT_EQ(impls.size(), 3u) << ::testing::PrintToString(impls);
    EXPECT_EQ(m.info().nodes_executed, 5) << setting;
    const bool own = runs && std::string(setting) == "vinfer";
    ASSERT_EQ(impls.size(), 3u);
    EXPECT_EQ(impls[0].rfind("vinfer:conv3x3_gemm_avx", 0) == 0, own) << impls[0];
    for (std::size_t i = 1; i < 3; ++i) EXPECT_EQ(impls[i].rfind("vinfer:conv1x1_avx", 0) == 0, own) << impls[i];
  }
}

// A 1x1 whose output goes through SiLU (x * Sigmoid(x), as exporters write
// EfficientNet's) on a 24-channel input (a partial channel block): with
// AVX-512 vinfer's kernel runs it with the function fused, elsewhere oneDNN's
// and vinfer's SiLU pass after it; both match the reference, and
// VINFER_CONV1X1=onednn gives oneDNN's.
TEST(Conv1x1Pre, EngineFusesSilu) {
  Graph g;
  const int x = g.add_input("x", {1, 24, 19, 21});
  const int c = g.add_node("Conv", {x, g.add_constant("w", test::random_tensor({96, 24, 1, 1}, 71)),
                                    g.add_constant("b", test::random_tensor({96}, 72))})[0];
  g.mark_output(g.add_node("Mul", {c, g.add_node("Sigmoid", {c})[0]})[0]);
  const bool avx512 = detail::cpu_features().avx512;
  for (const char* setting : {"", "onednn"}) {
    if (*setting) ::setenv("VINFER_CONV1X1", setting, 1);
    EXPECT_LT(cpu_vs_reference(g), 1e-5) << setting;
    EngineOptions opt;
    opt.threads = 2;
    Model m = Model::from_graph(g, "test", opt);
    ::unsetenv("VINFER_CONV1X1");
    const TensorData in = test::random_tensor(m.input_shape(), 3);
    std::vector<float> y(m.output_size());
    std::vector<std::string> impls;
    bool silu_pass = false;  // (on oneDNN's convolution: vinfer's SiLU after it)
    for (const LayerProfile& l : m.profile(in.f.data(), y.data())) {
      if (l.name.rfind("Conv ", 0) == 0) impls.push_back(l.impl);
      silu_pass = silu_pass || l.impl.rfind("vinfer:silu", 0) == 0;
    }
    ASSERT_EQ(impls.size(), 1u) << ::testing::PrintToString(impls);  // the Sigmoid and Mul fused
    EXPECT_EQ(impls[0] == "vinfer:conv1x1_silu_avx512", avx512 && !*setting) << impls[0];
    EXPECT_EQ(silu_pass, impls[0].rfind("vinfer:", 0) != 0 && detail::cpu_features().level != detail::IsaLevel::Plain);
  }
}

// The shares of the next weight panel that a panel's register tiles fetch
// (own_share): together they cover every line of it, each tile's k
// prefetches at most a line apart, each starting inside the panel and
// reaching past its end by at most a share or k bytes (steps of one byte).
TEST(Prefetch, OwnSharesCoverTheNextPanel) {
  for (int tiles : {1, 2, 3, 5, 8}) {
    for (int k : {64, 256, 2048}) {
      for (std::size_t bytes : {std::size_t{4096}, std::size_t{128} * 2048, std::size_t{64} * 300 + 4}) {
        if ((bytes + tiles - 1) / tiles > static_cast<std::size_t>(k) * 64) continue;  // more than one line a k iteration
        alignas(64) static char mem[64 * 8192];
        std::vector<int> hits(8192, 0);
        const std::size_t share = (bytes + tiles - 1) / tiles;
        for (int i = 0; i < tiles; ++i) {
          const char* at = nullptr;
          int step = -1;
          cpu::own_share(mem, bytes, k, i, tiles, at, step);
          ASSERT_GT(step, 0);
          ASSERT_LE(step, 64);
          ASSERT_GE(at, mem);
          const std::size_t first = static_cast<std::size_t>(at - mem);
          const std::size_t last = first + static_cast<std::size_t>(k - 1) * step;
          ASSERT_LT(first, bytes);
          ASSERT_LT(last, bytes + std::max(share, static_cast<std::size_t>(k))) << "tiles " << tiles << " k " << k;
          for (std::size_t b = first / 64; b <= last / 64; ++b) ++hits[b];
        }
        for (std::size_t line = 0; line < (bytes + 63) / 64; ++line)
          ASSERT_GE(hits[line], 1) << "line " << line << " of " << bytes << " bytes, tiles " << tiles << " k " << k;
      }
    }
  }
}

// An op run by vinfer's own kernel fetches the next layer's weights while it
// runs (prefetch.hpp): `vinfer info` says how much; VINFER_PREFETCH_WEIGHTS=0
// turns it off; the result is the same either way.
TEST(Prefetch, EngineFetchesTheNextLayersWeights) {
  Graph g;
  const int x = g.add_input("x", {1, 64, 14, 14});
  auto param = [&](const char* name, unsigned seed, float lo) {
    TensorData t = test::random_tensor({64}, seed);
    for (float& v : t.f) v = lo + std::fabs(v);
    return g.add_constant(name, t);
  };
  const int bn = g.add_node("BatchNormalization", {x, param("gamma", 41, 0.5f), param("beta", 42, -0.5f),
                                                   param("mean", 43, -0.3f), param("var", 44, 0.2f)})[0];
  const int act = g.add_node("Relu", {bn})[0];
  const int c1 = g.add_node("Conv", {act, g.add_constant("w1", test::random_tensor({32, 64, 1, 1}, 45))})[0];
  const int w3 = g.add_constant("w3", test::random_tensor({32, 32, 3, 3}, 46));
  g.mark_output(g.add_node("Conv", {c1, w3}, {{"pads", Ints{1, 1, 1, 1}}})[0]);
  auto prefetch_line = [](const ModelInfo& i) {
    for (const std::string& p : i.passes)
      if (p.rfind("prefetch_weights", 0) == 0) return p;
    return std::string();
  };
  ::setenv("VINFER_CONV1X1", "vinfer", 1);
  ModelInfo on, off;
  EXPECT_LT(cpu_vs_reference(g, &on), 1e-5);
  ::setenv("VINFER_PREFETCH_WEIGHTS", "0", 1);
  EXPECT_LT(cpu_vs_reference(g, &off), 1e-5);
  ::unsetenv("VINFER_PREFETCH_WEIGHTS");
  ::unsetenv("VINFER_CONV1X1");
  EXPECT_EQ(prefetch_line(off), "");
  cpu::Conv1x1Geometry geo;
  geo.ic = 64, geo.oc = 32, geo.hw = 196, geo.block = detail::cpu_features().avx512 ? 16 : 8;
  if (!cpu::Conv1x1Pre::supports(geo)) GTEST_SKIP() << "no 1x1 kernel for this CPU";
  // At least the 3x3's weights (32 x 32 x 9 floats, more where they are
  // stored transformed or padded) are fetched by the 1x1.
  const std::string line = prefetch_line(on);
  ASSERT_EQ(line.rfind("prefetch_weights: ", 0), 0u) << line;
  EXPECT_GE(std::stod(line.substr(line.find("fetch ") + 6)), 32.0 * 32 * 9 * 4 / (1 << 20)) << line;
}

// The normalize-and-average row kernel: each ISA's against the plain loops,
// 2x2 and 3x3 windows, with and without the ReLU.
TEST(NormPool, SimdRowMatchesPlain) {
  IsaCoverage isa;
  for (const int block : {8, 16}) {
    if (!isa.runs(block)) continue;
    for (const int k : {2, 3}) {
      for (const float lo : {0.f, -std::numeric_limits<float>::infinity()}) {
        const int w = 5 * k, ow = 5;
        const TensorData x = test::random_tensor({k * w * block}, 51), s = test::random_tensor({block}, 52),
                         t = test::random_tensor({block}, 53);
        std::vector<float> want(static_cast<std::size_t>(ow) * block), got(want.size(), NAN);
        cpu::NormPoolRow r{x.f.data(), w, k, k, ow, s.f.data(), t.f.data(), lo, 1.f / (k * k), want.data()};
        cpu::norm_pool_row_plain(r, block);
        r.y = got.data();
        if (block == 8) cpu::norm_pool_row_avx2(r);
        else cpu::norm_pool_row_avx512(r);
        for (std::size_t i = 0; i < want.size(); ++i)
          EXPECT_NEAR(got[i], want[i], 1e-5f * (1.f + std::fabs(want[i]))) << "block " << block << " k " << k << " at " << i;
      }
    }
  }
  isa.report();
}

// DenseNet's transition once the pool runs first: BatchNorm -> Relu ->
// AveragePool 2x2 is one op (vinfer:norm_pool) where the normalized tensor has
// no other reader and the windows tile the map; otherwise the separate pass.
TEST(NormPool, EngineAppliesTheNormalizationInThePool) {
  struct Case {
    const char* what;
    bool relu, second_reader;
    std::int64_t k, stride;
    bool fused;
  };
  const std::vector<Case> cases = {
      {"transition", true, false, 2, 2, true},
      {"no relu, 3x3 windows", false, false, 3, 3, true},
      {"second reader", true, true, 2, 2, false},
      {"overlapping windows", true, false, 3, 2, false},
  };
  for (const Case& c : cases) {
    Graph g;
    const std::int64_t hw = c.k == 3 ? 9 : 8;
    const int x = g.add_input("x", {2, 32, hw, hw + c.k});
    auto param = [&](const char* name, unsigned seed, float lo) {
      TensorData t = test::random_tensor({32}, seed);
      for (float& v : t.f) v = lo + std::fabs(v);
      return g.add_constant(name, t);
    };
    int act = g.add_node("BatchNormalization", {x, param("gamma", 41, 0.5f), param("beta", 42, -0.5f),
                                                param("mean", 43, -0.3f), param("var", 44, 0.2f)})[0];
    if (c.relu) act = g.add_node("Relu", {act})[0];
    int out = g.add_node("AveragePool", {act}, {{"kernel_shape", Ints{c.k, c.k}}, {"strides", Ints{c.stride, c.stride}}})[0];
    if (c.second_reader) out = g.add_node("Add", {out, g.add_node("MaxPool", {act}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}})[0]})[0];
    g.mark_output(out);
    double rel;
    const std::string impls = impls_with(g, nullptr, nullptr, rel);
    EXPECT_LT(rel, 1e-5) << c.what;
    EXPECT_EQ(impls.find("norm_pool") != std::string::npos, c.fused) << c.what << ": " << impls;
    EXPECT_EQ(impls.find("scale_shift") != std::string::npos, !c.fused) << c.what << ": " << impls;
  }
}

// Without a CUDA device (or without the backend compiled in), asking for it
// is one clear error, never a crash.
TEST(CudaBackend, ClearErrorWithoutADevice) {
  if (have_cuda_device()) GTEST_SKIP() << "a CUDA device is present";
  Graph g = conv_graph({1, 8, 6, 6}, 8, {3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, true, 3);
  EngineOptions opt;
  opt.backend = Backend::Cuda;
  try {
    Model::from_graph(g, "test", opt);
    ADD_FAILURE() << "compiled for CUDA without a device";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    const std::string what = e.what();
    EXPECT_TRUE(what.find("no CUDA device") != std::string::npos || what.find("no CUDA backend") != std::string::npos) << what;
  }
  bool listed = false;
  for (const BackendInfo& b : backends())
    if (b.name == "cuda") {
      listed = true;
      EXPECT_TRUE(b.devices.empty());
      EXPECT_FALSE(b.note.empty());
#ifdef VINFER_HAS_CUDA
      EXPECT_TRUE(b.compiled_in);
#else
      EXPECT_FALSE(b.compiled_in);
#endif
    }
  EXPECT_TRUE(listed);
}

#ifdef VINFER_HAS_CUDA
// cuBLAS is opened at run time, not linked (its static initializers made every
// process start 0.15 s slower and 210 MB bigger): loading it and finding the
// functions the backend calls must work without a GPU too.
TEST(CudaBackend, CublasLoadsOnUse) {
  const std::string v = cuda::cublas_version();
  EXPECT_GE(std::atoi(v.c_str()), 12) << v;  // major.minor.patch of the library found
}
#endif

// run_image: the preset's preprocessing then the network. On the CPU it is
// the Preprocessor then run(); on a CUDA device the fused preprocessing
// kernel must give the same logits (and report its own stage).
TEST(Engine, RunImageMatchesPreprocessThenRun) {
  const int S = 32;
  for (const std::string& name : preset_names()) {
    const Preset p = preset(name, S);
    const bool nhwc = p.layout == Layout::NHWC;
    const Graph g = conv_graph(nhwc ? Shape{1, S, S, 3} : Shape{1, 3, S, S}, 4, {3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, true, 5);
    Model cpu = Model::from_graph(g, "test", {});
    std::unique_ptr<Model> gpu;
    if (have_cuda_device()) {
      EngineOptions o;
      o.backend = Backend::Cuda;
      gpu = std::make_unique<Model>(Model::from_graph(g, "test", o));
    }
    for (auto [w, h] : {std::pair{50, 40}, std::pair{300, 200}, std::pair{S, S}, std::pair{40, 300}}) {
      SCOPED_TRACE(name + " " + std::to_string(w) + "x" + std::to_string(h));
      const ImageU8 img = test::random_image(w, h, 3, w * h);
      Preprocessor pre(p);
      std::vector<float> x(pre.tensor_size()), want(cpu.output_size()), got(cpu.output_size(), NAN);
      pre.run(img.view(), x.data());
      cpu.run(x.data(), want.data());
      cpu.run_image(img.view(), p, got.data());
      EXPECT_EQ(want, got);
      if (gpu) {
        std::vector<float> dev(gpu->output_size(), NAN);
        gpu->run_image(img.view(), p, dev.data());
        EXPECT_LT(rel_diff(want, dev), 1e-5);
        const auto stages = gpu->last_run_stages();
        EXPECT_TRUE(std::any_of(stages.begin(), stages.end(), [](const auto& s) { return s.first == "preprocess"; }));
      }
    }
    EXPECT_THROW(cpu.run_image(test::random_image(40, 40, 3, 1).view(), preset(name, 2 * S), nullptr), Error);
  }
}

// The network's input is read where the caller holds it (oneDNN's kernels
// read it, none writes it): each run follows the pointer it is given, at
// any alignment, and leaves the caller's floats as they were. Where a
// kernel of vinfer's own reads it (here the range op of record_ranges) it
// is copied into the arena instead, with the same results.
TEST(Engine, InputReadWhereTheCallerHoldsIt) {
  const Graph g = conv_graph({2, 8, 12, 12}, 16, {3, 3}, {{"pads", Ints{1, 1, 1, 1}}}, true, 31);
  EngineOptions ref_opt;
  ref_opt.backend = Backend::Reference;
  Model ref = Model::from_graph(g, "test", ref_opt);
  EngineOptions opt;
  opt.threads = 2;
  Model direct = Model::from_graph(g, "test", opt);
  opt.record_ranges = true;
  Model copied = Model::from_graph(g, "test", opt);
  auto says = [](const Model& m, const std::string& line) {
    const auto& p = m.info().passes;
    return std::find(p.begin(), p.end(), line) != p.end();
  };
  EXPECT_TRUE(says(direct, "input: read where the caller holds it (1 kernel argument(s))"));
  EXPECT_TRUE(says(copied, "input: copied into the arena each run"));
  const TensorData x1 = test::random_tensor(ref.input_shape(), 32), x2 = test::random_tensor(ref.input_shape(), 33);
  std::vector<float> want1(ref.output_size()), want2(ref.output_size());
  ref.run(x1.f.data(), want1.data());
  ref.run(x2.f.data(), want2.data());
  // x1 again, one float off the vector's alignment
  std::vector<float> shifted(x1.f.size() + 1);
  std::copy(x1.f.begin(), x1.f.end(), shifted.begin() + 1);
  for (Model* m : {&direct, &copied}) {
    std::vector<float> y(m->output_size(), NAN);
    m->run(x1.f.data(), y.data());
    EXPECT_LT(rel_diff(want1, y), 1e-5);
    m->run(x2.f.data(), y.data());
    EXPECT_LT(rel_diff(want2, y), 1e-5) << "the second input, at another address";
    m->run(shifted.data() + 1, y.data());
    EXPECT_LT(rel_diff(want1, y), 1e-5) << "the first input, unaligned";
  }
  EXPECT_TRUE(std::equal(x1.f.begin(), x1.f.end(), shifted.begin() + 1));
  EXPECT_EQ(x2.f, test::random_tensor(ref.input_shape(), 33).f);
}

TEST(EngineOps, Pools) {
  struct Case {
    const char* op;
    std::map<std::string, AttrValue> attrs;
  };
  const std::vector<Case> cases = {
      {"MaxPool", {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", std::int64_t{1}}}},  // SqueezeNet
      {"MaxPool", {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}},     // ResNet
      {"MaxPool", {{"kernel_shape", Ints{2, 2}}, {"dilations", Ints{2, 2}}}},
      {"AveragePool", {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}},  // DenseNet transition
      {"AveragePool", {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}, {"count_include_pad", std::int64_t{1}}}},
      {"AveragePool", {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}}},
      {"AveragePool", {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", std::int64_t{1}}}},
      {"GlobalAveragePool", {}},
      {"ReduceMean", {{"axes", Ints{2, 3}}, {"keepdims", std::int64_t{1}}}},
      {"ReduceMean", {{"axes", Ints{-1, -2}}, {"keepdims", std::int64_t{0}}}},
  };
  for (const Case& c : cases) {
    Graph g;
    const int x = g.add_input("x", {1, 16, 14, 13});
    g.mark_output(g.add_node(c.op, {x}, c.attrs)[0]);
    EXPECT_LT(cpu_vs_reference(g), 1e-6) << c.op;
  }
}

TEST(EngineOps, ElementwiseAndBroadcast) {
  for (const char* op : {"Add", "Mul", "Sub", "Div"}) {
    Graph g;
    const int x = g.add_input("x", {1, 16, 5, 6});
    const int s = g.add_constant("s", test::random_tensor({1, 16, 1, 1}, 3, 0.5f, 2.f));
    const int r = g.add_node("Relu", {x})[0];
    const int y = g.add_node(op, {r, s})[0];
    g.mark_output(g.add_node("Sigmoid", {y})[0]);
    EXPECT_LT(cpu_vs_reference(g), 1e-6) << op;
  }
  // Both operands runtime values, one broadcast (EfficientNet's squeeze-excitation).
  Graph g;
  const int x = g.add_input("x", {1, 24, 6, 6});
  const int p = g.add_node("GlobalAveragePool", {x})[0];
  const int s = g.add_node("Sigmoid", {p})[0];
  g.mark_output(g.add_node("Mul", {x, s})[0]);
  EXPECT_LT(cpu_vs_reference(g), 1e-6);
}

TEST(EngineOps, GemmMatMulSoftmax) {
  // transB with alpha 1 reads the constant in place; the others copy it.
  for (int tb = 0; tb < 2; ++tb)
    for (float alpha : {0.5f, 1.f}) {
      Graph g;
      const int x = g.add_input("x", {1, 40});
      const int w = g.add_constant("w", test::random_tensor(tb ? Shape{30, 40} : Shape{40, 30}, 5));
      const int b = g.add_constant("b", test::random_tensor({30}, 6));
      const int y = g.add_node("Gemm", {x, w, b}, {{"transB", std::int64_t{tb}}, {"alpha", alpha}, {"beta", 2.f}})[0];
      const int r = g.add_node("Relu", {y})[0];
      g.mark_output(g.add_node("Softmax", {r}, {{"axis", std::int64_t{1}}})[0]);
      EXPECT_LT(cpu_vs_reference(g), 1e-6) << "transB " << tb << " alpha " << alpha;
    }
  Graph g;
  const int x = g.add_input("x", {1, 8, 2, 2});
  const int f = g.add_node("Flatten", {x})[0];
  const int w = g.add_constant("w", test::random_tensor({32, 10}, 7));
  g.mark_output(g.add_node("MatMul", {f, w})[0]);
  EXPECT_LT(cpu_vs_reference(g), 1e-6);
  // Opset < 13 Softmax normalizes over everything from `axis` on.
  Graph s;
  const int sx = s.add_input("x", {1, 3, 4});
  s.mark_output(s.add_node("Softmax", {sx}, {{"axis", std::int64_t{1}}, {"vinfer.opset", std::int64_t{11}}})[0]);
  EXPECT_LT(cpu_vs_reference(s), 1e-6);
  // From opset 13 over the one axis, with dimensions after it.
  Graph m;
  const int mx = m.add_input("x", {2, 5, 3});
  m.mark_output(m.add_node("Softmax", {mx}, {{"axis", std::int64_t{1}}})[0]);
  EXPECT_LT(cpu_vs_reference(m), 1e-6);
  // YOLO's box distribution: 16 bins along axis 1, 4 x 300 positions after
  // it (more than one run of the strided kernel, and a partial one), on
  // vinfer's kernel rather than oneDNN's reference.
  Graph d;
  const int dx = d.add_input("x", {2, 16, 4, 300});
  d.mark_output(d.add_node("Softmax", {d.add_node("Mul", {dx, d.add_constant("k", TensorData::f32({}, {9.f}))})[0]},
                           {{"axis", std::int64_t{1}}})[0]);
  ModelInfo info;
  EXPECT_LT(cpu_vs_reference(d, &info), 1e-6);
  EXPECT_TRUE(std::any_of(info.kernels.begin(), info.kernels.end(), [](const auto& k) { return k.second == "vinfer:softmax_strided"; }));
}

// The batch-1 fully connected kernel (gemv.hpp): each ISA's against the plain
// loops, adding onto what the sums hold, with row counts that leave 0-3 rows
// after the groups of four, and columns past n left alone.
TEST(Gemv, SimdRowsMatchPlain) {
  const std::int64_t K = 40, ld = 48;
  const TensorData w = test::random_tensor({K * ld}, 61), x = test::random_tensor({K}, 62);
  std::vector<std::int32_t> ks;
  std::vector<float> xs;
  for (std::int32_t k = K - 1; k >= 0; k -= 3) ks.push_back(k), xs.push_back(x.f[static_cast<std::size_t>(k)]);
  IsaCoverage coverage;
  for (const int isa : {8, 16}) {
    if (!coverage.runs(isa)) continue;
    for (const std::int64_t count : {0, 1, 4, 7, 14})
      for (const std::int64_t n : {ld, std::int64_t{32}}) {
        std::vector<float> want(static_cast<std::size_t>(ld), 0.5f), got(want);
        cpu::GemvRows r{w.f.data(), ld, n, ks.data(), xs.data(), count, want.data()};
        cpu::gemv_rows_plain(r);
        r.acc = got.data();
        if (isa == 8) cpu::gemv_rows_avx2(r);
        else cpu::gemv_rows_avx512(r);
        for (std::size_t c = 0; c < want.size(); ++c)
          EXPECT_NEAR(got[c], want[c], 1e-5f * (1.f + std::fabs(want[c]))) << "isa " << isa << " count " << count << " n " << n << " at " << c;
        EXPECT_EQ(got[static_cast<std::size_t>(ld - 1)], n == ld && count > 0 ? want[static_cast<std::size_t>(ld - 1)] : 0.5f);
      }
  }
  coverage.report();
}

// The same kernels on bfloat16 weights: the plain one equal to the float32
// kernel on the weights widened (exactly), each ISA's equal to the plain.
struct Bf16Rows {
  static constexpr std::int64_t K = 40, ld = 48;
  std::vector<std::uint16_t> w16;
  std::vector<float> widened;
  std::vector<std::int32_t> ks;
  std::vector<float> xs;
  Bf16Rows() {
    const TensorData w = test::random_tensor({K * ld}, 66), x = test::random_tensor({K}, 67);
    for (const float v : w.f) {
      w16.push_back(cpu::to_bf16(v));
      const std::uint32_t u = static_cast<std::uint32_t>(w16.back()) << 16;
      float f;
      std::memcpy(&f, &u, sizeof u);
      widened.push_back(f);
    }
    EXPECT_NE(widened, w.f) << "rounding to bfloat16 changed nothing: float32 weights would pass";
    for (std::int32_t k = K - 1; k >= 0; k -= 3) ks.push_back(k), xs.push_back(x.f[static_cast<std::size_t>(k)]);
  }
  // acc (ld values of 0.5) after the bf16 kernel `rows` on `count` rows, n columns.
  std::vector<float> run(void (*rows)(const cpu::GemvRows&), std::int64_t count, std::int64_t n) const {
    std::vector<float> acc(static_cast<std::size_t>(ld), 0.5f);
    cpu::GemvRows r{nullptr, ld, n, ks.data(), xs.data(), count, acc.data(), w16.data()};
    rows(r);
    return acc;
  }
};

TEST(Gemv, Bf16WeightRowsAreTheWidenedWeightsRows) {
  const Bf16Rows t;
  for (const std::int64_t count : {0, 1, 4, 7, 14})
    for (const std::int64_t n : {Bf16Rows::ld, std::int64_t{32}}) {
      std::vector<float> want(static_cast<std::size_t>(Bf16Rows::ld), 0.5f);
      cpu::gemv_rows_plain({t.widened.data(), Bf16Rows::ld, n, t.ks.data(), t.xs.data(), count, want.data()});
      EXPECT_EQ(t.run(cpu::gemv_rows_bf16_plain, count, n), want) << "count " << count << " n " << n;
    }
}

TEST(Gemv, SimdBf16WeightRowsMatchPlain) {
  const Bf16Rows t;
  IsaCoverage coverage;
  for (const int isa : {8, 16}) {
    if (!coverage.runs(isa)) continue;
    for (const std::int64_t count : {0, 1, 4, 7, 14})
      for (const std::int64_t n : {Bf16Rows::ld, std::int64_t{32}}) {
        const std::vector<float> want = t.run(cpu::gemv_rows_bf16_plain, count, n),
                                 got = t.run(isa == 8 ? cpu::gemv_rows_bf16_avx2 : cpu::gemv_rows_bf16_avx512, count, n);
        for (std::size_t c = 0; c < want.size(); ++c)
          EXPECT_NEAR(got[c], want[c], 1e-5f * (1.f + std::fabs(want[c]))) << "isa " << isa << " count " << count << " at " << c;
        EXPECT_EQ(got.back(), n == Bf16Rows::ld && count > 0 ? want.back() : 0.5f);
      }
  }
  coverage.report();
}

// A batch-1 Gemm after a ReLU runs the zero-skipping kernel with the
// reference's results (37 outputs: not a whole vector; an input of zeros
// gives the bias). A weight that is not finite (0 * inf is NaN, which
// skipping would lose), a batch of two or VINFER_FC=onednn send it to
// oneDNN's inner product.
TEST(Gemv, EngineSkipsZerosWithTheReferencesResults) {
  struct Case {
    const char* what;
    std::int64_t batch;
    bool inf_weight, zero_input;
    const char* fc_env;
    bool gemv;
  };
  const std::vector<Case> cases = {
      {"batch 1", 1, false, false, nullptr, true},
      {"an input of zeros", 1, false, true, nullptr, true},
      {"batch 2", 2, false, false, nullptr, false},
      {"an infinite weight", 1, true, false, nullptr, false},
      {"VINFER_FC=onednn", 1, false, false, "onednn", false},
  };
  const std::int64_t K = 70, N = 37;
  for (const Case& c : cases) {
    Graph g;
    const int x = g.add_input("x", {c.batch, K});
    TensorData w = test::random_tensor({N, K}, 63);
    if (c.inf_weight) w.f[5] = std::numeric_limits<float>::infinity();  // output 0, input 5
    const int r = g.add_node("Relu", {x})[0];
    const int y = g.add_node("Gemm", {r, g.add_constant("w", w), g.add_constant("b", test::random_tensor({N}, 64))},
                             {{"transB", std::int64_t{1}}})[0];
    // (oneDNN's fused ReLU turns a NaN into 0; the reference keeps it.)
    g.mark_output(c.inf_weight ? y : g.add_node("Relu", {y})[0]);
    if (c.fc_env) ::setenv("VINFER_FC", c.fc_env, 1);
    EngineOptions ref_opt, cpu_opt;
    ref_opt.backend = Backend::Reference;
    ref_opt.optimize = false;
    cpu_opt.threads = 2;
    Model ref = Model::from_graph(g, "test", ref_opt), cpu = Model::from_graph(g, "test", cpu_opt);
    if (c.fc_env) ::unsetenv("VINFER_FC");
    TensorData in = test::random_tensor(ref.input_shape(), 65);
    in.f[5] = -1.f;  // a zero after the ReLU where the infinite weight is
    if (c.zero_input) std::fill(in.f.begin(), in.f.end(), -1.f);
    std::vector<float> want(ref.output_size()), got(cpu.output_size(), 7.f);
    ref.run(in.f.data(), want.data());
    std::string impls;
    for (const LayerProfile& l : cpu.profile(in.f.data(), got.data())) {
      impls += l.impl + " ";
      // The profile counts the rows read (48 floats each: 37 padded) and the bias.
      const auto nonzero = static_cast<double>(std::count_if(in.f.begin(), in.f.end(), [](float v) { return v > 0; }));
      if (l.impl.find("gemv_skip0") != std::string::npos) EXPECT_EQ(l.weight_bytes, (nonzero + 1) * 48 * 4) << c.what;
    }
    EXPECT_EQ(impls.find("gemv_skip0") != std::string::npos, c.gemv) << c.what << ": " << impls;
    ASSERT_EQ(got.size(), want.size());
    double scale = 1e-30;
    for (const float v : want) scale = std::max(scale, std::isfinite(v) ? static_cast<double>(std::fabs(v)) : 0.0);
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (std::isnan(want[i])) EXPECT_TRUE(std::isnan(got[i])) << c.what << " at " << i;
      else EXPECT_NEAR(got[i], want[i], 1e-5 * scale) << c.what << " at " << i;
    }
    if (c.inf_weight) EXPECT_TRUE(std::isnan(want[0])) << "the reference's 0 * inf";
  }
}

TEST(EngineOps, ConcatCopiesWhenChannelsAreNotBlockAligned) {
  Graph g;
  const int x = g.add_input("x", {1, 8, 6, 6});
  const int a = g.add_node("Conv", {x, g.add_constant("wa", test::random_tensor({5, 8, 1, 1}, 1))})[0];
  const int b = g.add_node("Conv", {x, g.add_constant("wb", test::random_tensor({7, 8, 3, 3}, 2))}, {{"pads", Ints{1, 1, 1, 1}}})[0];
  g.mark_output(g.add_node("Concat", {a, b}, {{"axis", std::int64_t{1}}})[0]);
  ModelInfo info;
  EXPECT_LT(cpu_vs_reference(g, &info), 1e-5);
  EXPECT_EQ(info.concats_in_place, 0);
}

// cat(x0), cat(x0, f1), cat(x0, f1, f2) as torchvision's DenseNet builds them,
// growth 16: whole channel blocks for both 8- and 16-channel blocking. At
// batch > 1 each image's channels are a slice of that image: vinfer's
// kernels write and read them there (28x28: Winograd), others through a
// packed copy (8x8: oneDNN's convolutions, the Relu).
TEST(EngineOps, DenseBlockConcatenationsAreFree) {
  for (const std::int64_t batch : {1, 3})
    for (const std::int64_t side : {8, 28}) {
      Graph g;
      const int x = g.add_input("x", {batch, 16, side, side});
      const int x0 = g.add_node("Relu", {x})[0];
      std::vector<int> feats{x0};
      for (int layer = 0; layer < 3; ++layer) {
        const int cat = g.add_node("Concat", feats, {{"axis", std::int64_t{1}}})[0];
        const std::int64_t c = 16 + 16 * layer;
        const std::string l = std::to_string(layer);
        const int bn = g.add_node("BatchNormalization",
                                  {cat, g.add_constant("g" + l, test::random_tensor({c}, 10 + layer, 0.5f, 1.5f)),
                                   g.add_constant("b" + l, test::random_tensor({c}, 20 + layer)),
                                   g.add_constant("m" + l, test::random_tensor({c}, 30 + layer)),
                                   g.add_constant("v" + l, test::random_tensor({c}, 40 + layer, 0.5f, 1.5f))})[0];
        const int r = g.add_node("Relu", {bn})[0];
        // DenseNet's bottleneck: a 1x1 (vinfer's, with the normalization) then the 3x3.
        const int b1 = g.add_node("Conv", {r, g.add_constant("u" + l, test::random_tensor({32, c, 1, 1}, 60 + layer))})[0];
        const int f = g.add_node("Conv", {g.add_node("Relu", {b1})[0],
                                          g.add_constant("w" + l, test::random_tensor({16, 32, 3, 3}, 50 + layer))},
                                 {{"pads", Ints{1, 1, 1, 1}}})[0];
        feats.push_back(f);
      }
      const int out = g.add_node("Concat", feats, {{"axis", std::int64_t{1}}})[0];
      g.mark_output(g.add_node("GlobalAveragePool", {out})[0]);
      ModelInfo info;
      EXPECT_LT(cpu_vs_reference(g, &info), 1e-5) << "batch " << batch << ", " << side << "x" << side;
      EXPECT_EQ(info.concats_in_place, 4) << "batch " << batch;  // every Concat, including the block's output
    }
}

// Inception's branches (a 1x1, a 3x3, a max pool) written side by side into
// their concatenation, read by the next layer, at batch 1 and 3.
TEST(EngineOps, BranchConcatenationsAreFreeAtAnyBatch) {
  for (const std::int64_t batch : {1, 3}) {
    Graph g;
    const int x = g.add_input("x", {batch, 16, 12, 12});
    const int a = g.add_node("Conv", {x, g.add_constant("wa", test::random_tensor({16, 16, 1, 1}, 1))})[0];
    const int b = g.add_node("Conv", {x, g.add_constant("wb", test::random_tensor({32, 16, 3, 3}, 2))},
                             {{"pads", Ints{1, 1, 1, 1}}})[0];
    const int c = g.add_node("MaxPool", {x}, {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}})[0];
    const int cat = g.add_node("Concat", {g.add_node("Relu", {a})[0], g.add_node("Relu", {b})[0], c},
                               {{"axis", std::int64_t{1}}})[0];
    g.mark_output(g.add_node("Conv", {cat, g.add_constant("wc", test::random_tensor({8, 64, 1, 1}, 3))})[0]);
    ModelInfo info;
    EXPECT_LT(cpu_vs_reference(g, &info), 1e-5) << "batch " << batch;
    EXPECT_EQ(info.concats_in_place, 1) << "batch " << batch;
  }
}

TEST(EngineOps, ResidualAndActivationFusion) {
  // ResNet's basic block and MobileNet's Clip(0, 6) and EfficientNet's x * sigmoid(x).
  Graph g;
  const int x = g.add_input("x", {1, 16, 9, 9});
  const int c1 = g.add_node("Conv", {x, g.add_constant("w1", test::random_tensor({16, 16, 3, 3}, 1))}, {{"pads", Ints{1, 1, 1, 1}}})[0];
  const int r1 = g.add_node("Clip", {c1, g.add_constant("lo", TensorData::f32({}, {0.f})), g.add_constant("hi", TensorData::f32({}, {0.6f}))})[0];
  const int c2 = g.add_node("Conv", {r1, g.add_constant("w2", test::random_tensor({16, 16, 3, 3}, 2))}, {{"pads", Ints{1, 1, 1, 1}}})[0];
  const int add = g.add_node("Add", {c2, x})[0];
  const int r2 = g.add_node("Relu", {add})[0];
  const int c3 = g.add_node("Conv", {r2, g.add_constant("w3", test::random_tensor({8, 16, 1, 1}, 3))})[0];
  const int s = g.add_node("Sigmoid", {c3})[0];
  g.mark_output(g.add_node("Mul", {c3, s})[0]);
  std::size_t nodes = 0;
  EXPECT_LT(cpu_vs_reference(g, nullptr, &nodes), 1e-5);
  EXPECT_EQ(nodes, 3u);  // three convolutions, everything else fused into them
}

TEST(EngineOps, TransposeInAndOut) {
  // Keras: an NHWC input made NCHW for the convolutions, and back to NHWC before Flatten.
  Graph g;
  const int x = g.add_input("x", {1, 5, 6, 3});
  const int t = g.add_node("Transpose", {x}, {{"perm", Ints{0, 3, 1, 2}}})[0];
  const int r = g.add_node("Relu", {t})[0];
  // Keras's ZeroPadding2D then MaxPooling2D on a Relu's output: folded into the pool.
  const int pd = g.add_node("Pad", {r, g.add_constant("p", TensorData::i64({8}, {0, 0, 1, 1, 0, 0, 1, 1}))})[0];
  const int mp = g.add_node("MaxPool", {pd}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}})[0];
  const int c = g.add_node("Conv", {mp, g.add_constant("w", test::random_tensor({8, 3, 1, 1}, 4))})[0];
  const int back = g.add_node("Transpose", {c}, {{"perm", Ints{0, 2, 3, 1}}})[0];
  const int f = g.add_node("Flatten", {back})[0];
  g.mark_output(g.add_node("MatMul", {f, g.add_constant("m", test::random_tensor({3 * 3 * 8, 4}, 5))})[0]);
  std::size_t nodes = 0;
  EXPECT_LT(cpu_vs_reference(g, nullptr, &nodes), 1e-5);
  EXPECT_EQ(nodes, 7u);  // eight nodes less the Pad, folded into the MaxPool
}

TEST(EngineOps, UnsupportedOperatorNamesTheNode) {
  Graph g;
  const int x = g.add_input("x", {1, 4});
  g.mark_output(g.add_node("Det", {x}, {}, 1, "my_det")[0]);
  try {
    Model::from_graph(g, "test");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("Det 'my_det'"), std::string::npos) << e.what();
  }
}

TEST(EngineOps, WrongShapesAreBadInput) {
  Graph g;
  const int x = g.add_input("x", {1, 4, 5, 5});
  g.mark_output(g.add_node("Conv", {x, g.add_constant("w", test::random_tensor({8, 3, 3, 3}, 1))})[0]);
  try {
    Model::from_graph(g, "test");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("input channels"), std::string::npos) << e.what();
  }
}

// A Gemm with an empty side (K or N of 0) runs (on the reference: oneDNN
// takes no empty operand), not a division by zero (it was: SIGFPE while building).
TEST(EngineOps, EmptyGemmRuns) {
  for (const Shape& w : {Shape{3, 0}, Shape{0, 4}}) {
    Graph g;
    const int x = g.add_input("x", {1, w[1]});
    g.mark_output(g.add_node("Gemm", {x, g.add_constant("w", TensorData::f32(w, {}))}, {{"transB", std::int64_t{1}}})[0]);
    Model m = Model::from_graph(g, "test");
    std::vector<float> in(m.input_size(), 1.f), y(m.output_size(), NAN);
    m.run(in.data(), y.data());
    EXPECT_EQ(y, std::vector<float>(static_cast<std::size_t>(w[0]), 0.f)) << "weights " << w[0] << "x" << w[1];
  }
}

// Integer weights, bias or a Gemm operand are refused by name while the
// graph is checked (an int32 Conv weight reached the kernels as no floats at
// all and crashed; a fuzzer finding).
TEST(EngineOps, IntegerWeightsAreBadInput) {
  for (int which = 0; which < 3; ++which) {
    Graph g;
    const int x = g.add_input("x", {1, 2, 4, 4});
    const TensorData wf = test::random_tensor({3, 2, 1, 1}, 5), bf = test::random_tensor({3}, 6);
    const int w = g.add_constant("w", which == 0 ? TensorData::i64({3, 2, 1, 1}, std::vector<std::int64_t>(6, 1)) : wf);
    const int b = g.add_constant("b", which == 1 ? TensorData::i64({3}, {1, 2, 3}) : bf);
    int y = g.add_node("Conv", {x, w, b})[0];
    if (which == 2) {
      const int f = g.add_node("Flatten", {y})[0];
      y = g.add_node("Gemm", {f, g.add_constant("m", TensorData::i64({48, 2}, std::vector<std::int64_t>(96, 1)))})[0];
    }
    g.mark_output(y);
    try {
      Model::from_graph(g, "test");
      FAIL() << "expected an error, case " << which;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
      EXPECT_NE(std::string(e.what()).find(which == 1 ? "input 2 must be float32" : "input 1 must be float32"), std::string::npos) << e.what();
    }
  }
}

// A network whose input and output have no elements runs on every backend
// with null pointers (an empty vector's data()): no memcpy gets them (UBSan,
// which the sanitizer build of the suite runs under, flagged it; a fuzzer
// finding).
TEST(EngineOps, EmptyTensorsRunWithNullPointers) {
  Graph g;
  const int x = g.add_input("x", {1, 0});
  g.mark_output(g.add_node("Relu", {x})[0]);
  for (const Backend b : {Backend::Cpu, Backend::Reference}) {
    EngineOptions opt;
    opt.backend = b;
    Model m = Model::from_graph(g, "test", opt);
    EXPECT_EQ(m.input_size(), 0u);
    EXPECT_EQ(m.output_size(), 0u);
    std::vector<float> in, out;
    m.run(in.data(), out.data());
    m.profile(in.data(), out.data());
  }
}

}  // namespace
}  // namespace vinfer
