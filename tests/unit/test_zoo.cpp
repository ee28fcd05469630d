// The built-in architectures (parameter counts as torchvision reports them)
// and the checkpoint readers on hand-made, hostile and broken files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>

#include "test_support.hpp"
#include "vinfer/error.hpp"
#include "vinfer/zoo.hpp"
#include "zoo/builder.hpp"
#include "zoo/checkpoint.hpp"

namespace vinfer {
namespace {

// torchvision's legacy DenseNet checkpoints (torchvision before 0.3) name
// "denselayer1.norm.1.weight" what the model calls "denselayer1.norm1.weight":
// the same weights under either naming load to the same graph.
TEST(Zoo, LegacyDenseNetKeysLoadAsTheModernOnes) {
  const zoo::ZooNet net = zoo::build_torchvision("densenet121");
  auto write = [&](const std::string& path, bool legacy, int& renamed) {
    std::string header = "{", data;
    renamed = 0;
    unsigned seed = 1;
    for (const zoo::Param& p : net.params) {
      std::string key = p.key;
      if (legacy && key.find("denselayer") != std::string::npos)
        for (const char* kind : {".norm", ".conv"}) {
          const std::size_t at = key.rfind(kind);
          const std::size_t digit = at + std::strlen(kind);
          if (at != std::string::npos && digit < key.size() && (key[digit] == '1' || key[digit] == '2') &&
              key[digit + 1] == '.') {
            key.insert(digit, "."), ++renamed;
            break;
          }
        }
      const TensorData t = test::random_tensor(p.shape, seed++, 0.1f, 1.f);  // positive: valid running variances
      std::string shape;
      for (std::int64_t d : p.shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
      header += (header.size() > 1 ? "," : "") + ("\"" + key + "\":{\"dtype\":\"F32\",\"shape\":[" + shape +
                                                   "],\"data_offsets\":[" + std::to_string(data.size()) + "," +
                                                   std::to_string(data.size() + t.f.size() * 4) + "]}");
      data.append(reinterpret_cast<const char*>(t.f.data()), t.f.size() * 4);
    }
    header += "}";
    const std::uint64_t n = header.size();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(&n), 8).write(header.data(), static_cast<std::streamsize>(n)).write(data.data(), static_cast<std::streamsize>(data.size()));
  };
  const std::string dir = ::testing::TempDir();
  const std::string modern = dir + "vinfer_densenet_modern.safetensors", legacy = dir + "vinfer_densenet_legacy.safetensors";
  int renamed_modern = 0, renamed_legacy = 0;
  write(modern, false, renamed_modern);
  write(legacy, true, renamed_legacy);
  EXPECT_EQ(renamed_legacy, 58 * 10);  // 58 dense layers: norm1, norm2 (4 tensors each), conv1, conv2
  const Graph a = zoo_graph("densenet121", modern), b = zoo_graph("densenet121", legacy);
  ASSERT_EQ(a.values.size(), b.values.size());
  std::size_t compared = 0;
  for (std::size_t i = 0; i < a.values.size(); ++i)
    if (a.values[i].constant) {
      ASSERT_TRUE(b.values[i].constant) << a.values[i].name;
      EXPECT_EQ(a.values[i].constant->f, b.values[i].constant->f) << a.values[i].name;
      ++compared;
    }
  EXPECT_GE(compared, net.params.size() / 2);
  std::remove(modern.c_str()), std::remove(legacy.c_str());
}

TEST(Zoo, ParameterCountsMatchTorchvision) {
  // sum(p.numel() for p in torchvision.models.NAME().parameters())
  const std::map<std::string, std::int64_t> want = {
      {"densenet121", 7978856}, {"densenet161", 28681000}, {"densenet169", 14149480}, {"densenet201", 20013928},
      {"vgg11", 132863336},     {"vgg11_bn", 132868840},   {"vgg13", 133047848},      {"vgg13_bn", 133053736},
      {"vgg16", 138357544},     {"vgg16_bn", 138365992},   {"vgg19", 143667240},      {"vgg19_bn", 143678248},
      {"resnet18", 11689512},   {"resnet34", 21797672},    {"resnet50", 25557032},    {"resnet101", 44549160},
      {"resnet152", 60192808}};
  EXPECT_EQ(zoo::torchvision_names().size(), want.size());
  for (const std::string& name : zoo::torchvision_names()) {
    zoo::ZooNet net = zoo::build_torchvision(name);
    std::int64_t n = 0;
    for (const zoo::Param& p : net.params)
      if (p.key.find("running_") == std::string::npos) n += numel(p.shape);
    ASSERT_TRUE(want.count(name)) << name;
    EXPECT_EQ(n, want.at(name)) << name;
    infer_shapes(net.graph);
    EXPECT_EQ(net.graph.value(net.graph.outputs.at(0)).shape, (Shape{1, 1000})) << name;
  }
}

TEST(Zoo, KerasParameterCountsMatchKeras) {
  // model.count_params() of keras.applications.NAME(weights=None), BatchNorm statistics included.
  const std::map<std::string, std::int64_t> want = {{"densenet121", 8062504}, {"densenet169", 14307880}, {"densenet201", 20242984},
                                                    {"vgg16", 138357544},     {"vgg19", 143667240},      {"resnet50", 25636712}};
  EXPECT_EQ(zoo::keras_names().size(), want.size());
  for (const std::string& name : zoo::keras_names()) {
    zoo::ZooNet net = zoo::build_keras(name);
    std::int64_t n = 0;
    for (const zoo::Param& p : net.params) n += numel(p.shape);
    EXPECT_EQ(n, want.at(name)) << name;
    infer_shapes(net.graph);
    EXPECT_EQ(net.graph.value(net.graph.outputs.at(0)).shape, (Shape{1, 1000})) << name;
    EXPECT_TRUE(is_zoo_model("keras:" + name));
  }
}

TEST(Zoo, SeededWeightsAreDeterministicAndRunnable) {
  ZooInfo info;
  Graph a = zoo_graph("resnet18", "", &info, 7), b = zoo_graph("resnet18", "", nullptr, 7), c = zoo_graph("resnet18", "", nullptr, 8);
  EXPECT_TRUE(info.random_weights);
  EXPECT_EQ(info.preset, "torchvision");
  const TensorData& wa = *a.constant(a.nodes[0].inputs[1]);
  EXPECT_EQ(wa.f, b.constant(b.nodes[0].inputs[1])->f);
  EXPECT_NE(wa.f, c.constant(c.nodes[0].inputs[1])->f);
  // kaiming_normal_(fan_out, relu) for conv1: sd = sqrt(2 / (64 * 7 * 7)).
  double ss = 0;
  for (float v : wa.f) ss += static_cast<double>(v) * v;
  EXPECT_NEAR(std::sqrt(ss / static_cast<double>(wa.f.size())), std::sqrt(2.0 / (64 * 49)), 0.002);
  EngineOptions opt;
  opt.threads = 2;
  Model m = Model::from_graph(std::move(a), "resnet18", opt);
  std::vector<float> x(m.input_size(), 0.5f), y(m.output_size(), NAN);
  m.run(x.data(), y.data());
  for (float v : y) ASSERT_TRUE(std::isfinite(v));
}

// keep_constants = false: the backend's packed copies are all a run needs, the
// graph's weights are freed (the caller's own graph keeps its data), and
// set_threads, which would recompile from them, says so.
TEST(Zoo, FreedConstantsGiveTheSameOutputs) {
  const Graph g = zoo_graph("resnet18", "", nullptr, 3);
  EngineOptions opt;
  opt.threads = 2;
  opt.tune = false;  // both by the same rule, without timing
  Model kept = Model::from_graph(g, "resnet18", opt);
  opt.keep_constants = false;
  Model freed = Model::from_graph(g, "resnet18", opt);
  std::vector<float> x(kept.input_size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97) / 97.f - 0.5f;
  std::vector<float> a(kept.output_size(), NAN), b(kept.output_size(), NAN);
  kept.run(x.data(), a.data());
  freed.run(x.data(), b.data());
  EXPECT_EQ(a, b);
  std::size_t left = 0, emptied = 0;
  for (const Value& v : freed.graph().values)
    if (v.constant && v.constant->dtype == DType::F32) {
      left += v.constant->f.size();
      emptied += v.constant->f.empty() && v.constant->numel() > 0 ? 1 : 0;
    }
  EXPECT_GT(emptied, 20u);
  EXPECT_LT(left, 100000u);  // only small ones stay (biases); resnet18 has 11.7 M weights
  EXPECT_EQ(g.constant(g.nodes[0].inputs[1])->f.size(), 64u * 3 * 7 * 7);
  freed.set_threads(2);  // unchanged: nothing to recompile
  try {
    freed.set_threads(1);
    ADD_FAILURE() << "set_threads recompiled without the weights";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("keep_constants"), std::string::npos) << e.what();
  }
  freed.run(x.data(), b.data());
  EXPECT_EQ(a, b);
}

// The built-in networks' batch is symbolic: at batch 2 each image gets what
// it gets alone (vinfer's own kernels run a batch image by image; oneDNN's
// take it whole), in NCHW and in Keras's NHWC.
TEST(Zoo, BatchRunsEachImageAsAlone) {
  for (const char* name : {"resnet18", "keras:densenet121"}) {
    const Graph g = zoo_graph(name, "", nullptr, 5);
    EngineOptions opt;
    opt.threads = 2;
    Model one = Model::from_graph(g, name, opt);
    opt.batch = 2;
    Model two = Model::from_graph(g, name, opt);
    ASSERT_EQ(two.batch(), 2);
    ASSERT_EQ(two.input_shape()[0], 2);
    ASSERT_EQ(two.output_shape(), (Shape{2, 1000}));
    const std::size_t in = one.input_size(), out = one.output_size();
    std::vector<float> x(2 * in);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 101) / 101.f - 0.5f;
    std::vector<float> y(2 * out, NAN), a(out, NAN);
    two.run(x.data(), y.data());
    for (std::size_t k = 0; k < 2; ++k) {
      one.run(x.data() + k * in, a.data());
      double scale = 0, diff = 0;
      for (std::size_t j = 0; j < out; ++j)
        scale = std::max(scale, std::fabs(static_cast<double>(a[j]))), diff = std::max(diff, std::fabs(static_cast<double>(a[j]) - y[k * out + j]));
      EXPECT_GT(scale, 0.0) << name;
      EXPECT_LE(diff, 2e-5 * scale) << name << ": image " << k;
    }
  }
}

// EngineOptions::micro_batch: a batch of 6 run 4 images at a time (the last
// run padded) gives each image what it gets alone, from run() and from
// profile() (whose layers then sum both runs); info says how it runs.
TEST(Zoo, MicroBatchesGiveEachImageItsOwnResult) {
  const char* name = "resnet18";
  const Graph g = zoo_graph(name, "", nullptr, 5);
  EngineOptions opt;
  opt.threads = 2;
  Model one = Model::from_graph(g, name, opt);
  opt.batch = 6;
  opt.micro_batch = 4;
  Model six = Model::from_graph(g, name, opt);
  ASSERT_EQ(six.batch(), 6);
  ASSERT_EQ(six.input_shape()[0], 6);
  ASSERT_EQ(six.output_shape(), (Shape{6, 1000}));
  EXPECT_EQ(six.graph().value(six.graph().inputs[0]).shape[0], 4) << "the backend runs 4 images";
  const auto& passes = six.info().passes;
  EXPECT_NE(std::find(passes.begin(), passes.end(), "micro_batch: batch 6 in runs of 4 images (asked)"), passes.end());
  const std::size_t in = one.input_size(), out = one.output_size();
  std::vector<float> x(6 * in);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 103) / 103.f - 0.5f;
  std::vector<float> y(6 * out, NAN), p(6 * out, NAN), a(out, NAN);
  six.run(x.data(), y.data());
  const std::vector<LayerProfile> layers = six.profile(x.data(), p.data());
  EXPECT_EQ(p, y);
  opt.batch = 4;
  opt.micro_batch = 0;
  const std::vector<float> x4(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(4 * in));
  std::vector<float> y4(4 * out);
  const std::vector<LayerProfile> four = Model::from_graph(g, name, opt).profile(x4.data(), y4.data());
  ASSERT_EQ(layers.size(), four.size());
  for (std::size_t i = 0; i < four.size(); ++i) EXPECT_DOUBLE_EQ(layers[i].flops, 2 * four[i].flops) << four[i].name;
  for (std::size_t k = 0; k < 6; ++k) {
    one.run(x.data() + k * in, a.data());
    double scale = 0, diff = 0;
    for (std::size_t j = 0; j < out; ++j)
      scale = std::max(scale, std::fabs(static_cast<double>(a[j]))), diff = std::max(diff, std::fabs(static_cast<double>(a[j]) - y[k * out + j]));
    EXPECT_GT(scale, 0.0);
    EXPECT_LE(diff, 2e-5 * scale) << "image " << k;
  }
}

// Automatic micro-batches: 4 at a time where the weights are light next to
// one image's activations and 4 divides the batch; whole batches for
// weight-heavy networks, other batches, a fixed batch, or when asked.
TEST(Zoo, MicroBatchChosenByWeightsAndBatch) {
  auto runs_of = [](const Graph& g, int batch, int micro) {
    EngineOptions opt;
    opt.threads = 1;
    opt.batch = batch;
    opt.micro_batch = micro;
    Model m = Model::from_graph(g, "net", opt);
    EXPECT_EQ(m.input_shape()[0], batch);
    return m.graph().value(m.graph().inputs[0]).shape[0];
  };
  Graph light;  // 864 B of weights, 40 KB of activations per image
  const int x = light.add_input("x", {-1, 3, 32, 32});
  light.mark_output(light.add_node("Relu", {light.add_node("Conv", {x, light.add_constant("w", test::random_tensor({8, 3, 3, 3}, 3))})[0]})[0]);
  EXPECT_EQ(runs_of(light, 8, 0), 4);
  EXPECT_EQ(runs_of(light, 6, 0), 6);
  EXPECT_EQ(runs_of(light, 4, 0), 4);
  EXPECT_EQ(runs_of(light, 8, 8), 8);
  EXPECT_EQ(runs_of(light, 8, 100), 8);
  EXPECT_EQ(runs_of(light, 8, 2), 2);
  Graph heavy;  // 256 KB of weights, 16 KB of activations per image
  const int v = heavy.add_input("v", {-1, 16});
  heavy.mark_output(heavy.add_node("MatMul", {v, heavy.add_constant("m", test::random_tensor({16, 4096}, 4))})[0]);
  EXPECT_EQ(runs_of(heavy, 8, 0), 8);
  EXPECT_EQ(runs_of(heavy, 8, 4), 4);
  light.value(x).shape[0] = 8;  // a fixed batch: the exporter's
  EXPECT_EQ(runs_of(light, 8, 2), 8);
}

// A fixed batch is the network's: another is refused, as is a negative one.
TEST(Zoo, FixedBatchIsKept) {
  Graph g;
  const int x = g.add_input("x", {1, 4});
  g.mark_output(g.add_node("Relu", {x})[0]);
  EngineOptions opt;
  opt.batch = 1;
  EXPECT_EQ(Model::from_graph(g, "relu", opt).batch(), 1);
  opt.batch = 2;
  try {
    Model::from_graph(g, "relu", opt);
    ADD_FAILURE() << "batch 2 of a fixed batch 1";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("fixed batch of 1"), std::string::npos) << e.what();
  }
  g.value(x).shape[0] = -1;
  EXPECT_EQ(Model::from_graph(g, "relu", opt).output_shape(), (Shape{2, 4}));
  opt.batch = -1;
  EXPECT_THROW(Model::from_graph(g, "relu", opt), Error);
}

// Keras's NHWC input reaches the first convolution as a plain tensor: a blocked one
// (3 channels padded to a block) left oneDNN only its reference kernel, 100x slower.
TEST(Zoo, NoConvolutionFallsBackToOneDnnsReferenceKernel) {
  for (const char* name : {"keras:densenet121", "resnet18"}) {
    EngineOptions opt;
    opt.threads = 2;
    Model m = load_model(name, "", opt);
    std::vector<float> x(m.input_size(), 0.1f), y(m.output_size());
    for (const LayerProfile& l : m.profile(x.data(), y.data()))
      if (l.name.rfind("Conv", 0) == 0) EXPECT_EQ(l.impl.rfind("ref", 0), std::string::npos) << name << ": " << l.name << " runs " << l.impl;
  }
}

TEST(Zoo, UnknownNameAndWeightsOnOnnx) {
  EXPECT_THROW(zoo_graph("alexnet", ""), Error);
  try {
    load_model("model.onnx", "w.pth", {});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
  }
}

zoo::StateDict read(const std::string& bytes) {
  return zoo::read_checkpoint_memory(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), "t.pth");
}

void expect_bad(const std::string& bytes, const std::string& needle) {
  try {
    read(bytes);
    FAIL() << "expected an error containing " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(Checkpoint, RefusesGlobalsOutsideTheAllowlist) {
  // pickle.dumps(os.system call) in protocol 2, as a legacy torch.save would start.
  static const char kSystem[] = "\x80\x02" "cposix\nsystem\n" "q\x00" "X\x04\x00\x00\x00" "echo" "q\x01\x85q\x02Rq\x03.";
  static const char kEval[] = "\x80\x02" "cbuiltins\neval\n" "q\x00.";
  expect_bad(std::string(kSystem, sizeof kSystem - 1), "refused");
  expect_bad(std::string(kEval, sizeof kEval - 1), "builtins.eval");
}

// Found by fuzz_checkpoint: a list that contains itself leaked under reference counting
// (LeakSanitizer in the sanitizer build checks that it no longer does).
TEST(Checkpoint, CyclicPickleNeitherLeaksNorLoops) {
  static const char kCycle[] = "\x80\x02]q\x00h\x00" "a.";
  expect_bad(std::string(kCycle, sizeof kCycle - 1), "not a torch.save checkpoint");
}

std::string safetensors(const std::string& header, const std::string& data) {
  std::string s(8, '\0');
  const std::uint64_t n = header.size();
  std::memcpy(&s[0], &n, 8);
  return s + header + data;
}

// From a file, the weights are read piece by piece (straight into a float32
// tensor, through a copy for other types): the same as from memory, and a
// file that ends before its header says is refused.
TEST(Checkpoint, FileReadsAsMemoryDoes) {
  const float a[6] = {1.5f, -2.f, 3.25f, 0.f, 1e-3f, 7.f};
  const std::uint16_t b[2] = {0x3c00, 0xc000};  // float16 1 and -2
  std::string data(reinterpret_cast<const char*>(a), sizeof a);
  data += std::string(reinterpret_cast<const char*>(b), sizeof b);
  const std::string file = safetensors(
      R"({"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},"b":{"dtype":"F16","shape":[2],"data_offsets":[24,28]}})", data);
  const std::string path = ::testing::TempDir() + "vinfer_checkpoint_file.safetensors";
  std::ofstream(path, std::ios::binary).write(file.data(), static_cast<std::streamsize>(file.size()));
  const zoo::StateDict from_file = zoo::read_checkpoint(path), from_memory = read(file);
  ASSERT_EQ(from_file.size(), 2u);
  for (const char* key : {"a", "b"}) {
    EXPECT_EQ(from_file.at(key).shape, from_memory.at(key).shape) << key;
    EXPECT_EQ(from_file.at(key).f, from_memory.at(key).f) << key;
  }
  EXPECT_EQ(from_file.at("a").f, std::vector<float>(a, a + 6));
  EXPECT_EQ(from_file.at("b").f, (std::vector<float>{1.f, -2.f}));
  // A Linear's weights, asked for transposed: [2, 3] stored, [3, 2] read.
  const zoo::StateDict t = zoo::read_checkpoint(path, {"a"});
  EXPECT_EQ(t.at("a").shape, (Shape{3, 2}));
  EXPECT_EQ(t.at("a").f, (std::vector<float>{a[0], a[3], a[1], a[4], a[2], a[5]}));
  EXPECT_EQ(zoo::read_checkpoint_memory(reinterpret_cast<const std::uint8_t*>(file.data()), file.size(), "m", {"a"}).at("a").f,
            t.at("a").f);
  const std::string cut = file.substr(0, file.size() - 6);  // the header still promises 28 bytes
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(cut.data(), static_cast<std::streamsize>(cut.size()));
  try {
    zoo::read_checkpoint(path);
    ADD_FAILURE() << "a truncated file was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    EXPECT_NE(std::string(e.what()).find("outside the file"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

TEST(Checkpoint, BrokenFilesAreBadInput) {
  expect_bad("", "not a PyTorch checkpoint");
  expect_bad("hello world, not a checkpoint", "not a PyTorch checkpoint");
  expect_bad(std::string("PK\x03\x04", 4) + std::string(40, '\0'), "zip");
  expect_bad(std::string("\x80\x02}q\x00", 5), "truncated");
  // safetensors: offsets outside the data, element count disagreeing with bytes.
  auto st = [](const std::string& header, std::size_t data) { return safetensors(header, std::string(data, '\0')); };
  expect_bad(st(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,160]}})", 16), "outside");
  expect_bad(st(R"({"w":{"dtype":"F32","shape":[5],"data_offsets":[0,16]}})", 16), "has 5 elements, not the 4 of its 16 bytes");
  expect_bad(st(R"({"w":{"dtype":"F32","shape":"x"}})", 16), "shape is not a list");
  expect_bad(st(R"({"w":{"dtype":"F32","shape":[2.5],"data_offsets":[0,16]}})", 16), "shape holds 2.5, not a size");
  expect_bad(st(R"({"w":{"dtype":"F32","data_offsets":[0,16]}})", 16), "safetensors entry");
  const zoo::StateDict ok = read(st(R"({"__metadata__":{},"module.w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})", 16));
  ASSERT_EQ(ok.count("w"), 1u);  // DataParallel's "module." prefix dropped
  EXPECT_EQ(ok.at("w").shape, (Shape{2, 2}));
}

}  // namespace
}  // namespace vinfer
