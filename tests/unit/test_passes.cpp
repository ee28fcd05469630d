// Each graph pass on a small graph: what it rewrites, and that the rewritten
// graph still means the same (reference evaluation before and after).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "graph/activation.hpp"
#include "graph/op_registry.hpp"
#include "graph/passes.hpp"
#include "graph/reference.hpp"
#include "graph/shape.hpp"
#include "backend/concat_views.hpp"
#include "backend/memory_plan.hpp"
#include "test_support.hpp"
#include "vinfer/engine.hpp"
#include "vinfer/error.hpp"

namespace vinfer::detail {
namespace {

using Ints = std::vector<std::int64_t>;

// Reference output of a graph, with or without the passes (so the pass's rewrite is what is checked).
std::vector<float> evaluate(const Graph& g, bool optimize) {
  EngineOptions o;
  o.backend = Backend::Reference;
  o.optimize = optimize;
  Model m = Model::from_graph(g, "test", o);
  const TensorData x = test::random_tensor(m.input_shape(), 7);
  std::vector<float> y(m.output_size());
  m.run(x.f.data(), y.data());
  return y;
}

void expect_same_meaning(const Graph& g) {
  const std::vector<float> a = evaluate(g, false), b = evaluate(g, true);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5f * (1.f + std::fabs(a[i]))) << i;
}

int count(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op == op;
  return n;
}

int add_bn(Graph& g, int x, std::int64_t c, unsigned seed) {
  return g.add_node("BatchNormalization", {x, g.add_constant("g", test::random_tensor({c}, seed, 0.5f, 1.5f)), g.add_constant("b", test::random_tensor({c}, seed + 1)),
                                           g.add_constant("m", test::random_tensor({c}, seed + 2)), g.add_constant("v", test::random_tensor({c}, seed + 3, 0.5f, 1.5f))},
                    {{"epsilon", 1e-3f}})[0];
}

TEST(Passes, FoldConstantsRemovesShapeArithmetic) {
  // x.view(x.size(0), -1) as old exporters write it: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
  Graph g;
  const int x = g.add_input("x", {1, 4, 3, 3});
  const int shape = g.add_node("Shape", {x})[0];
  const int idx = g.add_constant("i", TensorData::i64({}, {0}));
  const int n = g.add_node("Gather", {shape, idx}, {{"axis", std::int64_t{0}}})[0];
  const int u = g.add_node("Unsqueeze", {n}, {{"axes", Ints{0}}})[0];
  const int minus1 = g.add_constant("m1", TensorData::i64({1}, {-1}));
  const int spec = g.add_node("Concat", {u, minus1}, {{"axis", std::int64_t{0}}})[0];
  g.mark_output(g.add_node("Reshape", {x, spec})[0]);
  Graph h = g;
  EXPECT_EQ(fold_constants(h, GraphLimits{}), 4);
  ASSERT_EQ(h.nodes.size(), 1u);
  EXPECT_EQ(h.nodes[0].op, "Reshape");
  EXPECT_EQ(h.value(h.outputs[0]).shape, (Shape{1, 36}));
  expect_same_meaning(g);
}

// ViT's class-token arithmetic as torch's exporter writes it (Equal, Where,
// Expand, Mod, Sqrt on shapes) folds away entirely; each operator's reference
// against values worked by hand.
TEST(Passes, FoldConstantsEvaluatesComparisonsAndSelections) {
  Graph g;
  const int x = g.add_input("x", {1, 2, 3});
  const int shape = g.add_node("Shape", {x})[0];                                  // [1, 2, 3]
  const int ones = g.add_constant("ones", TensorData::i64({3}, {1, 1, 1}));
  const int eq = g.add_node("Equal", {shape, ones})[0];                           // [1, 0, 0]
  const int minus = g.add_constant("m1", TensorData::i64({3}, {-1, -1, -1}));
  const int sel = g.add_node("Where", {eq, minus, shape})[0];                     // [-1, 2, 3]
  const int seven = g.add_constant("seven", TensorData::i64({}, {7}));
  const int mod = g.add_node("Mod", {seven, sel})[0];                             // [7 % -1, 7 % 2, 7 % 3] = [0, 1, 1]
  const int f = g.add_node("Cast", {mod}, {{"to", std::int64_t{1}}})[0];
  const int root = g.add_node("Sqrt", {g.add_node("Add", {f, g.add_constant("three", TensorData::f32({}, {3.f}))})[0]})[0];  // [sqrt3, 2, 2]
  const int tok = g.add_constant("tok", TensorData::f32({1, 1, 3}, {1.f, 2.f, 3.f}));
  const int big = g.add_node("Expand", {tok, g.add_constant("to", TensorData::i64({3}, {1, 2, 3}))})[0];
  const int scaled = g.add_node("Mul", {big, root})[0];  // [1, 2, 3] x [sqrt3, 2, 2] per row
  g.mark_output(g.add_node("Add", {x, scaled})[0]);
  Graph h = g;
  fold_constants(h, GraphLimits{});
  ASSERT_EQ(h.nodes.size(), 1u);
  const TensorData* c = h.constant(h.nodes[0].inputs[1]);
  ASSERT_NE(c, nullptr);
  const float s3 = std::sqrt(3.f);
  EXPECT_EQ(c->f, (std::vector<float>{s3, 4.f, 6.f, s3, 4.f, 6.f}));
  expect_same_meaning(g);
}

// Range, ScatterND, the reductions and a Cast to bool, folded, against
// values worked by hand; an Expand that its reader would broadcast anyway
// is dropped.
TEST(Passes, FoldRangeScatterAndReductions) {
  Graph g;
  const int x = g.add_input("x", {2, 3});
  const int r = g.add_node("Range", {g.add_constant("a", TensorData::f32({}, {1.f})), g.add_constant("b", TensorData::f32({}, {7.f})),
                                     g.add_constant("d", TensorData::f32({}, {2.5f}))})[0];  // [1, 3.5, 6]
  const int base = g.add_constant("base", TensorData::f32({2, 3}, {0, 0, 0, 0, 0, 0}));
  const int sc = g.add_node("ScatterND", {base, g.add_constant("i", TensorData::i64({1, 1}, {1})), g.add_node("Reshape", {r, g.add_constant("s", TensorData::i64({2}, {1, 3}))})[0]})[0];
  const int l2 = g.add_node("ReduceL2", {sc}, {{"axes", Ints{1}}, {"keepdims", std::int64_t{1}}})[0];  // [0, sqrt(49.25)]
  const int mx = g.add_node("ReduceMax", {sc}, {{"axes", Ints{0}}, {"keepdims", std::int64_t{0}}})[0];  // [1, 3.5, 6]
  const int flag = g.add_node("Cast", {g.add_node("Cast", {mx}, {{"to", std::int64_t{9}}})[0]}, {{"to", std::int64_t{1}}})[0];  // [1, 1, 1]
  const int sum = g.add_node("Add", {g.add_node("Mul", {l2, flag})[0], sc})[0];
  const int wide = g.add_node("Expand", {x, g.add_constant("to", TensorData::i64({2}, {2, 3}))})[0];
  g.mark_output(g.add_node("Add", {wide, sum})[0]);
  Graph h = g;
  fold_constants(h, GraphLimits{});
  ASSERT_EQ(h.nodes.size(), 2u);
  const TensorData* c = h.constant(h.nodes[1].inputs[1]);
  ASSERT_NE(c, nullptr);
  const float n = std::sqrt(49.25f);
  const std::vector<float> want{0, 0, 0, n + 1, n + 3.5f, n + 6};
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(c->f[i], want[i], 1e-6f) << i;
  EXPECT_EQ(remove_broadcast_expands(h), 1);
  expect_same_meaning(g);
  // GatherND by hand: rows (1, 2) and (0, 1) of [[0, 1, 2], [3, 4, 5]] -> 5, 1; split 3 = 2 + 1.
  Graph k;
  const int z = k.add_input("z", {2});
  const int data = k.add_constant("d", TensorData::f32({2, 3}, {0, 1, 2, 3, 4, 5}));
  const int picked = k.add_node("GatherND", {data, k.add_constant("i", TensorData::i64({2, 2}, {1, 2, 0, 1}))})[0];
  const std::vector<int> parts = k.add_node("Split", {k.add_constant("r", TensorData::f32({3}, {7, 8, 9}))}, {{"num_outputs", std::int64_t{2}}}, 2);
  k.mark_output(k.add_node("Add", {k.add_node("Add", {z, picked})[0], parts[0]})[0]);
  fold_constants(k, GraphLimits{});
  ASSERT_EQ(k.nodes.size(), 2u);
  EXPECT_EQ(k.constant(k.nodes[0].inputs[1])->f, (std::vector<float>{5, 1}));
  EXPECT_EQ(k.constant(k.nodes[1].inputs[1])->f, (std::vector<float>{7, 8}));
}

// Einsum: the reference against MatMul on the same operands, and the two
// batched products MaxViT writes lowered to MatMul; another form (a
// contraction over two letters) keeps the reference.
TEST(Passes, EinsumToMatMul) {
  struct Case {
    const char* eq;
    Shape a, b;
    int lowered;
  };
  for (const Case& c : {Case{"b g h i d, b g h j d -> b g h i j", {1, 2, 3, 4, 5}, {1, 2, 3, 6, 5}, 1},
                        Case{"bghij,bghjd->bghid", {1, 2, 3, 4, 6}, {1, 2, 3, 6, 5}, 1},
                        Case{"ij,ij->i", {3, 4}, {3, 4}, 0}}) {
    Graph g;
    const int x = g.add_input("x", c.a);
    g.mark_output(g.add_node("Einsum", {x, g.add_constant("w", test::random_tensor(c.b, 5))}, {{"equation", std::string(c.eq)}})[0]);
    Graph h = g;
    EXPECT_EQ(einsum_to_matmul(h), c.lowered) << c.eq;
    expect_same_meaning(g);
  }
  // The reference by hand: "ij,jk->ik" of [[1,2,3],[4,5,6]] and rows (1,0), (0,1), (1,1).
  Graph g;
  const int x = g.add_input("x", {2, 3});
  g.mark_output(g.add_node("Einsum", {x, g.add_constant("w", TensorData::f32({3, 2}, {1, 0, 0, 1, 1, 1}))},
                           {{"equation", std::string("ij,jk->ik")}})[0]);
  EngineOptions o;
  o.backend = Backend::Reference;
  o.optimize = false;
  Model m = Model::from_graph(g, "test", o);
  const float in[6] = {1, 2, 3, 4, 5, 6};
  std::vector<float> y(4);
  m.run(in, y.data());
  EXPECT_EQ(y, (std::vector<float>{4, 5, 10, 11}));
}

// x * HardSigmoid(x) with PyTorch's 1/6 and 1/2 (HardSwish before opset 14)
// becomes a HardSwish post-op of the Conv; other parameters do not.
TEST(Passes, FuseHardSwishPair) {
  for (const float alpha : {1.f / 6, 0.2f}) {
    Graph g;
    const int x = g.add_input("x", {1, 8, 5, 5});
    const int c = g.add_node("Conv", {x, g.add_constant("w", test::random_tensor({24, 8, 1, 1}, 2))})[0];
    const int h = g.add_node("HardSigmoid", {c}, {{"alpha", alpha}, {"beta", 0.5f}})[0];
    g.mark_output(g.add_node("Mul", {c, h})[0]);
    Graph f = g;
    fold_constants(f, GraphLimits{});
    EXPECT_EQ(fuse_activations(f), alpha == 0.2f ? 0 : 1) << alpha;
    if (alpha != 0.2f) {
      ASSERT_EQ(f.nodes.size(), 1u);
      EXPECT_EQ(f.nodes[0].post_ops.at(0).kind, PostOp::HardSwish);
    }
    expect_same_meaning(g);
  }
}

// GELU spelled with Erf (both ways exporters write it) becomes one Gelu
// fused into the MatMul before it, which also takes the bias Add.
TEST(Passes, FuseGeluAndMatMulBias) {
  for (const bool by_mul : {false, true}) {
    Graph g;
    const int x = g.add_input("x", {1, 4, 6});
    const int w = g.add_constant("w", test::random_tensor({6, 5}, 3));
    const int mm = g.add_node("MatMul", {x, w})[0];
    const int y = g.add_node("Add", {g.add_constant("b", test::random_tensor({5}, 4)), mm})[0];
    const int scaled = by_mul ? g.add_node("Mul", {y, g.add_constant("r", TensorData::f32({}, {0.70710678f}))})[0]
                              : g.add_node("Div", {y, g.add_constant("r", TensorData::f32({}, {1.4142135f}))})[0];
    const int e = g.add_node("Erf", {scaled})[0];
    const int one = g.add_node("Add", {e, g.add_constant("one", TensorData::f32({}, {1.f}))})[0];
    const int m = g.add_node("Mul", {y, one})[0];
    g.mark_output(g.add_node("Mul", {m, g.add_constant("half", TensorData::f32({}, {0.5f}))})[0]);
    Graph h = g;
    fold_constants(h, GraphLimits{});
    EXPECT_EQ(fuse_gelu(h), 1);
    EXPECT_EQ(fuse_matmul_bias(h), 1);
    EXPECT_EQ(fuse_activations(h), 1);
    ASSERT_EQ(h.nodes.size(), 1u);
    EXPECT_EQ(h.nodes[0].op, "MatMul");
    EXPECT_EQ(h.nodes[0].inputs.size(), 3u);
    ASSERT_EQ(h.nodes[0].post_ops.size(), 1u);
    EXPECT_EQ(h.nodes[0].post_ops[0].kind, PostOp::Gelu);
    expect_same_meaning(g);
  }
  // Not GELU: the Erf's input is read elsewhere too.
  Graph g;
  const int x = g.add_input("x", {1, 6});
  const int d = g.add_node("Div", {x, g.add_constant("r", TensorData::f32({}, {1.4142135f}))})[0];
  const int e = g.add_node("Erf", {d})[0];
  const int one = g.add_node("Add", {e, g.add_constant("one", TensorData::f32({}, {1.f}))})[0];
  const int m = g.add_node("Mul", {x, one})[0];
  const int half = g.add_node("Mul", {m, g.add_constant("half", TensorData::f32({}, {0.5f}))})[0];
  g.mark_output(g.add_node("Add", {half, d})[0]);
  EXPECT_EQ(fuse_gelu(g), 0);
}

// What torch's dynamo exporter writes without its optimizer: CastLike (a
// constant cast to the type of the tensor it meets) and Max / Min, folded
// where their inputs are constants, against values worked by hand; a Max of
// the network's input runs (on the CPU: the reference kernel), a NaN wins.
TEST(Passes, FoldCastLikeMaxMin) {
  Graph g;
  const int x = g.add_input("x", {2, 3});
  const int c = g.add_node("CastLike", {g.add_constant("c", TensorData::i64({3}, {1, 2, 3})), x})[0];  // [1, 2, 3] as float32
  const int lo = g.add_node("Min", {g.add_constant("a", TensorData::i64({2, 1}, {4, -1})),
                                    g.add_constant("b", TensorData::i64({2, 1}, {2, 7}))})[0];  // [[2], [-1]]
  const int big = g.add_node("Max", {g.add_constant("one", TensorData::i64({}, {1}))})[0];      // one operand: itself
  const int shift = g.add_node("CastLike", {g.add_node("Mul", {lo, big})[0], x})[0];
  const int m = g.add_node("Max", {x, c, g.add_constant("h", TensorData::f32({}, {1.5f}))})[0];
  g.mark_output(g.add_node("Add", {m, shift})[0]);
  Graph h = g;
  fold_constants(h, GraphLimits{});
  EXPECT_EQ(count(h, "CastLike") + count(h, "Min"), 0);
  EXPECT_EQ(count(h, "Max"), 1);
  Graph n;
  n.add_input("x", {3});
  n.mark_output(n.add_node("Max", {n.add_constant("n", TensorData::f32({3}, {NAN, 1.f, -2.f})),
                                   n.add_constant("m", TensorData::f32({3}, {0.f, 2.f, NAN}))})[0]);
  fold_constants(n, GraphLimits{});
  const TensorData* folded = n.constant(n.outputs[0]);
  ASSERT_NE(folded, nullptr);
  EXPECT_TRUE(std::isnan(folded->f[0]) && folded->f[1] == 2.f && std::isnan(folded->f[2]));
  Model model = Model::from_graph(g, "test", EngineOptions{});
  const std::vector<float> in{0.f, 5.f, -1.f, 2.5f, 1.f, 4.f};
  std::vector<float> out(model.output_size());
  model.run(in.data(), out.data());
  // max(x, [1, 2, 3], 1.5) + [[2], [-1]]
  EXPECT_EQ(std::vector<float>(out.begin(), out.begin() + 6), (std::vector<float>{3.5f, 7.f, 5.f, 1.5f, 1.f, 3.f}));
  expect_same_meaning(g);
}

// Attention as torch writes it (4-D, as many key as query heads, Y only)
// becomes Mul, Transpose, Mul, MatMul, Softmax, MatMul with the same
// meaning; causal, masked or grouped ones stay.
TEST(Passes, AttentionToMatMul) {
  struct Case {
    const char* what;
    std::int64_t kv_heads;
    bool causal, lowered;
  };
  for (const Case& c : {Case{"plain", 2, false, true}, Case{"causal", 2, true, false}, Case{"grouped", 1, false, false}}) {
    Graph g;
    const int x = g.add_input("x", {1, 2, 5, 4});
    const int k = g.add_node("Mul", {x, g.add_constant("ck", test::random_tensor({1, 2, 1, 4}, 3))})[0];
    const int v = g.add_node("Mul", {x, g.add_constant("cv", test::random_tensor({1, 2, 1, 4}, 4))})[0];
    const int kk = c.kv_heads == 2 ? k : g.add_node("ReduceMean", {k}, {{"axes", Ints{1}}, {"keepdims", std::int64_t{1}}})[0];
    const int vv = c.kv_heads == 2 ? v : g.add_node("ReduceMean", {v}, {{"axes", Ints{1}}, {"keepdims", std::int64_t{1}}})[0];
    std::map<std::string, AttrValue> attrs{{"is_causal", std::int64_t{c.causal}}};
    if (c.lowered) attrs["scale"] = 0.7f;
    g.mark_output(g.add_node("Attention", {x, kk, vv}, attrs)[0]);
    Graph h = g;
    fold_constants(h, GraphLimits{});
    EXPECT_EQ(attention_to_matmul(h), c.lowered ? 1 : 0) << c.what;
    EXPECT_EQ(count(h, "Attention"), c.lowered ? 0 : 1) << c.what;
    EXPECT_EQ(count(h, "MatMul"), c.lowered ? 2 : 0) << c.what;
    expect_same_meaning(g);
  }
}

// ReduceMean over H and W keeping the dimensions (axes as an attribute, or
// an input from opset 18, negative or not) is a GlobalAveragePool; other
// axes, or the dimensions dropped, stay ReduceMean.
TEST(Passes, SpatialMeanIsGlobalAveragePool) {
  struct Case {
    Ints axes;
    bool axes_input;
    std::int64_t keepdims;
    bool pool;
  };
  for (const Case& c : {Case{{2, 3}, false, 1, true}, Case{{-1, -2}, true, 1, true}, Case{{3, 2}, true, 1, true},
                        Case{{2, 3}, true, 0, false}, Case{{1, 2}, false, 1, false}, Case{{3}, true, 1, false}}) {
    Graph g;
    const int x = g.add_input("x", {2, 3, 4, 5});
    const int m = c.axes_input ? g.add_node("ReduceMean", {x, g.add_constant("axes", TensorData::i64({static_cast<std::int64_t>(c.axes.size())}, c.axes))},
                                            {{"keepdims", c.keepdims}})[0]
                               : g.add_node("ReduceMean", {x}, {{"axes", c.axes}, {"keepdims", c.keepdims}})[0];
    g.mark_output(g.add_node("Relu", {m})[0]);
    Graph h = g;
    fold_constants(h, GraphLimits{});
    EXPECT_EQ(spatial_mean_to_global_pool(h), c.pool ? 1 : 0) << c.axes[0];
    EXPECT_EQ(count(h, "GlobalAveragePool"), c.pool ? 1 : 0);
    EXPECT_EQ(count(h, "ReduceMean"), c.pool ? 0 : 1);
    expect_same_meaning(g);
  }
}

TEST(Passes, FoldBatchNormIntoConv) {
  Graph g;
  const int x = g.add_input("x", {1, 8, 6, 6});
  const int c = g.add_node("Conv", {x, g.add_constant("w", test::random_tensor({16, 8, 3, 3}, 1))})[0];
  g.mark_output(add_bn(g, c, 16, 10));
  Graph h = g;
  fold_constants(h, GraphLimits{});
  EXPECT_EQ(fold_batchnorm(h), 1);
  EXPECT_EQ(count(h, "BatchNormalization"), 0);
  EXPECT_EQ(h.nodes[0].inputs.size(), 3u);  // gained a bias
  expect_same_meaning(g);
}

TEST(Passes, BatchNormNotFoldedWhenConvResultIsShared) {
  Graph g;
  const int x = g.add_input("x", {1, 8, 6, 6});
  const int c = g.add_node("Conv", {x, g.add_constant("w", test::random_tensor({8, 8, 1, 1}, 1))})[0];
  const int bn = add_bn(g, c, 8, 10);
  g.mark_output(g.add_node("Add", {bn, c})[0]);
  Graph h = g;
  fold_constants(h, GraphLimits{});
  EXPECT_EQ(fold_batchnorm(h), 0);
  EXPECT_EQ(batchnorm_to_scale_shift(h), 1);
  EXPECT_EQ(count(h, "vinfer.ScaleShift"), 1);
  expect_same_meaning(g);
}

TEST(Passes, FuseActivations) {
  Graph g;
  const int x = g.add_input("x", {1, 8, 5, 5});
  const int c1 = g.add_node("Conv", {x, g.add_constant("w1", test::random_tensor({8, 8, 1, 1}, 1))})[0];
  const int r = g.add_node("Relu", {c1})[0];
  const int c2 = g.add_node("Conv", {r, g.add_constant("w2", test::random_tensor({8, 8, 1, 1}, 2))})[0];
  const int s = g.add_node("Sigmoid", {c2})[0];
  const int sw = g.add_node("Mul", {s, c2})[0];  // SiLU, operands either way round
  const int c3 = g.add_node("Conv", {sw, g.add_constant("w3", test::random_tensor({8, 8, 1, 1}, 3))})[0];
  const int keep = g.add_node("Relu", {c3})[0];
  g.mark_output(g.add_node("Add", {keep, c3})[0]);  // c3 has two readers: its Relu must stay
  Graph h = g;
  fold_constants(h, GraphLimits{});
  EXPECT_EQ(fuse_activations(h), 2);
  ASSERT_EQ(h.nodes[0].post_ops.size(), 1u);
  EXPECT_EQ(h.nodes[0].post_ops[0].kind, PostOp::Relu);
  EXPECT_EQ(h.nodes[1].post_ops[0].kind, PostOp::Swish);
  EXPECT_EQ(count(h, "Relu"), 1);
  EXPECT_EQ(count(h, "Mul"), 0);
  expect_same_meaning(g);
}

TEST(Passes, FuseResidualAddOnlyWhenTheOtherOperandIsReady) {
  Graph g;
  const int x = g.add_input("x", {1, 8, 5, 5});
  const int a = g.add_node("Conv", {x, g.add_constant("wa", test::random_tensor({8, 8, 3, 3}, 1))}, {{"pads", Ints{1, 1, 1, 1}}})[0];
  const int b = g.add_node("Conv", {x, g.add_constant("wb", test::random_tensor({8, 8, 1, 1}, 2))})[0];
  // a runs before b exists: the Sum goes on b (the later Conv), not on a.
  const int sum = g.add_node("Add", {a, b})[0];
  g.mark_output(g.add_node("Relu", {sum})[0]);
  Graph h = g;
  fold_constants(h, GraphLimits{});
  EXPECT_EQ(fuse_residual_add(h), 1);
  ASSERT_EQ(h.nodes[1].post_ops.size(), 1u);
  EXPECT_EQ(h.nodes[1].post_ops[0].kind, PostOp::Sum);
  EXPECT_EQ(h.nodes[1].post_ops[0].sum_input, a);
  EXPECT_EQ(fuse_activations(h), 1);
  EXPECT_EQ(h.nodes.size(), 2u);
  expect_same_meaning(g);
}

// DenseNet's transition: BatchNorm -> Relu -> Conv1x1 -> AveragePool 2x2.
// The pool moves before the convolution only where both commute exactly.
TEST(Passes, PoolBeforeConv1x1OnlyWhereTheyCommute) {
  auto transition = [](Ints kernel, Ints strides, std::int64_t hw, bool relu_after_conv, bool shared, bool bias) {
    Graph g;
    const int x = g.add_input("x", {1, 8, hw, hw});
    const int r = g.add_node("Relu", {add_bn(g, x, 8, 10)})[0];
    std::vector<int> in = {r, g.add_constant("w", test::random_tensor({16, 8, 1, 1}, 1))};
    if (bias) in.push_back(g.add_constant("b", test::random_tensor({16}, 2)));
    int c = g.add_node("Conv", in)[0];
    if (relu_after_conv) c = g.add_node("Relu", {c})[0];
    const int p = g.add_node("AveragePool", {c}, {{"kernel_shape", kernel}, {"strides", strides}})[0];
    g.mark_output(p);
    if (shared) g.mark_output(c);
    return g;
  };
  struct Case {
    const char* what;
    Graph g;
    int moved;
  };
  const std::vector<Case> cases = {
      {"transition", transition({2, 2}, {2, 2}, 8, false, false, false), 1},
      {"with a bias", transition({3, 3}, {3, 3}, 9, false, false, true), 1},
      {"a Relu after the conv", transition({2, 2}, {2, 2}, 8, true, false, false), 0},
      {"overlapping windows", transition({3, 3}, {2, 2}, 9, false, false, false), 0},
      {"a map the windows do not tile", transition({2, 2}, {2, 2}, 7, false, false, false), 0},
      {"the conv's result also read", transition({2, 2}, {2, 2}, 8, false, true, false), 0},
  };
  for (const Case& c : cases) {
    Graph h = c.g;
    std::vector<std::string> log;
    optimize(h, GraphLimits{}, true, &log);
    EXPECT_NE(std::find(log.begin(), log.end(), "pool_before_conv1x1: " + std::to_string(c.moved)), log.end()) << c.what;
    if (c.moved) {
      ASSERT_GE(h.nodes.size(), 2u) << c.what;
      EXPECT_EQ(h.nodes[h.nodes.size() - 2].op, "AveragePool") << c.what;
      EXPECT_EQ(h.nodes.back().op, "Conv") << c.what;
    }
    if (c.g.outputs.size() == 1) expect_same_meaning(c.g);
  }
}

// A per-channel scale after a MatMul (and its bias), directly or after the
// NHWC -> NCHW Transpose (ConvNeXt's layer scale), goes into the weights; a
// scale along another axis stays.
TEST(Passes, FoldScaleIntoMatMul) {
  struct Case {
    bool transpose;
    Shape scale;
    int folded;
  };
  for (const Case& c : {Case{true, {12, 1, 1}, 1}, Case{false, {12}, 1}, Case{false, {1, 1, 1, 12}, 1}, Case{true, {1, 5, 1}, 0},
                        Case{false, {6, 1}, 0}}) {
    Graph g;
    const int x = g.add_input("x", {2, 5, 6, 8});
    int y = g.add_node("MatMul", {x, g.add_constant("w", test::random_tensor({8, 12}, 1))})[0];
    y = g.add_node("Add", {y, g.add_constant("b", test::random_tensor({12}, 2))})[0];
    if (c.transpose) y = g.add_node("Transpose", {y}, {{"perm", Ints{0, 3, 1, 2}}})[0];
    const Shape scale = c.scale[0] == 6 ? Shape{6, 1} : c.scale;  // (6 x 1: along the width of [2, 5, 6, 12])
    g.mark_output(g.add_node("Mul", {g.add_constant("s", test::random_tensor(scale, 3, 0.5f, 2.f)), y})[0]);
    Graph f = g;
    fold_constants(f, GraphLimits{});
    EXPECT_EQ(fuse_matmul_bias(f), 1);
    EXPECT_EQ(fold_scale_into_matmul(f), c.folded) << shape_str(scale);
    EXPECT_EQ(count(f, "Mul"), 1 - c.folded);
    expect_same_meaning(g);
  }
}

// The channel shuffle becomes gathers of the Concat's inputs: one for the
// whole shuffled tensor (its ReLU reads it) and one per Slice or Split
// part; the Concat, reshapes, Transpose, Slices and Split are gone. Two and
// three groups, channel counts that are no multiple of a vector.
TEST(Passes, FuseChannelShuffle) {
  for (const bool split : {false, true})
  for (const auto& [shape, groups] : {std::pair<Shape, std::int64_t>{{2, 24, 5, 7}, 2}, {{1, 48, 3, 4}, 3}}) {
    const Graph g = test::channel_shuffle_graph(shape, groups, split);
    Graph f = g;
    fold_constants(f, GraphLimits{});
    EXPECT_EQ(fuse_channel_shuffle(f), 3);
    remove_dead_nodes(f);
    EXPECT_EQ(count(f, "vinfer.ChannelGather"), 3);
    EXPECT_EQ(count(f, "Transpose") + count(f, "Reshape") + count(f, "Slice") + count(f, "Split"), 0);
    EXPECT_EQ(count(f, "Concat"), 1);  // the one after the split (a conv's output and a gather's)
    for (const Node& n : f.nodes)
      if (n.op == "vinfer.ChannelGather") EXPECT_EQ(n.inputs.size(), 2u) << n.label();  // the branches, not their Concat
    expect_same_meaning(g);
  }
  // A Transpose of other axes, or a Slice of the pixels, is left alone.
  Graph g = test::channel_shuffle_graph({1, 16, 4, 4}, 2);
  for (Node& n : g.nodes)
    if (n.op == "Transpose") n.attrs["perm"] = std::vector<std::int64_t>{0, 1, 2, 4, 3};
  fold_constants(g, GraphLimits{});
  EXPECT_EQ(fuse_channel_shuffle(g), 0);
}

TEST(Passes, RemoveIdentitiesZeroPadsAndDeadNodes) {
  Graph g;
  const int x = g.add_input("x", {1, 8, 4, 4});
  const int i = g.add_node("Identity", {x})[0];
  const int d = g.add_node("Dropout", {i})[0];
  const int p0 = g.add_node("Pad", {d, g.add_constant("zeros", TensorData::i64({8}, {0, 0, 0, 0, 0, 0, 0, 0}))})[0];
  const int p1 = g.add_node("Pad", {p0, g.add_constant("p", TensorData::i64({8}, {0, 0, 1, 1, 0, 0, 1, 1}))})[0];
  const int c = g.add_node("Conv", {p1, g.add_constant("w", test::random_tensor({8, 8, 3, 3}, 1))})[0];
  g.add_node("Relu", {x});  // nobody reads it
  g.mark_output(c);
  Graph h = g;
  fold_constants(h, GraphLimits{});
  EXPECT_EQ(remove_identities(h), 3);
  EXPECT_EQ(fold_pad(h), 1);
  EXPECT_EQ(h.nodes.size(), 2u);
  EXPECT_EQ(remove_dead_nodes(h), 1);
  ASSERT_EQ(h.nodes.size(), 1u);
  EXPECT_EQ(h.nodes[0].get_ints("pads"), (Ints{1, 1, 1, 1}));
  expect_same_meaning(g);
}

TEST(MemoryPlan, ReusesMemoryOnlyAcrossDisjointLifetimes) {
  std::vector<PlanBuffer> b(4);
  b[0] = {1000, -1, 0, 0, 1};
  b[1] = {1000, -1, 0, 1, 2};  // overlaps 0 at step 1
  b[2] = {1000, -1, 0, 2, 3};  // overlaps 1, not 0: may take 0's place
  b[3] = {100, 2, 512, 2, 3};  // a view inside 2
  const MemoryPlan p = plan_memory(b);
  EXPECT_NE(p.address[0], p.address[1]);
  EXPECT_NE(p.address[1], p.address[2]);
  EXPECT_EQ(p.address[2], p.address[0]);
  EXPECT_EQ(p.address[3], p.address[2] + 512);
  EXPECT_EQ(p.arena_bytes, 2048);  // two 1000-byte buffers, 64-byte aligned
  EXPECT_EQ(p.naive_bytes, 3 * 1024);
}

TEST(ConcatViews, SharedInputAtDifferentOffsetsIsCopied) {
  // cat(a, b) and cat(b, a): b cannot sit at two places; one Concat stays a copy.
  Graph g;
  const int x = g.add_input("x", {1, 8, 2, 2});
  const int a = g.add_node("Relu", {x})[0];
  const int b = g.add_node("Sigmoid", {x})[0];
  const int c1 = g.add_node("Concat", {a, b}, {{"axis", std::int64_t{1}}})[0];
  const int c2 = g.add_node("Concat", {b, a}, {{"axis", std::int64_t{1}}})[0];
  g.mark_output(g.add_node("Add", {c1, c2})[0]);
  infer_shapes(g);
  const ConcatViews v = plan_concat_views(g, [](int) { return true; }, [&](int id) { return numel(g.value(id).shape) * 4; });
  EXPECT_EQ(v.count, 1);
  EXPECT_TRUE(v.node_is_view[3] != v.node_is_view[2]);
}

// The registry: every operator with its shape rule and reference, the
// activations among them, unknown names refused by the importer's check.
TEST(OpRegistry, EveryOperatorHasItsRules) {
  const std::vector<std::string> ops = registered_ops();
  EXPECT_GE(ops.size(), 60u);
  for (const std::string& name : ops) {
    const OpDef* d = find_op(name);
    ASSERT_NE(d, nullptr) << name;
    EXPECT_EQ(d->name, name);
    EXPECT_NE(d->shape, nullptr) << name;
    EXPECT_NE(d->reference, nullptr) << name;
    EXPECT_TRUE(is_supported_op(name)) << name;
  }
  for (const std::string& act : activation_ops()) EXPECT_NE(find_op(act), nullptr) << act;
  for (const char* name : {"Conv", "MatMul", "LayerNormalization", "Gather", "vinfer.ScaleShift"}) EXPECT_NE(find_op(name), nullptr) << name;
  EXPECT_EQ(find_op("NonMaxSuppression"), nullptr);
  EXPECT_EQ(find_op("conv"), nullptr);  // names are case-sensitive, as ONNX's
  EXPECT_FALSE(is_supported_op("com.example.Conv"));
  EXPECT_EQ(find_op("Conv")->types, OpDef::AllFloat);
  EXPECT_EQ(find_op("Shape")->types, OpDef::Any);
}

// Each operator's ONNX form: opset-dependent attributes made explicit, training mode refused.
TEST(OpRegistry, OnnxFormsNormalizedByTheOperator) {
  Node softmax;
  softmax.op = "Softmax";
  find_op("Softmax")->from_onnx(softmax, 11);
  EXPECT_EQ(softmax.get_int("axis", -7), 1);
  EXPECT_EQ(softmax.get_int("vinfer.opset", 0), 11);
  Node softmax13;
  softmax13.op = "Softmax";
  find_op("Softmax")->from_onnx(softmax13, 13);
  EXPECT_EQ(softmax13.get_int("axis", -7), -1);
  EXPECT_FALSE(softmax13.has("vinfer.opset"));

  Node constant;
  constant.op = "Constant";
  constant.attrs["value_ints"] = std::vector<std::int64_t>{3, 4};
  find_op("Constant")->from_onnx(constant, 17);
  const TensorData& v = std::get<TensorData>(constant.attrs.at("value"));
  EXPECT_EQ(v.dtype, DType::I64);
  EXPECT_EQ(v.shape, (Shape{2}));
  EXPECT_EQ(v.i, (std::vector<std::int64_t>{3, 4}));

  for (const char* op : {"BatchNormalization", "Dropout"}) {
    Node n;
    n.op = op;
    n.name = "train";
    find_op(op)->from_onnx(n, 17);  // inference mode: nothing to refuse
    n.attrs["training_mode"] = std::int64_t{1};
    try {
      find_op(op)->from_onnx(n, 17);
      ADD_FAILURE() << op << " in training mode accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
      EXPECT_NE(std::string(e.what()).find("training mode"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(find_op("Conv")->from_onnx, nullptr);
}

// A reference kernel's outputs arrive sized from the inferred shapes; a
// Split writes each of its outputs, an omitted one left empty.
TEST(OpRegistry, ReferenceWritesEveryOutput) {
  Graph g;
  const int x = g.add_input("x", {2, 5});
  Node split;
  split.op = "Split";
  split.name = "split";
  split.attrs["axis"] = std::int64_t{1};
  split.attrs["split"] = std::vector<std::int64_t>{2, 1, 2};
  split.inputs = {x};
  split.outputs = {g.add_value("a"), -1, g.add_value("c")};
  infer_node(g, split, GraphLimits{});
  EXPECT_EQ(g.value(split.outputs[0]).shape, (Shape{2, 2}));
  EXPECT_EQ(g.value(split.outputs[2]).shape, (Shape{2, 2}));
  const TensorData in = TensorData::f32({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  const std::vector<TensorData> out = eval_reference(g, split, {&in});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].f, (std::vector<float>{0, 1, 5, 6}));
  EXPECT_TRUE(out[1].f.empty());
  EXPECT_EQ(out[2].f, (std::vector<float>{3, 4, 8, 9}));
}

}  // namespace
}  // namespace vinfer::detail
