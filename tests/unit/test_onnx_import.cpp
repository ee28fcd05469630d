// ONNX files that are corrupt, hostile or beyond vinfer: each must give one
// clear error of the right kind, never a crash or a read outside the file.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "vinfer/engine.hpp"
#include "vinfer/error.hpp"
#include "vinfer/io.hpp"
#include "util/thread_pool.hpp"

namespace vinfer {
namespace {

// A model of that IR version and opset with one float input, x, of these dimensions.
onnx::ModelProto model_with_input(int ir, int opset, std::initializer_list<int> dims) {
  onnx::ModelProto m;
  m.set_ir_version(ir);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  auto* in = m.mutable_graph()->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  return m;
}

// A valid model: y = Relu(Conv(x, w)), x: 1x4x5x5, w: 8x4x3x3 (raw_data).
onnx::ModelProto tiny_model() {
  onnx::ModelProto m = model_with_input(8, 13, {1, 4, 5, 5});
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("tiny");
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  for (int d : {8, 4, 3, 3}) w->add_dims(d);
  std::string raw(8 * 4 * 3 * 3 * 4, '\0');
  for (std::size_t i = 0; i < raw.size() / 4; ++i) {
    const float v = 0.01f * static_cast<float>(i % 17) - 0.08f;
    std::memcpy(&raw[i * 4], &v, 4);
  }
  w->set_raw_data(raw);
  auto* conv = g->add_node();
  conv->set_op_type("Conv");
  conv->set_name("conv");
  conv->add_input("x");
  conv->add_input("w");
  conv->add_output("c");
  auto* relu = g->add_node();
  relu->set_op_type("Relu");
  relu->set_name("relu");
  relu->add_input("c");
  relu->add_output("y");
  auto* out = g->add_output();
  out->set_name("y");
  auto* ot = out->mutable_type()->mutable_tensor_type();
  ot->set_elem_type(onnx::TensorProto::FLOAT);
  for (int d : {1, 8, 3, 3}) ot->mutable_shape()->add_dim()->set_dim_value(d);
  return m;
}

Model load(const onnx::ModelProto& m) {
  const std::string bytes = m.SerializeAsString();
  return Model::load_onnx_memory(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), "test.onnx");
}

void expect_error(const std::function<void()>& fn, ErrorKind kind, const std::string& needle) {
  try {
    fn();
    FAIL() << "expected an error containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "multi-line: " << e.what();
  }
}

// m run on the .npy input: its largest difference from the .npy output,
// over that output's largest magnitude (NaN or infinity where either fails).
float relative_error(Model& m, const std::string& input, const std::string& expected) {
  std::vector<float> x, want;
  read_npy(input, x);
  read_npy(expected, want);
  EXPECT_EQ(x.size(), m.input_size());
  EXPECT_EQ(want.size(), m.output_size());
  if (x.size() != m.input_size() || want.size() != m.output_size()) return INFINITY;
  std::vector<float> y(m.output_size(), NAN);
  m.run(x.data(), y.data());
  float scale = 0, worst = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    scale = std::max(scale, std::fabs(want[i]));
    const float d = std::fabs(y[i] - want[i]);
    if (!(d <= worst)) worst = d;  // (a NaN stays)
  }
  return scale > 0 ? worst / scale : INFINITY;
}

TEST(OnnxImport, TinyModelRuns) {
  Model m = load(tiny_model());
  EXPECT_EQ(m.input_shape(), (Shape{1, 4, 5, 5}));
  EXPECT_EQ(m.output_shape(), (Shape{1, 8, 3, 3}));
  std::vector<float> x(m.input_size(), 1.f), y(m.output_size());
  m.run(x.data(), y.data());
  // All-ones input, no padding: every output of channel o is relu(the sum of
  // o's 36 weights); some channels' sums are negative (0 out), others not.
  int zeros = 0;
  for (int o = 0; o < 8; ++o) {
    double sum = 0;
    for (int i = o * 36; i < (o + 1) * 36; ++i) sum += 0.01f * static_cast<float>(i % 17) - 0.08f;
    const double want = std::max(0.0, sum);
    zeros += want == 0;
    for (int p = 0; p < 9; ++p) EXPECT_NEAR(y[static_cast<std::size_t>(o * 9 + p)], want, 1e-5) << "channel " << o << " pixel " << p;
  }
  EXPECT_GT(zeros, 0);
  EXPECT_LT(zeros, 8);
}

TEST(OnnxImport, GarbageAndTruncation) {
  const std::string junk = "this is not a protobuf at all \xff\xff\xff";
  expect_error([&] { Model::load_onnx_memory(reinterpret_cast<const std::uint8_t*>(junk.data()), junk.size(), "junk.onnx"); },
               ErrorKind::BadInput, "junk.onnx");
  const std::string bytes = tiny_model().SerializeAsString();
  for (std::size_t cut : {bytes.size() / 2, bytes.size() - 3, std::size_t{7}}) {
    try {
      Model::load_onnx_memory(reinterpret_cast<const std::uint8_t*>(bytes.data()), cut, "cut.onnx");
      ADD_FAILURE() << "truncated at " << cut << " loaded";
    } catch (const Error& e) {
      EXPECT_TRUE(e.kind() == ErrorKind::BadInput || e.kind() == ErrorKind::Unsupported) << e.what();
    }
  }
}

// Model::load_onnx parses the file as it reads it (no whole-file copy):
// the same model as from memory, and the file errors read_file gave.
TEST(OnnxImport, FromAFileAsFromMemory) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("vinfer_file_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string bytes = tiny_model().SerializeAsString();
  const fs::path good = dir / "m.onnx", cut = dir / "cut.onnx";
  std::ofstream(good, std::ios::binary) << bytes;
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  Model from_file = Model::load_onnx(good.string()), from_memory = load(tiny_model());
  std::vector<float> x(from_file.input_size()), a(from_file.output_size()), b(a.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
  from_file.run(x.data(), a.data());
  from_memory.run(x.data(), b.data());
  EXPECT_EQ(a, b);
  expect_error([&] { Model::load_onnx(cut.string()); }, ErrorKind::BadInput, "protobuf parse failed");
  expect_error([&] { Model::load_onnx(dir.string()); }, ErrorKind::Io, "is a directory");
  expect_error([&] { Model::load_onnx((dir / "missing.onnx").string()); }, ErrorKind::Io, "cannot open");
  EngineOptions small;
  small.max_file_bytes = bytes.size() - 1;
  expect_error([&] { Model::load_onnx(good.string(), small); }, ErrorKind::LimitExceeded, "file too large");
  fs::remove_all(dir);
}

TEST(OnnxImport, DeclaredSizeDisagreesWithData) {
  onnx::ModelProto m = tiny_model();
  m.mutable_graph()->mutable_initializer(0)->mutable_raw_data()->resize(100);
  expect_error([&] { load(m); }, ErrorKind::BadInput, "carries 100 bytes");
  onnx::ModelProto huge = tiny_model();
  huge.mutable_graph()->mutable_initializer(0)->set_dims(0, 1LL << 40);
  EXPECT_THROW(load(huge), Error);
}

TEST(OnnxImport, UnknownOperatorNamesIt) {
  onnx::ModelProto m = tiny_model();
  m.mutable_graph()->mutable_node(1)->set_op_type("RandomNormalLike");
  expect_error([&] { load(m); }, ErrorKind::Unsupported, "operator RandomNormalLike (node 'relu')");
}

TEST(OnnxImport, OpsetOutOfRange) {
  onnx::ModelProto m = tiny_model();
  m.mutable_opset_import(0)->set_version(5);
  expect_error([&] { load(m); }, ErrorKind::Unsupported, "opset 5");
  m.mutable_opset_import(0)->set_version(24);
  expect_error([&] { load(m); }, ErrorKind::Unsupported, "opset 24 (vinfer reads opsets 7 to 23)");
}

// What torch 2.x's default (dynamo) exporter writes: IR 10, opset 20, the
// weights in an external data file (tests/models/export_dynamo_fixture.py,
// torch 2.15): PyTorch's output, within the regression bound of the parity tests.
TEST(OnnxImport, TorchDynamoExportOpset20) {
  const std::string dir = std::string(VINFER_TEST_DATA) + "/onnx20/";
  Model m = Model::load_onnx(dir + "small.onnx");
  EXPECT_LE(relative_error(m, dir + "small.input.npy", dir + "small.torch.npy"), 2e-5f);
  // A newer model than Debian's libonnx knows: its checker is skipped, and
  // vinfer's own checks still name what is wrong.
  onnx::ModelProto bad = tiny_model();
  bad.set_ir_version(10);
  bad.mutable_opset_import(0)->set_version(20);
  bad.mutable_graph()->mutable_node(1)->set_input(0, "nowhere");
  expect_error([&] { load(bad); }, ErrorKind::BadInput, "reads 'nowhere', which nothing produces");
}

// torch.split and chunk as the dynamo exporter writes them without its
// optimizer: SplitToSequence read by SequenceAt at constant positions become
// Slices (sizes from a Constant node or an initializer, one size or one per
// piece, a negative position, pieces of one without keepdims); other uses of
// a sequence are refused with one line naming the node.
onnx::ModelProto split_model() {
  onnx::ModelProto m = model_with_input(10, 21, {1, 6, 2, 2});
  onnx::GraphProto* g = m.mutable_graph();
  auto ints = [&](const std::string& name, std::vector<std::int64_t> v, bool scalar, bool as_node) {
    onnx::TensorProto* t = as_node ? nullptr : g->add_initializer();
    if (as_node) {
      auto* c = g->add_node();
      c->set_op_type("Constant");
      c->set_name(name);
      c->add_output(name);
      auto* a = c->add_attribute();
      a->set_name("value");
      a->set_type(onnx::AttributeProto::TENSOR);
      t = a->mutable_t();
    }
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t->add_dims(static_cast<std::int64_t>(v.size()));
    for (std::int64_t e : v) t->add_int64_data(e);
  };
  auto node = [&](const std::string& type, std::vector<std::string> ins, const std::string& out) {
    auto* n = g->add_node();
    n->set_op_type(type);
    n->set_name(out);
    for (const std::string& i : ins) n->add_input(i);
    n->add_output(out);
    return n;
  };
  auto attr = [](onnx::NodeProto* n, const char* key, std::int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  };
  ints("sizes", {1, 2, 3}, false, true);
  ints("two", {2}, true, false);
  ints("last", {-1}, true, true);
  ints("first", {0}, true, false);
  ints("third", {2}, true, true);
  ints("fifth", {4}, true, false);
  attr(node("SplitToSequence", {"x", "sizes"}, "s1"), "axis", 1);
  node("SequenceAt", {"s1", "last"}, "a");   // x[:, 3:6]
  node("SequenceAt", {"s1", "first"}, "b");  // x[:, 0:1]
  attr(node("SplitToSequence", {"x", "two"}, "s2"), "axis", 1);
  node("SequenceAt", {"s2", "third"}, "c");  // x[:, 4:6]
  auto* s3 = node("SplitToSequence", {"x"}, "s3");
  attr(s3, "axis", -3);
  attr(s3, "keepdims", 0);
  node("SequenceAt", {"s3", "fifth"}, "d");  // x[:, 4], 1x2x2
  ints("one", {1}, false, false);
  attr(node("Concat", {"a", "b", "c", node("Unsqueeze", {"d", "one"}, "d4")->output(0)}, "y"), "axis", 1);
  auto* out = g->add_output();
  out->set_name("y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return m;
}

TEST(OnnxImport, SplitToSequenceAsSlices) {
  onnx::ModelProto m = split_model();
  Model model = load(m);
  ASSERT_EQ(model.output_size(), 7u * 4u);
  std::vector<float> x(24), y(model.output_size(), NAN);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  model.run(x.data(), y.data());
  std::vector<float> want;
  for (int ch : {3, 4, 5, 0, 4, 5, 4})
    for (int p = 0; p < 4; ++p) want.push_back(static_cast<float>(ch * 4 + p));
  EXPECT_EQ(y, want);

  // ConcatFromSequence (which would read the sequence): refused, named.
  onnx::ModelProto other = split_model();
  auto* cat = other.mutable_graph()->add_node();
  cat->set_op_type("ConcatFromSequence");
  cat->set_name("gather_all");
  cat->add_input("s2");
  cat->add_output("z");
  expect_error([&] { load(other); }, ErrorKind::Unsupported, "operator ConcatFromSequence (node 'gather_all') is not supported");
  // A negative position among pieces of one size (how many: the shape's).
  onnx::ModelProto negative = split_model();
  for (auto& n : *negative.mutable_graph()->mutable_node())
    if (n.output(0) == "c") n.set_input(1, "last");
  expect_error([&] { load(negative); }, ErrorKind::Unsupported, "node 'c': a negative position");
  // A position past the pieces given.
  onnx::ModelProto past = split_model();
  for (auto& n : *past.mutable_graph()->mutable_node())
    if (n.output(0) == "b") n.set_input(1, "fifth");
  expect_error([&] { load(past); }, ErrorKind::BadInput, "node 'b': position 4 of 3 pieces");
  // One size given as a list, not a scalar: one piece, not pieces of that size.
  onnx::ModelProto listed = split_model();
  for (auto& t : *listed.mutable_graph()->mutable_initializer())
    if (t.name() == "two") t.add_dims(1);
  expect_error([&] { load(listed); }, ErrorKind::BadInput, "node 'c': position 2 of 1 pieces");
  // A sequence as the graph's output.
  onnx::ModelProto returned = split_model();
  returned.mutable_graph()->mutable_output(0)->set_name("s1");
  expect_error([&] { load(returned); }, ErrorKind::Unsupported, "graph output 's1' is a sequence");
}

// Attention (opset 23) against ONNX Runtime's output
// (tests/models/export_attention_fixture.py): grouped heads with a bool mask
// that leaves a query no key, scale and softcap; 3-D inputs with a float mask,
// causal; and the form torch writes, which becomes matrix products (the
// others run on the reference kernel, which vinfer info names). A key/value
// cache, or its outputs read, are refused.
TEST(OnnxImport, AttentionOpset23AgainstOnnxRuntime) {
  const std::string dir = std::string(VINFER_TEST_DATA) + "/attention23/";
  for (const char* name : {"grouped_bool_softcap", "three_d_float_causal", "plain"}) {
    for (const Backend backend : {Backend::Cpu, Backend::Reference}) {
      EngineOptions o;
      o.batch = 2;
      o.backend = backend;
      Model m = Model::load_onnx(dir + name + ".onnx", o);
      EXPECT_LE(relative_error(m, dir + name + ".input.npy", dir + name + ".ort.npy"), 1e-5f) << name;
      if (backend != Backend::Cpu) continue;
      const bool lowered = std::string(name) == "plain";
      const auto& passes = m.info().passes;
      EXPECT_EQ(std::count(passes.begin(), passes.end(), std::string("attention_to_matmul: ") + (lowered ? "1" : "0")), 1) << name;
      bool on_reference = false;
      for (const auto& [node, impl] : m.info().kernels) on_reference |= impl == "vinfer:reference";
      EXPECT_EQ(on_reference, !lowered) << name;
    }
  }
  onnx::ModelProto cached;
  {
    std::ifstream f(dir + "plain.onnx", std::ios::binary);
    ASSERT_TRUE(cached.ParseFromIstream(&f));
  }
  onnx::NodeProto* att = cached.mutable_graph()->mutable_node(cached.graph().node_size() - 1);
  ASSERT_EQ(att->op_type(), "Attention");
  att->set_name("sdpa");
  att->add_input("");  // no mask
  att->add_input("k");
  att->add_input("v");
  EngineOptions o;
  o.batch = 2;
  expect_error([&] {
    const std::string bytes = cached.SerializeAsString();
    Model::load_onnx_memory(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), "cached.onnx", o);
  }, ErrorKind::Unsupported, "Attention 'sdpa': past_key and past_value (a key/value cache) are not supported");
}

TEST(OnnxImport, ExternalDataMayNotLeaveTheFolder) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("vinfer_ext_" + std::to_string(::getpid()));
  fs::create_directories(dir / "model");
  {
    std::ofstream(dir / "secret.bin", std::ios::binary) << std::string(8 * 4 * 9 * 4, 'x');
    std::ofstream(dir / "model" / "w.bin", std::ios::binary) << std::string(8 * 4 * 9 * 4, '\0');
  }
  auto with_location = [&](const std::string& loc, const std::string& length) {
    onnx::ModelProto m = tiny_model();
    onnx::TensorProto* w = m.mutable_graph()->mutable_initializer(0);
    w->clear_raw_data();
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* kv = w->add_external_data();
    kv->set_key("location");
    kv->set_value(loc);
    if (!length.empty()) {
      auto* len = w->add_external_data();
      len->set_key("length");
      len->set_value(length);
    }
    const fs::path p = dir / "model" / "m.onnx";
    std::ofstream(p, std::ios::binary) << m.SerializeAsString();
    return p.string();
  };
  const std::string escape = with_location("../secret.bin", "");
  expect_error([&] { Model::load_onnx(escape); }, ErrorKind::BadInput, "leaves the model's folder");
  const std::string absolute = with_location((dir / "secret.bin").string(), "");
  expect_error([&] { Model::load_onnx(absolute); }, ErrorKind::BadInput, "absolute");
  const std::string too_long = with_location("w.bin", "999999");
  expect_error([&] { Model::load_onnx(too_long); }, ErrorKind::BadInput, "does not fit");
  const std::string good = with_location("w.bin", "");
  Model ok = Model::load_onnx(good);
  EXPECT_EQ(ok.output_shape(), (Shape{1, 8, 3, 3}));
  fs::remove_all(dir);
}

// Found by fuzz_onnx: libonnx's shape inference divides by a zero stride (SIGFPE).
TEST(OnnxImport, ZeroStrideIsRefusedBeforeOnnxShapeInference) {
  onnx::ModelProto m = tiny_model();
  auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("strides");
  a->set_type(onnx::AttributeProto::INTS);
  a->add_ints(0);
  a->add_ints(1);
  expect_error([&] { load(m); }, ErrorKind::BadInput, "'strides' must be positive");
}

// y = Gemm(x, W) with W 3x0 stored as empty raw_data (a fuzzer finding):
// imported without copying from a null pointer (UBSan flagged memcpy into the
// empty vector's data()), then refused as an empty operand.
TEST(OnnxImport, EmptyInitializerRunsCleanly) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("empty");
  auto value = [](onnx::ValueInfoProto* v, const char* name, std::initializer_list<int> dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  value(g->add_input(), "x", {1, 0});
  value(g->add_output(), "y", {1, 3});
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->add_dims(0);
  w->set_raw_data("");
  auto* gemm = g->add_node();
  gemm->set_op_type("Gemm");
  gemm->set_name("fc");
  gemm->add_input("x");
  gemm->add_input("w");
  gemm->add_output("y");
  auto* tb = gemm->add_attribute();
  tb->set_name("transB");
  tb->set_type(onnx::AttributeProto::INT);
  tb->set_i(1);
  // An empty sum: every output is 0 (oneDNN takes no empty operand; the reference evaluator runs it).
  Model model = load(m);
  std::vector<float> y(model.output_size(), NAN);
  model.run(nullptr, y.data());
  EXPECT_EQ(y, std::vector<float>(3, 0.f));
}

// x [1, K] -> Gemm(w [N, K], transB, bias) -> Relu, as PyTorch exports a
// Linear; w is large enough to be read from the file straight into place.
constexpr int kN = 37, kK = 300;  // N: two vectors of 16 and a tail
float gemm_w(int n, int k) { return 0.001f * static_cast<float>((n * 31 + k * 7) % 97) - 0.048f; }

onnx::ModelProto linear_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("linear");
  auto add_io = [](onnx::ValueInfoProto* v, const char* name, int n) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(1);
    tt->mutable_shape()->add_dim()->set_dim_value(n);
  };
  add_io(g->add_input(), "x", kK);
  add_io(g->add_output(), "y", kN);
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(kN), w->add_dims(kK);
  std::string raw(kN * kK * 4, '\0');
  for (int n = 0; n < kN; ++n)
    for (int k = 0; k < kK; ++k) {
      const float v = gemm_w(n, k);
      std::memcpy(&raw[static_cast<std::size_t>(n * kK + k) * 4], &v, 4);
    }
  w->set_raw_data(raw);
  onnx::TensorProto* b = g->add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(kN);
  for (int n = 0; n < kN; ++n) b->add_float_data(0.01f * static_cast<float>(n % 5) - 0.02f);
  auto* gemm = g->add_node();
  gemm->set_op_type("Gemm");
  gemm->set_name("fc");
  for (const char* in : {"x", "w", "b"}) gemm->add_input(in);
  gemm->add_output("z");
  auto* tb = gemm->add_attribute();
  tb->set_name("transB");
  tb->set_type(onnx::AttributeProto::INT);
  tb->set_i(1);
  auto* relu = g->add_node();
  relu->set_op_type("Relu");
  relu->set_name("relu");
  relu->add_input("z");
  relu->add_output("y");
  return m;
}

// The weights skipped while parsing and read from the file afterwards, as
// [K, N] for the one-row kernel (shared, not copied): the same results as
// a plain computation, from a file and from memory, with the graph's
// weights kept or freed while compiling, on the CPU and the reference
// backends, and the same again when loaded a second time.
TEST(OnnxImport, LargeWeightsReadFromTheFileExactly) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("vinfer_linear_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string bytes = linear_model().SerializeAsString();
  const fs::path path = dir / "linear.onnx";
  std::ofstream(path, std::ios::binary) << bytes;
  std::vector<float> x(kK), want(kN);
  for (int k = 0; k < kK; ++k) x[static_cast<std::size_t>(k)] = k % 3 == 0 ? 0.f : 0.05f * static_cast<float>(k % 11) - 0.2f;
  for (int n = 0; n < kN; ++n) {
    double acc = 0.01 * (n % 5) - 0.02;
    for (int k = 0; k < kK; ++k) acc += static_cast<double>(gemm_w(n, k)) * x[static_cast<std::size_t>(k)];
    want[static_cast<std::size_t>(n)] = static_cast<float>(std::max(0.0, acc));
  }
  std::vector<float> first;
  for (int pass = 0; pass < 2; ++pass)
    for (const Backend backend : {Backend::Cpu, Backend::Reference})
      for (const bool keep : {true, false})
        for (const bool from_file : {true, false}) {
          EngineOptions o;
          o.backend = backend;
          o.keep_constants = keep;
          Model m = from_file ? Model::load_onnx(path.string(), o)
                              : Model::load_onnx_memory(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), "m", o);
          const Graph& g = m.graph();
          for (const Node& n : g.nodes)
            if (n.op == "Gemm") {
              EXPECT_EQ(n.get_int("transB", 1), 0);
              EXPECT_EQ(g.value(n.inputs[1]).shape, (Shape{kK, kN}));
            }
          std::vector<float> y(kN);
          m.run(x.data(), y.data());
          for (int n = 0; n < kN; ++n) EXPECT_NEAR(y[static_cast<std::size_t>(n)], want[static_cast<std::size_t>(n)], 1e-5) << n;
          if (backend == Backend::Cpu && first.empty()) first = y;
          if (backend == Backend::Cpu) EXPECT_EQ(y, first) << "loading again changed the result";
          if (backend == Backend::Cpu) EXPECT_GT(m.info().peak_rss_bytes, 0);
        }
  fs::remove_all(dir);
}

// Loading starts no OpenMP team on another thread than the caller's: the
// weights read transposed (an OpenMP loop) are read on it, the rest by the
// pool. With more OpenMP threads than cores, libgomp sleeps at every
// barrier instead of spinning, and a network of small layers ran 3x slower
// after loading than before. Counted as the process's threads once the
// pool's workers and the caller's OpenMP team exist.
TEST(OnnxImport, LoadingStartsNoOtherOpenMpTeam) {
  namespace fs = std::filesystem;
  if (!fs::exists("/proc/self/task")) GTEST_SKIP() << "counts threads through /proc";
  auto threads_now = [] {
    return std::distance(fs::directory_iterator("/proc/self/task"), fs::directory_iterator());
  };
  EngineOptions o;
  o.threads = 2;
  detail::parallel_for(detail::hardware_threads(), detail::hardware_threads(), [](int, int) {});
  {  // a network on this thread: its OpenMP team
    Graph g;
    g.mark_output(g.add_node("Relu", {g.add_input("x", {1, 64, 64, 64})})[0]);
    Model warm = Model::from_graph(g, "warm", o);
    std::vector<float> x(warm.input_size(), -1.f), y(warm.output_size());
    warm.run(x.data(), y.data());
  }
  const auto before = threads_now();
  // Eight Linear layers as PyTorch exports them: the pool's threads take some.
  onnx::ModelProto mp;
  mp.set_ir_version(8);
  mp.add_opset_import()->set_version(13);
  onnx::GraphProto* g = mp.mutable_graph();
  g->set_name("chain");
  for (onnx::ValueInfoProto* v : {g->add_input(), g->add_output()}) {
    v->set_name(v == &g->input(0) ? "x0" : "x8");
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(1);
    tt->mutable_shape()->add_dim()->set_dim_value(kK);
  }
  for (int l = 0; l < 8; ++l) {
    onnx::TensorProto* w = g->add_initializer();
    w->set_name("w" + std::to_string(l));
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(kK), w->add_dims(kK);
    std::string raw(static_cast<std::size_t>(kK) * kK * 4, '\0');
    for (int i = 0; i < kK * kK; ++i) {
      const float v = gemm_w(i / kK, i % kK + l);
      std::memcpy(&raw[static_cast<std::size_t>(i) * 4], &v, 4);
    }
    w->set_raw_data(raw);
    auto* gemm = g->add_node();
    gemm->set_op_type("Gemm");
    gemm->add_input("x" + std::to_string(l));
    gemm->add_input("w" + std::to_string(l));
    gemm->add_output("x" + std::to_string(l + 1));
    auto* tb = gemm->add_attribute();
    tb->set_name("transB");
    tb->set_type(onnx::AttributeProto::INT);
    tb->set_i(1);
  }
  const std::string bytes = mp.SerializeAsString();
  Model m = Model::load_onnx_memory(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), "m", o);
  for (const Node& n : m.graph().nodes) ASSERT_EQ(n.get_int("transB", 1), 0) << "the weights were not read transposed";
  std::vector<float> x(kK, 0.5f), y(kK);
  m.run(x.data(), y.data());
  EXPECT_EQ(threads_now(), before) << "loading or running started threads of its own";
}

// Cut anywhere, inside the large weights too: refused, never read past the end.
TEST(OnnxImport, TruncatedInsideLargeWeights) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("vinfer_cutw_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string bytes = linear_model().SerializeAsString();
  for (std::size_t cut : {std::size_t{20}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 200, bytes.size() - 1}) {
    const fs::path p = dir / "cut.onnx";
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes.substr(0, cut);
    for (const bool from_file : {true, false})
      try {
        if (from_file) Model::load_onnx(p.string());
        else Model::load_onnx_memory(reinterpret_cast<const std::uint8_t*>(bytes.data()), cut, "cut.onnx");
        ADD_FAILURE() << "cut at " << cut << " loaded";
      } catch (const Error& e) {
        EXPECT_TRUE(e.kind() == ErrorKind::BadInput || e.kind() == ErrorKind::Unsupported) << e.what();
      }
  }
  fs::remove_all(dir);
}

TEST(OnnxImport, MissingProducerIsBadInput) {
  onnx::ModelProto m = tiny_model();
  m.mutable_graph()->mutable_node(1)->set_input(0, "nowhere");
  EXPECT_THROW(load(m), Error);
}

}  // namespace
}  // namespace vinfer
