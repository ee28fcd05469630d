// The general API (Model::run by name) and the image API's buffers on graphs
// that are not image-in, scores-out: outputs whose first dimension is not
// the input's batch, several outputs of several types, unused node outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include "vinfer/engine.hpp"
#include "vinfer/error.hpp"

namespace vinfer {
namespace {

std::vector<float> iota(std::size_t n, float from = -2.5f) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = from + static_cast<float>(i) * 0.5f;
  return v;
}

Tensor f32(Shape s, std::vector<float> v) {
  Tensor t;
  t.shape = std::move(s);
  t.f = std::move(v);
  return t;
}

// x [2, 3] -> Concat(x, x, axis 0) [4, 3]: more rows out than the batch in.
Graph concat_rows() {
  Graph g;
  const int x = g.add_input("x", {2, 3});
  g.mark_output(g.add_node("Concat", {x, x}, {{"axis", std::int64_t{0}}})[0]);
  return g;
}

TEST(GeneralApi, OutputBatchDiffersFromTheInputs) {
  for (const Backend b : {Backend::Cpu, Backend::Reference}) {
    EngineOptions o;
    o.backend = b;
    o.threads = 1;
    Model m = Model::from_graph(concat_rows(), "test", o);
    EXPECT_EQ(m.output_shape(), (Shape{4, 3}));
    const std::vector<float> x = iota(6);
    // Exactly output_size() floats written: a guard after them stays.
    std::vector<float> y(m.output_size() + 1, 42.f);
    m.run(x.data(), y.data());
    EXPECT_EQ(y.back(), 42.f);
    for (std::size_t i = 0; i < 12; ++i) EXPECT_EQ(y[i], x[i % 6]) << i;
    // Item by item needs one output per item: one whole batch only.
    m.run_items(x.data(), 2, y.data());
    EXPECT_EQ(y.back(), 42.f);
    EXPECT_THROW(m.run_items(x.data(), 3, y.data()), Error);
    const std::vector<Tensor> out = m.run({{"x", f32({2, 3}, x)}});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].shape, (Shape{4, 3}));
    EXPECT_EQ(out[0].f, std::vector<float>(y.begin(), y.end() - 1));
  }
}

TEST(GeneralApi, SeveralOutputsOfSeveralTypes) {
  Graph g;
  const int x = g.add_input("x", {2, 3});
  const int zero = g.add_constant("zero", TensorData::f32({}, {0.f}));
  const int pos = g.add_node("Greater", {x, zero})[0];
  const int ints = g.add_node("Cast", {x}, {{"to", std::int64_t{6}}})[0];  // INT32
  const int relu = g.add_node("Relu", {x})[0];
  g.mark_output(relu);
  g.mark_output(pos);
  g.mark_output(ints);
  g.output_types = {ElementType::Float32, ElementType::Bool, ElementType::Int32};
  EngineOptions o;
  o.threads = 1;
  Model m = Model::from_graph(g, "test", o);
  ASSERT_EQ(m.outputs().size(), 3u);
  EXPECT_EQ(m.outputs()[1].type, ElementType::Bool);
  EXPECT_EQ(m.outputs()[2].type, ElementType::Int32);
  const std::vector<float> xv = iota(6);  // -2.5 .. 0
  const std::vector<Tensor> out = m.run({{"x", f32({2, 3}, xv)}});
  ASSERT_EQ(out.size(), 3u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(out[0].f[i], std::max(xv[i], 0.f));
    EXPECT_EQ(out[1].i[i], xv[i] > 0 ? 1 : 0);
    EXPECT_EQ(out[2].i[i], static_cast<std::int64_t>(xv[i]));  // toward zero, as a cast to int32
  }
  // The image API is for one float32 input to one float32 output.
  std::vector<float> y(6);
  EXPECT_THROW(m.run(xv.data(), y.data()), Error);
}

// One float32 input to several float32 outputs (a detector's boxes and a
// segmenter's mask prototypes): compiled by the CPU backend, each output
// in order as the reference computes it, one of them also read inside the
// network; the image API refuses it.
TEST(GeneralApi, SeveralFloatOutputsOnTheCpuBackend) {
  Graph g;
  const int x = g.add_input("x", {1, 8, 6, 6});
  std::vector<float> w(16 * 8 * 9);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = std::sin(static_cast<float>(i)) * 0.2f;
  const int conv = g.add_node("Conv", {x, g.add_constant("w", TensorData::f32({16, 8, 3, 3}, w))}, {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}})[0];
  const int relu = g.add_node("Relu", {conv})[0];
  const int pooled = g.add_node("GlobalAveragePool", {relu})[0];
  g.mark_output(pooled);
  g.mark_output(relu);
  g.mark_output(g.add_node("Sigmoid", {conv})[0]);
  std::vector<std::vector<Tensor>> out;
  for (const Backend b : {Backend::Reference, Backend::Cpu}) {
    EngineOptions o;
    o.backend = b;
    o.threads = 2;
    Model m = Model::from_graph(g, "test", o);
    if (b == Backend::Cpu)
      for (const auto& [node, impl] : m.info().kernels) EXPECT_NE(impl, "vinfer:reference") << node;
    out.push_back(m.run({{"x", f32({1, 8, 6, 6}, iota(288, -3.f))}}));
    std::vector<float> y(m.output_size());
    EXPECT_THROW(m.run(iota(288).data(), y.data()), Error);
  }
  ASSERT_EQ(out[1].size(), 3u);
  for (std::size_t o = 0; o < 3; ++o) {
    ASSERT_EQ(out[1][o].shape, out[0][o].shape) << o;
    for (std::size_t i = 0; i < out[0][o].f.size(); ++i)
      EXPECT_NEAR(out[1][o].f[i], out[0][o].f[i], 1e-5f * (1 + std::abs(out[0][o].f[i]))) << o << " " << i;
  }
}

// TopK (ONNX's node tests of it are opset 24): the k largest or smallest in
// order with their int64 indices, ties to the lower index, NaN above all.
TEST(GeneralApi, TopK) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const bool largest : {true, false}) {
    Graph g;
    const int x = g.add_input("x", {2, 5});
    const int k = g.add_constant("k", TensorData::i64({1}, {3}));
    const std::vector<int> outs = g.add_node("TopK", {x, k}, {{"axis", std::int64_t{-1}}, {"largest", std::int64_t{largest}}}, 2);
    g.mark_output(outs[0]);
    g.mark_output(outs[1]);
    g.output_types = {ElementType::Float32, ElementType::Int64};
    Model m = Model::from_graph(g, "test", {});
    const std::vector<Tensor> out = m.run({{"x", f32({2, 5}, {3, 1, 3, 7, 0, 2, nan, -1, 2, 5})}});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].shape, (Shape{2, 3}));
    EXPECT_EQ(out[1].type, ElementType::Int64);
    const std::vector<std::int64_t> want_i = largest ? std::vector<std::int64_t>{3, 0, 2, 1, 4, 0} : std::vector<std::int64_t>{4, 1, 0, 2, 0, 3};
    EXPECT_EQ(out[1].i, want_i) << (largest ? "largest" : "smallest");
    // row 1 largest: NaN, 5, 2 (the first 2)
    if (largest) {
      EXPECT_TRUE(std::isnan(out[0].f[3]));
      EXPECT_EQ(out[0].f[4], 5.f);
      EXPECT_EQ(out[0].f[5], 2.f);
    } else {
      EXPECT_EQ((std::vector<float>{out[0].f[0], out[0].f[1], out[0].f[2]}), (std::vector<float>{0, 1, 3}));
    }
  }
  // K beyond the axis: one line.
  Graph g;
  const int x = g.add_input("x", {2, 5});
  const std::vector<int> outs = g.add_node("TopK", {x, g.add_constant("k", TensorData::i64({1}, {6}))}, {}, 2);
  g.mark_output(outs[0]);
  EXPECT_THROW(Model::from_graph(g, "test", {}), Error);
}

TEST(GeneralApi, InputsAreCheckedByName) {
  EngineOptions o;
  o.threads = 1;
  Model m = Model::from_graph(concat_rows(), "test", o);
  auto kind = [&](const std::map<std::string, Tensor>& feeds) {
    try {
      m.run(feeds);
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Internal;
  };
  EXPECT_EQ(kind({}), ErrorKind::InvalidArgument);                                      // missing
  EXPECT_EQ(kind({{"x", f32({2, 3}, iota(6))}, {"z", f32({1}, {0})}}), ErrorKind::InvalidArgument);  // unknown
  EXPECT_EQ(kind({{"x", f32({3, 2}, iota(6))}}), ErrorKind::InvalidArgument);           // shape
  EXPECT_EQ(kind({{"x", f32({2, 3}, iota(5))}}), ErrorKind::InvalidArgument);           // values
  Tensor ints;
  ints.type = ElementType::Int64;
  ints.shape = {2, 3};
  ints.i.assign(6, 1);
  EXPECT_EQ(kind({{"x", ints}}), ErrorKind::InvalidArgument);                           // type
}

// A node output that nothing reads (Split's second half) on the CPU backend.
TEST(GeneralApi, UnusedNodeOutput) {
  Graph g;
  const int x = g.add_input("x", {1, 4, 2, 2});
  const std::vector<int> halves = g.add_node("Split", {x}, {{"axis", std::int64_t{1}}}, 2);
  g.mark_output(g.add_node("Relu", {halves[0]})[0]);
  for (const Backend b : {Backend::Cpu, Backend::Reference}) {
    EngineOptions o;
    o.backend = b;
    o.threads = 1;
    Model m = Model::from_graph(g, "test", o);
    const std::vector<float> xv = iota(16);
    std::vector<float> y(m.output_size());
    m.run(xv.data(), y.data());
    ASSERT_EQ(y.size(), 8u);
    for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(y[i], std::max(xv[i], 0.f));
  }
}

// ONNX: a maximum over an empty set is -inf, a sum 0.
TEST(GeneralApi, ReductionsOverEmptySets) {
  for (const char* op : {"ReduceMax", "ReduceSum", "ReduceMin"}) {
    Graph g;
    const int x = g.add_input("x", {2, 0, 3});
    g.mark_output(g.add_node(op, {x}, {{"axes", std::vector<std::int64_t>{1}}, {"keepdims", std::int64_t{0}}})[0]);
    EngineOptions o;
    o.threads = 1;
    Model m = Model::from_graph(g, "test", o);
    const std::vector<Tensor> out = m.run({{"x", f32({2, 0, 3}, {})}});
    ASSERT_EQ(out[0].f.size(), 6u);
    const float want = std::string(op) == "ReduceMax" ? -INFINITY : std::string(op) == "ReduceMin" ? INFINITY : 0.f;
    for (float v : out[0].f) EXPECT_EQ(v, want) << op;
  }
}

// Training mode's answer is random: refused, not run as inference.
TEST(GeneralApi, DropoutInTrainingModeIsRefused) {
  Graph g;
  const int x = g.add_input("x", {1, 4});
  const int ratio = g.add_constant("ratio", TensorData::f32({}, {0.5f}));
  const int train = g.add_constant("train", TensorData::i64({}, {1}));
  g.mark_output(g.add_node("Dropout", {x, ratio, train})[0]);
  try {
    Model::from_graph(g, "test", {});
    FAIL() << "ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
  }
}

// Symbolic dimensions fixed by name.
TEST(GeneralApi, InputShapesByName) {
  Graph g;
  const int x = g.add_input("x", {-1, 3});
  g.mark_output(g.add_node("Concat", {x, x}, {{"axis", std::int64_t{0}}})[0]);
  EngineOptions o;
  o.threads = 1;
  o.input_shapes = {{"x", {5, 3}}};
  Model m = Model::from_graph(g, "test", o);
  EXPECT_EQ(m.inputs()[0].shape, (Shape{5, 3}));
  EXPECT_EQ(m.inputs()[0].file_shape, (Shape{-1, 3}));
  EXPECT_EQ(m.outputs()[0].shape, (Shape{10, 3}));
  o.input_shapes = {{"x", {5, 4}}};  // a fixed dimension differs
  EXPECT_THROW(Model::from_graph(g, "test", o), Error);
  o.input_shapes = {{"y", {5, 3}}};  // no such input
  EXPECT_THROW(Model::from_graph(g, "test", o), Error);
}

}  // namespace
}  // namespace vinfer
