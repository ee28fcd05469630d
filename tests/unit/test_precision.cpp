// Reduced precision: bfloat16 and int8 against float32 on the built-in
// networks, the refusal on CPUs without their dot products, calibration
// files, the conversion kernels, and the logit comparison behind `vinfer check`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cpu/cpu_op.hpp"
#include "cpu/kernels.hpp"
#include "test_support.hpp"
#include "util/cpu_features.hpp"
#include "vinfer/calibration.hpp"
#include "vinfer/engine.hpp"
#include "vinfer/error.hpp"
#include "vinfer/postprocess.hpp"
#include "vinfer/preprocess.hpp"
#include "vinfer/zoo.hpp"

namespace vinfer {
namespace {

TEST(Precision, Names) {
  EXPECT_EQ(parse_precision("f32"), Precision::F32);
  EXPECT_EQ(parse_precision("float32"), Precision::F32);
  EXPECT_EQ(parse_precision("bf16"), Precision::BF16);
  EXPECT_STREQ(to_string(Precision::BF16), "bf16");
  EXPECT_EQ(parse_precision("int8"), Precision::INT8);
  EXPECT_STREQ(to_string(Precision::INT8), "int8");
  EXPECT_THROW(parse_precision("int4"), Error);
}

float from_bf16(std::uint16_t h) {
  const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

TEST(Precision, Bf16RoundsToNearestEven) {
  EXPECT_EQ(cpu::to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(cpu::to_bf16(from_bits(0x3f808000)), 0x3f80);  // a tie, to the even one below
  EXPECT_EQ(cpu::to_bf16(from_bits(0x3f818000)), 0x3f82);  // a tie, to the even one above
  EXPECT_EQ(cpu::to_bf16(from_bits(0x3f808001)), 0x3f81);  // past the tie
  EXPECT_EQ(cpu::to_bf16(-0.0f), 0x8000);
  EXPECT_EQ(cpu::to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(cpu::to_bf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds up to infinity
  EXPECT_TRUE(std::isnan(from_bf16(cpu::to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(from_bf16(cpu::to_bf16(from_bits(0x7f800001)))));  // a NaN that would round to infinity
}

// The AVX512_BF16 kernel gives the reference's bits, ReLU or not.
TEST(Precision, Bf16ScaleShiftKernelMatchesReference) {
  if (!detail::cpu_features().avx512_bf16) {
    // Nothing runs it here: Model refuses bf16 (Bf16OnEveryBuiltInNetwork).
    EXPECT_FALSE(cpu_has_bf16());
    return;
  }
  const std::int64_t n = 37;
  const TensorData x = test::random_tensor({n * 16}, 3, -4.f, 4.f), s = test::random_tensor({16}, 4), b = test::random_tensor({16}, 5);
  std::vector<float> xs = x.f;
  xs[5] = std::numeric_limits<float>::quiet_NaN(), xs[6] = -std::numeric_limits<float>::infinity(), xs[7] = 1e30f;
  // In blocks (stride 16), and channels-last in a row of 40 channels, a
  // whole block and the last 8 (the rest of the row untouched).
  for (const auto& [stride, count] : {std::pair{16, 16}, std::pair{40, 16}, std::pair{40, 8}})
    for (bool relu : {false, true}) {
      std::vector<std::uint16_t> want(static_cast<std::size_t>(n * stride), 0xdead), got(want.size(), 0xdead);
      cpu::scale_shift_blocked16_bf16(xs.data(), want.data(), n, stride, count, s.f.data(), b.f.data(), relu);
      cpu::scale_shift_blocked16_bf16_avx512(xs.data(), got.data(), n, stride, count, s.f.data(), b.f.data(), relu);
      if (count < stride) EXPECT_EQ(want[static_cast<std::size_t>(count)], 0xdead);
      for (std::size_t i = 0; i < want.size(); ++i) {
        if (std::isnan(from_bf16(want[i]))) EXPECT_TRUE(std::isnan(from_bf16(got[i]))) << i;
        else EXPECT_EQ(got[i], want[i]) << "element " << i << ", stride " << stride << ", count " << count << (relu ? " (relu)" : "");
      }
    }
}

TEST(Precision, Bf16ConversionKernelMatchesReference) {
  if (!detail::cpu_features().avx512_bf16) {
    EXPECT_FALSE(cpu_has_bf16());
    return;
  }
  std::vector<float> x = test::random_tensor({16 * 21 + 5}, 9, -1e3f, 1e3f).f;  // (a tail after whole vectors)
  x[1] = std::numeric_limits<float>::quiet_NaN(), x[2] = std::numeric_limits<float>::max(), x[3] = from_bits(0x3f808000);
  std::vector<std::uint16_t> got(x.size(), 0xdead);
  cpu::to_bf16_avx512(x.data(), got.data(), static_cast<std::int64_t>(x.size()));
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) EXPECT_TRUE(std::isnan(from_bf16(got[i])));
    else EXPECT_EQ(got[i], cpu::to_bf16(x[i])) << "element " << i;
  }
}

// Quantizing: the reference rounds ties to even and saturates (NaN to the
// lower bound); the AVX-512 kernel gives its bytes, tail included.
TEST(Precision, QuantizeKernelMatchesReference) {
  const float x[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 254.5f, 255.5f, 1e9f, -1e9f, -128.5f, 127.5f,
                     std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 3.49f, -3.51f, 0.f};
  std::uint8_t u[16];
  std::int8_t s[16];
  cpu::quantize(x, u, 16, 1.f, true);
  cpu::quantize(x, s, 16, 1.f, false);
  const std::uint8_t want_u[] = {0, 2, 2, 0, 0, 254, 255, 255, 0, 0, 128, 0, 255, 3, 0, 0};
  const std::int8_t want_s[] = {0, 2, 2, 0, -2, 127, 127, 127, -128, -128, 127, -128, 127, 3, -4, 0};
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(u[i], want_u[i]) << "u8 element " << i;
    EXPECT_EQ(s[i], want_s[i]) << "s8 element " << i;
  }
  if (!detail::cpu_features().avx512) return;  // (int8 is refused there: Int8OnEveryBuiltInNetwork)
  std::vector<float> r = test::random_tensor({16 * 13 + 7}, 21, -300.f, 300.f).f;
  r[3] = std::numeric_limits<float>::quiet_NaN(), r[4] = 2.5f, r[r.size() - 1] = -0.5f;
  for (bool is_unsigned : {true, false}) {
    std::vector<std::int8_t> want(r.size()), got(r.size(), 99);
    cpu::quantize(r.data(), want.data(), static_cast<std::int64_t>(r.size()), 0.7f, is_unsigned);
    cpu::quantize_avx512(r.data(), got.data(), static_cast<std::int64_t>(r.size()), 0.7f, is_unsigned);
    EXPECT_EQ(got, want) << (is_unsigned ? "u8" : "s8");
  }
  // From bfloat16 (a residual stream): the float32 rule on each
  // value's float32 equal, in the reference and the AVX-512 kernel.
  std::vector<std::uint16_t> h(r.size());
  std::vector<float> widened(r.size());
  for (std::size_t i = 0; i < r.size(); ++i) h[i] = cpu::to_bf16(r[i]), widened[i] = from_bf16(h[i]);
  for (bool is_unsigned : {true, false}) {
    std::vector<std::int8_t> want(r.size()), ref(r.size(), 99), got(r.size(), 99);
    cpu::quantize(widened.data(), want.data(), static_cast<std::int64_t>(r.size()), 0.7f, is_unsigned);
    cpu::quantize_bf16(h.data(), ref.data(), static_cast<std::int64_t>(r.size()), 0.7f, is_unsigned);
    cpu::quantize_bf16_avx512(h.data(), got.data(), static_cast<std::int64_t>(r.size()), 0.7f, is_unsigned);
    EXPECT_EQ(ref, want) << (is_unsigned ? "u8" : "s8");
    EXPECT_EQ(got, want) << (is_unsigned ? "u8" : "s8");
  }
}

// DenseNet's pre-activation written as the next convolution's int8 input:
// the AVX-512 kernel gives the reference's bytes, whole block or not.
TEST(Precision, ScaleShiftQuantizeKernelMatchesReference) {
  if (!detail::cpu_features().avx512) return;  // (int8 is refused there)
  const std::int64_t n = 29, stride = 40;
  std::vector<float> x = test::random_tensor({n * 16}, 31, -6.f, 6.f).f;
  const TensorData s = test::random_tensor({16}, 32), b = test::random_tensor({16}, 33);
  x[9] = std::numeric_limits<float>::quiet_NaN(), x[10] = 1e30f;
  for (int count : {16, 5})
    for (bool relu : {false, true})
      for (bool is_unsigned : {true, false}) {
        std::vector<std::int8_t> want(static_cast<std::size_t>(n * stride), 7), got(want.size(), 7);
        cpu::scale_shift_blocked16_quantize(x.data(), want.data(), n, stride, count, s.f.data(), b.f.data(), relu, 9.f, is_unsigned);
        cpu::scale_shift_blocked16_quantize_avx512(x.data(), got.data(), n, stride, count, s.f.data(), b.f.data(), relu, 9.f,
                                                   is_unsigned);
        EXPECT_EQ(got, want) << "count " << count << (relu ? " relu" : "") << (is_unsigned ? " u8" : " s8");
        EXPECT_EQ(got[static_cast<std::size_t>(count)], 7) << "wrote past its channels";
      }
}

TEST(Precision, CompareLogits) {
  const float ref[] = {1.f, 4.f, -2.f, 3.f, 0.5f, 2.f, -8.f};
  LogitAgreement a = compare_logits(ref, ref, 7);
  EXPECT_TRUE(a.top1 && a.top5);
  EXPECT_EQ(a.max_rel, 0.0);
  EXPECT_NEAR(a.cosine, 1.0, 1e-12);
  // The largest |logit| is 8: a change of 0.8 is 0.1 of it.
  float moved[] = {1.f, 4.f, -2.f, 3.f, 0.5f, 2.8f, -8.f};
  a = compare_logits(ref, moved, 7);
  EXPECT_TRUE(a.top1 && a.top5);
  EXPECT_NEAR(a.max_rel, 0.1, 1e-6);
  EXPECT_NEAR(a.mean_rel, 0.1 / 7, 1e-6);
  // The first two swap: top-1 differs, the five are the same.
  float swapped[] = {1.f, 3.f, -2.f, 4.f, 0.5f, 2.f, -8.f};
  a = compare_logits(ref, swapped, 7);
  EXPECT_FALSE(a.top1);
  EXPECT_TRUE(a.top5);
  // The fifth leaves the five.
  float out[] = {1.f, 4.f, -2.f, 3.f, -5.f, 2.f, -8.f};
  a = compare_logits(ref, out, 7);
  EXPECT_TRUE(a.top1);
  EXPECT_FALSE(a.top5);
  // A NaN agrees with nothing.
  float nan[] = {1.f, 4.f, -2.f, 3.f, 0.5f, NAN, -8.f};
  EXPECT_TRUE(std::isinf(compare_logits(ref, nan, 7).max_rel));
}

// Matrix products of many rows (a transformer's) run in bfloat16 too.
TEST(Precision, Bf16MatMulNearF32) {
  Graph g;
  const int x = g.add_input("x", {1, 50, 64});
  const int w = g.add_constant("w", test::random_tensor({64, 32}, 11));
  g.mark_output(g.add_node("MatMul", {x, w})[0]);
  EngineOptions opt;
  opt.threads = 2;
  opt.precision = Precision::BF16;
  if (!cpu_has_bf16()) {
    EXPECT_THROW(Model::from_graph(g, "matmul", opt), Error);
    return;
  }
  Model low = Model::from_graph(g, "matmul", opt);
  opt.precision = Precision::F32;
  Model f32 = Model::from_graph(g, "matmul", opt);
  const TensorData in = test::random_tensor({1, 50, 64}, 12);
  std::vector<float> want(f32.output_size()), got(want.size());
  f32.run(in.f.data(), want.data());
  low.run(in.f.data(), got.data());
  const LogitAgreement a = compare_logits(want.data(), got.data(), static_cast<int>(want.size()));
  EXPECT_GT(a.max_rel, 0.0);
  EXPECT_LE(a.max_rel, 2e-2);
  bool bf16_kernel = false;
  for (const auto& [node, impl] : low.info().kernels) bf16_kernel |= node.rfind("MatMul", 0) == 0 && impl.find("bf16") != std::string::npos;
  EXPECT_TRUE(bf16_kernel);
}

// A normalized photo: bfloat16's error depends on the data, so the networks
// see the kind they are made for.
std::vector<float> photo(const Model& m, const std::string& preset) {
  Preprocessor pre(model_preset(m, preset));
  std::vector<float> x(pre.tensor_size());
  pre.run_file(test::data_path("images/squirrel_cls.jpg"), x.data());
  return x;
}

// A network at a reduced precision against its float32 run on the photo:
// the agreement, whether a second run gave the same bits, and the kernels.
struct AgainstF32 {
  LogitAgreement a;
  std::vector<float> want;  // float32's logits
  bool deterministic = false;
  std::vector<std::pair<std::string, std::string>> kernels;
};
AgainstF32 against_f32(const Graph& g, const std::string& name, EngineOptions opt, const std::string& preset) {
  Model low = Model::from_graph(g, name, opt);
  opt.precision = Precision::F32;
  Model f32 = Model::from_graph(g, name, opt);
  const std::vector<float> x = photo(f32, preset);
  AgainstF32 r;
  r.want.resize(f32.output_size());
  std::vector<float> got(r.want.size()), again(r.want.size());
  f32.run(x.data(), r.want.data());
  low.run(x.data(), got.data());
  low.run(x.data(), again.data());
  r.a = compare_logits(r.want.data(), got.data(), static_cast<int>(got.size()));
  r.deterministic = std::memcmp(got.data(), again.data(), got.size() * sizeof(float)) == 0;
  r.kernels = low.info().kernels;
  return r;
}

// Every family of built-in network (random weights, non-trivial BatchNorm
// statistics) at bf16 stays within 2 % of the largest logit of its float32
// run, runs bfloat16 kernels (AMX's for every convolution where the CPU has
// it; differs from float32 at all), none of oneDNN's
// reference ones, and gives the
// same bits run to run. On a CPU without bfloat16 dot products (or under
// VINFER_ISA=avx2 / VINFER_BF16=0) loading is refused, saying why.
TEST(Precision, Bf16OnEveryBuiltInNetwork) {
  for (const char* name : {"densenet121", "resnet50", "resnet18", "vgg11_bn", "keras:densenet121", "keras:resnet50"}) {
    ZooInfo info;
    const Graph g = zoo_graph(name, "", &info, 7);
    EngineOptions opt;
    opt.threads = 2;
    opt.precision = Precision::BF16;
    if (!cpu_has_bf16()) {
      try {
        Model::from_graph(g, name, opt);
        ADD_FAILURE() << name << ": bf16 loaded on a CPU without it";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
        EXPECT_NE(std::string(e.what()).find("bfloat16 dot products"), std::string::npos) << e.what();
      }
      continue;
    }
    const AgainstF32 r = against_f32(g, name, opt, info.preset);
    EXPECT_GT(r.a.max_rel, 0.0) << name << ": bf16 gave float32's exact logits";
    EXPECT_LE(r.a.max_rel, 2e-2) << name;
    EXPECT_GE(r.a.cosine, 0.999) << name;
    EXPECT_TRUE(r.deterministic) << name;
    int convs = 0, bf16_convs = 0, amx_convs = 0;
    for (const auto& [node, impl] : r.kernels) {
      if (node.rfind("Conv", 0) != 0) continue;
      EXPECT_EQ(impl.rfind("ref", 0), std::string::npos) << name << ": " << node << " runs " << impl;
      ++convs, bf16_convs += impl.find("bf16") != std::string::npos, amx_convs += impl.find("amx_bf16") != std::string::npos;
    }
    // With AMX every convolution runs on it, channels-last; without, at
    // least the first runs bfloat16 (the 3x3s on large maps run float32
    // Winograd: conv_input_form). ctest's unit_tests_no_amx runs the latter
    // on AMX hosts too.
    if (cpu::amx_bf16()) EXPECT_EQ(amx_convs, convs) << name;
    else EXPECT_EQ(amx_convs, 0) << name;
    // (every ResNet50 convolution but the 7x7 on oneDNN's brgconv kernels:
    // residual adds accumulate in place, a binary add would take them elsewhere)
    if (cpu::amx_bf16() && std::string(name) == "resnet50")
      EXPECT_EQ(std::count_if(r.kernels.begin(), r.kernels.end(), [](const auto& k) { return k.second.rfind("brgconv", 0) == 0; }),
                convs - 1);
    // (and ResNet's max pool, between convolutions, pools bfloat16 there)
    for (const auto& [node, impl] : r.kernels)
      if (cpu::amx_bf16() && std::string(name).rfind("resnet", 0) == 0 && node.rfind("MaxPool", 0) == 0)
        EXPECT_NE(impl.find("bf16"), std::string::npos) << name << ": " << node << " runs " << impl;
    EXPECT_GE(bf16_convs, 1) << name;
  }
}


// A calibration of the network on two photos (squirrel, cat), through its
// file form and back.
Calibration calibrate(const Graph& g, const std::string& name, const std::string& preset) {
  EngineOptions opt;
  opt.threads = 2;
  opt.record_ranges = true;
  Model m = Model::from_graph(g, name, opt);
  Preprocessor pre(model_preset(m, preset));
  std::vector<float> x(pre.tensor_size()), y(m.output_size());
  for (const char* image : {"images/squirrel_cls.jpg", "images/chelsea.png"}) {
    pre.run_file(test::data_path(image), x.data());
    m.run(x.data(), y.data());
  }
  const Calibration c = m.calibration();
  EXPECT_EQ(c.images, 2);
  return Calibration::parse(c.to_json(), name);
}

// oneDNN names its int8 kernels by the instructions they use: VNNI, or AMX
// (avx512_core_amx_int8) on CPUs that have it.
bool int8_kernel(const std::string& impl) {
  return impl.find("vnni") != std::string::npos || impl.find("amx_int8") != std::string::npos;
}

// Every family of built-in network at int8, calibrated on two photos and run
// on one of them: within 5 % of the largest logit of its float32 run, the
// same top-1 class where float32's margin exceeds the error, int8 kernels
// (VNNI or AMX) for every convolution (on AMX all but the first) and for
// the hidden fully connected layers (not the classifier: float32 sums of
// bfloat16 weights), none of oneDNN's reference ones, the same bits run to
// run.
// Refused, saying why, without VNNI.
TEST(Precision, Int8OnEveryBuiltInNetwork) {
  for (const char* name : {"densenet121", "resnet50", "resnet18", "vgg11_bn", "keras:densenet121", "keras:resnet50"}) {
    ZooInfo info;
    const Graph g = zoo_graph(name, "", &info, 7);
    EngineOptions opt;
    opt.threads = 2;
    opt.precision = Precision::INT8;
    if (!cpu_has_int8()) {
      opt.calibration = std::make_shared<const Calibration>();
      try {
        Model::from_graph(g, name, opt);
        ADD_FAILURE() << name << ": int8 loaded on a CPU without VNNI";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
        EXPECT_NE(std::string(e.what()).find("int8 dot products"), std::string::npos) << e.what();
      }
      continue;
    }
    opt.calibration = std::make_shared<const Calibration>(calibrate(g, name, info.preset));
    const AgainstF32 r = against_f32(g, name, opt, info.preset);
    EXPECT_GT(r.a.max_rel, 0.0) << name << ": int8 gave float32's exact logits";
    EXPECT_LE(r.a.max_rel, 5e-2) << name;
    EXPECT_GE(r.a.cosine, 0.99) << name;
    std::vector<float> sorted = r.want;
    std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<float>());
    const float largest =
        *std::max_element(r.want.begin(), r.want.end(), [](float p, float q) { return std::fabs(p) < std::fabs(q); });
    if (sorted[0] - sorted[1] > 2 * r.a.max_rel * std::fabs(largest)) EXPECT_TRUE(r.a.top1) << name;
    EXPECT_TRUE(r.deterministic) << name;
    int convs = 0, int8_convs = 0;
    std::vector<std::string> fcs;
    for (const auto& [node, impl] : r.kernels) {
      if (node.rfind("Gemm", 0) == 0 || node.rfind("MatMul", 0) == 0) fcs.push_back(impl);
      if (node.rfind("Conv", 0) != 0) continue;
      EXPECT_EQ(impl.rfind("ref", 0), std::string::npos) << name << ": " << node << " runs " << impl;
      ++convs, int8_convs += int8_kernel(impl);
    }
    const bool amx = cpu::amx_bf16();
    EXPECT_EQ(int8_convs, convs - (amx ? 1 : 0)) << name << ": the convolutions in int8 (on AMX all but the first)";
    // (ResNet50's max pool after the first pools its int8 output, or on AMX
    // its bfloat16 one; ResNet18's output is also a residual operand: pooled
    // in float32)
    for (const auto& [node, impl] : r.kernels)
      if (cpu_has_bf16() && std::string(name) == "resnet50" && node.rfind("MaxPool", 0) == 0)
        EXPECT_NE(impl.find(amx ? "bf16" : "jit_int"), std::string::npos) << name << ": " << node << " runs " << impl;
    // (ResNet50's residual stream in u8 from block to block (int8_stream),
    // written in place over the u8 input of its block, or in a block with a
    // projection shortcut over the s8 output of its other branch; quantized
    // for the next block only after the two blocks before the last, whose
    // output is pooled: from bfloat16 where the CPU has it)
    int stream_quantizations = 0;
    for (const auto& [node, impl] : r.kernels)
      if (std::string(name) == "resnet50" && node.rfind("to channels-last u8", 0) == 0) {
        ++stream_quantizations;
        if (cpu_has_bf16()) EXPECT_NE(impl.find("quantize_bf16"), std::string::npos) << name << ": " << node << " runs " << impl;
      }
    if (std::string(name) == "resnet50") EXPECT_EQ(stream_quantizations, 2) << name;
    // (the first, on AMX, in bfloat16, but VGG's 3x3: its error in bfloat16
    // added to int8's)
    const int first_bf16 = std::string(name).find("vgg") == std::string::npos && amx ? 1 : 0;
    EXPECT_EQ(std::count_if(r.kernels.begin(), r.kernels.end(),
                            [](const auto& k) {
                              return k.first.rfind("Conv", 0) == 0 && !int8_kernel(k.second) &&
                                     k.second.find("bf16") != std::string::npos;
                            }),
              first_bf16)
        << name;
    // (VGG's hidden fully connected layers in int8, the classifier not)
    ASSERT_FALSE(fcs.empty()) << name;
    EXPECT_FALSE(int8_kernel(fcs.back())) << name << ": the classifier runs " << fcs.back();
    EXPECT_NE(fcs.back().find("gemv_bf16w_skip0"), std::string::npos) << name << ": the classifier runs " << fcs.back();
    for (std::size_t i = 0; i + 1 < fcs.size(); ++i) EXPECT_TRUE(int8_kernel(fcs[i])) << name << ": " << fcs[i];
  }
}

// A calibration made before the first convolution's input was recorded
// (no range for the image) still loads: that convolution stays out of int8
// (in bfloat16 where the CPU has it) and the rest runs in int8 as before.
TEST(Precision, Int8CalibrationWithoutTheImagesRange) {
  if (!cpu_has_int8()) GTEST_SKIP() << "no VNNI here: Int8OnEveryBuiltInNetwork checks the refusal";
  ZooInfo info;
  const Graph g = zoo_graph("resnet18", "", &info, 7);
  Calibration c = calibrate(g, "resnet18", info.preset);
  const std::string image = g.value(g.inputs[0]).name;
  ASSERT_EQ(c.activations.erase(image), 1u) << "the image's range is recorded";
  EngineOptions opt;
  opt.threads = 2;
  opt.precision = Precision::INT8;
  opt.calibration = std::make_shared<const Calibration>(c);
  const AgainstF32 r = against_f32(g, "resnet18", opt, info.preset);
  EXPECT_LE(r.a.max_rel, 5e-2);
  int convs = 0, int8_convs = 0;
  std::string first;
  for (const auto& [node, impl] : r.kernels) {
    if (node.rfind("Conv", 0) != 0) continue;
    if (convs++ == 0) first = impl;
    int8_convs += int8_kernel(impl);
  }
  EXPECT_EQ(int8_convs, convs - 1);
  EXPECT_FALSE(int8_kernel(first)) << first;
  if (cpu_has_bf16()) EXPECT_NE(first.find("bf16"), std::string::npos) << first;
}

// A graph run on `in` in each reduced precision the CPU has (int8
// calibrated on `in` itself) against its float32 run, image by image (of
// `images`): within 2 % (bf16) or 5 % (int8) of the largest output, cosine
// >= 0.999. `check` then looks at each reduced-precision model.
void each_precision_near_f32(const Graph& g, const TensorData& in, int images,
                             const std::function<void(Precision, const Model&)>& check) {
  EngineOptions opt;
  opt.threads = 2;
  Model f32 = Model::from_graph(g, "graph", opt);
  std::vector<float> want(f32.output_size()), got(want.size());
  f32.run(in.f.data(), want.data());
  opt.record_ranges = true;
  Model recorder = Model::from_graph(g, "graph", opt);
  recorder.run(in.f.data(), got.data());
  const auto calibration = std::make_shared<const Calibration>(recorder.calibration());
  opt.record_ranges = false;
  const int per_image = static_cast<int>(want.size()) / images;
  for (const Precision p : {Precision::BF16, Precision::INT8}) {
    if (p == Precision::BF16 ? !cpu_has_bf16() : !cpu_has_int8()) continue;
    opt.precision = p;
    opt.calibration = p == Precision::INT8 ? calibration : nullptr;
    Model low = Model::from_graph(g, "graph", opt);
    std::fill(got.begin(), got.end(), NAN);
    low.run(in.f.data(), got.data());
    for (int image = 0; image < images; ++image) {
      const LogitAgreement agree = compare_logits(want.data() + image * per_image, got.data() + image * per_image, per_image);
      EXPECT_LE(agree.max_rel, p == Precision::BF16 ? 2e-2 : 5e-2) << to_string(p) << ", image " << image;
      EXPECT_GE(agree.cosine, 0.999) << to_string(p) << ", image " << image;
    }
    check(p, low);
  }
}

// BatchNormalization's four per-channel inputs of a graph, away from zero
// where they must be (variances, scales).
std::vector<int> batch_norm_params(Graph& g, std::int64_t channels, int& seed) {
  std::vector<int> params;
  for (const float lo : {0.5f, -0.5f, -0.3f, 0.2f}) {
    TensorData t = test::random_tensor({channels}, static_cast<unsigned>(seed++));
    for (float& v : t.f) v = lo + std::fabs(v);
    params.push_back(g.add_constant("bn" + std::to_string(seed), t));
  }
  return params;
}

// A residual add accumulates into the output written over its operand
// (make_post_ops' sum_in_place) only where nothing reads the operand later:
// the second block's operand is read again by the last convolution, so
// overwriting it would feed that one the second block's output. Both
// precisions against float32; with AMX the residual 1x1 that accumulates in
// place runs on brgconv_1x1 like the convolutions without one, and the
// other (a binary add) does not.
TEST(Precision, ResidualAddsInPlaceOnlyOverDeadOperands) {
  Graph g;
  const int x = g.add_input("x", {1, 32, 14, 14});
  int seed = 40;
  auto conv = [&](int in) {
    return g.add_node("Conv", {in, g.add_constant("w" + std::to_string(seed), test::random_tensor({32, 32, 1, 1}, seed))})[0];
  };
  auto relu = [&](int v) { return g.add_node("Relu", {v})[0]; };
  auto gap = [&](int v) { return g.add_node("GlobalAveragePool", {v})[0]; };
  const int a = relu(conv(x));
  const int s1 = relu(g.add_node("Add", {conv(relu(conv(a))), a})[0]);
  const int s2 = relu(g.add_node("Add", {conv(relu(conv(s1))), s1})[0]);
  const int late = conv(s1);
  g.mark_output(g.add_node("Add", {gap(conv(s2)), gap(late)})[0]);
  each_precision_near_f32(g, test::random_tensor({1, 32, 14, 14}, 50, 0.f, 1.f), 1, [](Precision p, const Model& low) {
    if (!cpu::amx_bf16()) return;
    std::vector<std::string> others;
    for (const auto& [node, impl] : low.info().kernels)
      if (node.rfind("Conv", 0) == 0 && impl.rfind("brgconv_1x1", 0) != 0) others.push_back(node);
    ASSERT_EQ(others.size(), 1u) << to_string(p) << ": " << (others.empty() ? "" : others[0]);
    EXPECT_EQ(others[0], "Conv 'Conv_9'") << to_string(p);
  });
}

// ResNet's residual stream in int8 through two blocks with a projection
// shortcut, one whose other branch ends without a ReLU (its output s8) and
// one with (u8), then an identity block: each block's last convolution
// accumulates in place over the 8-bit operand, so nothing between the
// blocks is quantized again (only the network's input is). Against float32.
TEST(Precision, Int8StreamThroughProjectionBlocks) {
  Graph g;
  const int x = g.add_input("x", {2, 32, 10, 10});
  int seed = 70;
  auto conv = [&](int in, std::int64_t c, std::int64_t out) {
    TensorData w = test::random_tensor({out, c, 1, 1}, static_cast<unsigned>(seed++));
    for (float& v : w.f) v /= std::sqrt(static_cast<float>(c));
    return g.add_node("Conv", {in, g.add_constant("w" + std::to_string(seed), w)})[0];
  };
  auto relu = [&](int v) { return g.add_node("Relu", {v})[0]; };
  const int a = relu(conv(x, 32, 32));
  const int s8_branch = conv(relu(conv(a, 32, 32)), 32, 64);
  const int s1 = relu(g.add_node("Add", {s8_branch, conv(a, 32, 64)})[0]);
  const int u8_branch = relu(conv(relu(conv(s1, 64, 32)), 32, 48));
  const int s2 = relu(g.add_node("Add", {u8_branch, conv(s1, 64, 48)})[0]);
  const int s3 = relu(g.add_node("Add", {conv(relu(conv(s2, 48, 32)), 32, 48), s2})[0]);
  g.mark_output(g.add_node("GlobalAveragePool", {conv(s3, 48, 16)})[0]);
  each_precision_near_f32(g, test::random_tensor({2, 32, 10, 10}, 79, -1.f, 1.f), 2, [](Precision p, const Model& low) {
    if (p != Precision::INT8) return;
    std::vector<std::string> quantized;
    for (const auto& [node, impl] : low.info().kernels)
      if (node.rfind("to channels-last u8", 0) == 0 || node.rfind("to channels-last s8", 0) == 0) quantized.push_back(node);
    ASSERT_EQ(quantized.size(), 1u) << (quantized.empty() ? "" : quantized.back());
    EXPECT_EQ(quantized[0], "to channels-last s8 'x'");
  });
}

// 3x3s in int8 on a 16x16 map: vinfer's Winograd (winograd_u8.hpp) runs
// the wide ones where the CPU has AVX-512 VNNI and oneDNN no AMX (128 ->
// 128, its output in u8; 128 -> 128 again, in float32 for the pool), not
// 64 -> 128 (its transforms would cost more than they save) nor the first
// (s8 input); with VINFER_WINOGRAD_INT8=0 none. Both near float32 at
// batch 2.
TEST(Precision, Int8WinogradOnWideLayers) {
  Graph g;
  const int x = g.add_input("x", {2, 32, 16, 16});
  int seed = 80;
  auto conv = [&](int in, std::int64_t c, std::int64_t out) {
    TensorData w = test::random_tensor({out, c, 3, 3}, static_cast<unsigned>(seed++));
    for (float& v : w.f) v /= std::sqrt(9.f * static_cast<float>(c));
    const int b = g.add_constant("b" + std::to_string(seed), test::random_tensor({out}, static_cast<unsigned>(seed++), -0.1f, 0.3f));
    const int y = g.add_node("Conv", {in, g.add_constant("w" + std::to_string(seed), w), b},
                             {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}})[0];
    return g.add_node("Relu", {y})[0];
  };
  const int y = conv(conv(conv(conv(x, 32, 64), 64, 128), 128, 128), 128, 128);
  g.mark_output(g.add_node("GlobalAveragePool", {g.add_node("MaxPool", {y}, {{"kernel_shape", std::vector<std::int64_t>{2, 2}},
                                                                             {"strides", std::vector<std::int64_t>{2, 2}}})[0]})[0]);
  for (const char* setting : {"", "0"}) {
    if (*setting) ::setenv("VINFER_WINOGRAD_INT8", setting, 1);
    each_precision_near_f32(g, test::random_tensor({2, 32, 16, 16}, 89, -1.f, 1.f), 2, [&](Precision p, const Model& low) {
      if (p != Precision::INT8) return;
      std::vector<std::string> convs;
      for (const auto& [node, impl] : low.info().kernels)
        if (node.rfind("Conv", 0) == 0) convs.push_back(impl);
      ASSERT_EQ(convs.size(), 4u);
      const bool wino = !*setting && detail::cpu_features().avx512_vnni && !cpu::amx_bf16();
      for (std::size_t i = 0; i < convs.size(); ++i) {
        EXPECT_TRUE(int8_kernel(convs[i])) << i << ": " << convs[i];
        EXPECT_EQ(convs[i] == "vinfer:wino_f23_u8_avx512_vnni", wino && i >= 2) << i << ": " << convs[i] << ", setting '" << setting << "'";
      }
    });
    if (*setting) ::unsetenv("VINFER_WINOGRAD_INT8");
  }
}

// DenseNet's pre-activation (BatchNorm + ReLU on a tensor only a 1x1
// reads) writes the 1x1's reduced-precision input itself, channels-last on
// AMX and in int8: at batch 2, with 40 channels (a partial last block),
// against float32.
TEST(Precision, PreActivationWritesTheConvolutionsInput) {
  Graph g;
  const int x = g.add_input("x", {2, 40, 9, 11});
  int seed = 61;
  std::vector<int> bn_in{x};
  for (int v : batch_norm_params(g, 40, seed)) bn_in.push_back(v);
  const int bn = g.add_node("BatchNormalization", bn_in)[0];
  const int c1 = g.add_node("Conv", {g.add_node("Relu", {bn})[0], g.add_constant("w1", test::random_tensor({32, 40, 1, 1}, 65))})[0];
  const int c2 = g.add_node("Conv", {g.add_node("Relu", {c1})[0], g.add_constant("w2", test::random_tensor({16, 32, 3, 3}, 66))},
                            {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}})[0];
  g.mark_output(g.add_node("GlobalAveragePool", {c2})[0]);
  each_precision_near_f32(g, test::random_tensor({2, 40, 9, 11}, 67, -2.f, 2.f), 2, [](Precision p, const Model& low) {
    std::string impls;
    for (const auto& [node, impl] : low.info().kernels) impls += impl + " ";
    EXPECT_NE(impls.find(p == Precision::BF16 ? "scale_shift_bf16" : "scale_shift_quantize"), std::string::npos) << impls;
  });
}

// A dense block at batch 3: each convolution's channels-last output (AMX's
// bfloat16 ones, int8 ones) is written into its slice of every image of the
// concatenation, and the pre-activations read the slices where they lie: no
// packed copy in or out of them, and each image as float32 computes it.
TEST(Precision, DenseBlockAtBatchWritesItsSlices) {
  Graph g;
  const int x = g.add_input("x", {3, 32, 8, 8});
  const int stem = g.add_node("MaxPool", {x}, {{"kernel_shape", std::vector<std::int64_t>{1, 1}}})[0];
  std::vector<int> feats{stem};
  int seed = 70;
  for (int layer = 0; layer < 2; ++layer) {
    const std::int64_t c = 32 + 16 * layer;
    std::vector<int> bn_in{feats.size() == 1 ? stem : g.add_node("Concat", feats, {{"axis", std::int64_t{1}}})[0]};
    for (int v : batch_norm_params(g, c, seed)) bn_in.push_back(v);
    const int bn = g.add_node("BatchNormalization", bn_in)[0];
    const int w1 = g.add_constant("w" + std::to_string(seed), test::random_tensor({32, c, 1, 1}, static_cast<unsigned>(seed)));
    const int w2 = g.add_constant("v" + std::to_string(seed), test::random_tensor({16, 32, 3, 3}, static_cast<unsigned>(seed + 1)));
    seed += 2;
    const int c1 = g.add_node("Conv", {g.add_node("Relu", {bn})[0], w1})[0];
    feats.push_back(g.add_node("Conv", {g.add_node("Relu", {c1})[0], w2}, {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}})[0]);
  }
  g.mark_output(g.add_node("GlobalAveragePool", {g.add_node("Concat", feats, {{"axis", std::int64_t{1}}})[0]})[0]);
  each_precision_near_f32(g, test::random_tensor({3, 32, 8, 8}, 90, -2.f, 2.f), 3, [](Precision p, const Model& low) {
    EXPECT_EQ(low.info().concats_in_place, 2) << to_string(p);
    if (p == Precision::BF16 && !cpu::amx_bf16()) return;  // (blocks there: no channels-last output)
    int copies = 0, into = 0;
    for (const auto& [node, impl] : low.info().kernels)
      copies += impl == "vinfer:copy_images", into += impl == "vinfer:channels_last_into_blocks";
    EXPECT_EQ(copies, 1) << to_string(p) << ": the pool's output only (pools write packed)";
    EXPECT_EQ(into, 2) << to_string(p);
  });
}

// A batch runs each image as batch 1 does.
TEST(Precision, Int8BatchMatchesOneImage) {
  if (!cpu_has_int8()) GTEST_SKIP() << "no VNNI here: Int8OnEveryBuiltInNetwork checks the refusal";
  ZooInfo info;
  const Graph g = zoo_graph("resnet18", "", &info, 7);
  EngineOptions opt;
  opt.threads = 2;
  opt.precision = Precision::INT8;
  opt.calibration = std::make_shared<const Calibration>(calibrate(g, "resnet18", info.preset));
  Model one = Model::from_graph(g, "resnet18", opt);
  opt.batch = 3;
  Model three = Model::from_graph(g, "resnet18", opt);
  std::vector<float> x = photo(one, info.preset), xs;
  for (int i = 0; i < 3; ++i) {
    for (float& v : x) v *= 0.9f;
    xs.insert(xs.end(), x.begin(), x.end());
  }
  std::vector<float> ys(three.output_size()), y(one.output_size());
  three.run(xs.data(), ys.data());
  for (std::size_t i = 0; i < 3; ++i) {
    one.run(xs.data() + i * x.size(), y.data());
    for (std::size_t k = 0; k < y.size(); ++k) ASSERT_NEAR(ys[i * y.size() + k], y[k], 1e-4f * (1 + std::fabs(y[k]))) << i << "," << k;
  }
}

// What is refused, and how: int8 without a calibration or with another
// network's; ranges asked of a model that did not record them; recording
// in a precision other than float32.
TEST(Precision, CalibrationMisuse) {
  const Graph g = zoo_graph("resnet18", "", nullptr, 7);
  EngineOptions opt;
  opt.threads = 2;
  opt.precision = Precision::INT8;
  if (cpu_has_int8()) {
    try {
      Model::from_graph(g, "resnet18", opt);
      ADD_FAILURE() << "int8 without a calibration loaded";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find("needs a calibration"), std::string::npos) << e.what();
    }
    // resnet18 with other weights (seed 8) is another network.
    opt.calibration = std::make_shared<const Calibration>(calibrate(zoo_graph("resnet18", "", nullptr, 8), "other", "torchvision"));
    try {
      Model::from_graph(g, "resnet18", opt);
      ADD_FAILURE() << "another network's calibration accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("another network"), std::string::npos) << e.what();
    }
  }
  opt.precision = Precision::F32;
  opt.calibration.reset();
  Model plain = Model::from_graph(g, "resnet18", opt);
  EXPECT_THROW(plain.calibration(), Error);
  opt.record_ranges = true;
  Model recording = Model::from_graph(g, "resnet18", opt);
  EXPECT_THROW(recording.calibration(), Error);  // nothing run yet
  opt.precision = Precision::BF16;
  EXPECT_THROW(Model::from_graph(g, "resnet18", opt), Error);
}

// The file's checks, one by one (the CLI test covers them end to end).
TEST(Precision, CalibrationFileChecks) {
  const std::string good =
      R"({"format":"vinfer-calibration","version":1,"model":"m","fingerprint":"f","images":2,)"
      R"("activations":{"x":{"min":-1,"max":2}},"weight_scales":{"c":[0.5,0.25]}})";
  const Calibration c = Calibration::parse(good, "good");
  EXPECT_EQ(c.activations.at("x").max, 2.f);
  EXPECT_EQ(c.weight_scales.at("c").size(), 2u);
  EXPECT_EQ(Calibration::parse(c.to_json(), "again").to_json(), c.to_json());
  auto refused = [&](std::string text, const char* why) {
    try {
      Calibration::parse(text, "bad");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  refused(good.substr(0, good.size() / 2), "not JSON");
  refused("[]", "format");
  refused(R"({"format":1})", "format");  // (a JSON type error, not an escaping exception)
  refused(with("\"version\":1", "\"version\":7"), "version 7");
  refused(with("\"max\":2", "\"max\":1e39"), "not a finite float");
  refused(with("\"max\":2", "\"max\":\"2\""), "not a number");
  refused(with("\"min\":-1", "\"min\":3"), "min > max");
  refused(with("0.25", "-0.25"), "not positive");
  refused(with("[0.5,0.25]", "[]"), "not a list");
  refused(with("{\"x\":{\"min\":-1,\"max\":2}}", "{}"), "activations");
}

}  // namespace
}  // namespace vinfer
