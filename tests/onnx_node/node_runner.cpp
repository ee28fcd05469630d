// ONNX's node tests through the C++ general API, as vinfer.backend runs them
// (tests/onnx_node/node_cases.py): each case written by write_cases.py must
// pass within its tolerance or be refused with the line refused.txt holds.
// The sanitizer build runs this (its library is built with ASan and UBSan).
//
//   vinfer_node_runner CASES_DIR refused.txt
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "vinfer/engine.hpp"
#include "vinfer/error.hpp"

namespace fs = std::filesystem;
using vinfer::ElementType;
using vinfer::Tensor;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A TensorProto as a vinfer Tensor; false for a type the general API has no element type for.
bool to_tensor(const onnx::TensorProto& t, Tensor& out) {
  using TP = onnx::TensorProto;
  static const std::map<int, std::pair<ElementType, int>> types = {
      {TP::FLOAT, {ElementType::Float32, 4}}, {TP::INT64, {ElementType::Int64, 8}}, {TP::INT32, {ElementType::Int32, 4}},
      {TP::BOOL, {ElementType::Bool, 1}},     {TP::UINT8, {ElementType::UInt8, 1}}, {TP::INT8, {ElementType::Int8, 1}},
      {TP::INT16, {ElementType::Int16, 2}},   {TP::UINT16, {ElementType::UInt16, 2}}, {TP::UINT32, {ElementType::UInt32, 4}}};
  const auto it = types.find(t.data_type());
  if (it == types.end()) return false;
  out.type = it->second.first;
  out.shape.assign(t.dims().begin(), t.dims().end());
  const auto n = static_cast<std::size_t>(vinfer::numel(out.shape));
  const int size = it->second.second;
  const std::string& raw = t.raw_data();
  if (!t.has_raw_data()) {  // (from_array writes raw data; the typed fields for completeness)
    if (out.type == ElementType::Float32) out.f.assign(t.float_data().begin(), t.float_data().end());
    else if (out.type == ElementType::Int64) out.i.assign(t.int64_data().begin(), t.int64_data().end());
    else out.i.assign(t.int32_data().begin(), t.int32_data().end());
    return true;
  }
  if (raw.size() != n * static_cast<std::size_t>(size)) return false;
  if (out.type == ElementType::Float32) {
    out.f.resize(n);
    if (n) std::memcpy(out.f.data(), raw.data(), n * 4);
    return true;
  }
  out.i.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    const char* p = raw.data() + k * static_cast<std::size_t>(size);
    switch (out.type) {
      case ElementType::Int64: std::memcpy(&out.i[k], p, 8); break;
      case ElementType::Int32: { std::int32_t v; std::memcpy(&v, p, 4); out.i[k] = v; break; }
      case ElementType::UInt32: { std::uint32_t v; std::memcpy(&v, p, 4); out.i[k] = v; break; }
      case ElementType::Int16: { std::int16_t v; std::memcpy(&v, p, 2); out.i[k] = v; break; }
      case ElementType::UInt16: { std::uint16_t v; std::memcpy(&v, p, 2); out.i[k] = v; break; }
      case ElementType::Int8: out.i[k] = static_cast<std::int8_t>(*p); break;
      default: out.i[k] = static_cast<std::uint8_t>(*p); break;  // UInt8, Bool
    }
  }
  return true;
}

struct DataSet {
  std::vector<onnx::TensorProto> inputs, outputs;
};

std::vector<DataSet> data_sets(const fs::path& dir) {
  std::vector<DataSet> sets;
  for (int k = 0;; ++k) {
    const fs::path s = dir / ("test_data_set_" + std::to_string(k));
    if (!fs::exists(s)) {
      if (k > 8) break;
      continue;
    }
    DataSet d;
    for (const char* kind : {"input", "output"})
      for (int i = 0;; ++i) {
        const fs::path p = s / (std::string(kind) + "_" + std::to_string(i) + ".pb");
        if (!fs::exists(p)) break;
        onnx::TensorProto t;
        t.ParseFromString(read_file(p));
        (std::string(kind) == "input" ? d.inputs : d.outputs).push_back(std::move(t));
      }
    sets.push_back(std::move(d));
  }
  return sets;
}

std::string strip_name(std::string m) {
  const std::string prefix = "<bytes>: ";
  for (std::size_t p; (p = m.find(prefix)) != std::string::npos;) m.erase(p, prefix.size());
  return m;
}

vinfer::Model load(const std::string& bytes) {
  vinfer::EngineOptions o;
  o.threads = 1;
  return vinfer::Model::load_onnx_memory(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(), "<bytes>", o);
}

// numpy.testing.assert_allclose: |got - want| <= atol + rtol |want|, NaN equal to NaN.
std::string compare(const Tensor& got, const Tensor& want, double rtol, double atol) {
  if (got.type != want.type) return std::string("type ") + vinfer::to_string(got.type) + ", expected " + vinfer::to_string(want.type);
  if (got.shape != want.shape) return "shape " + vinfer::shape_str(got.shape) + ", expected " + vinfer::shape_str(want.shape);
  for (std::size_t k = 0; k < want.f.size(); ++k) {
    const double g = got.f[k], w = want.f[k];
    if (std::isnan(w) ? !std::isnan(g) : (std::isinf(w) ? g != w : !(std::fabs(g - w) <= atol + rtol * std::fabs(w))))
      return "element " + std::to_string(k) + ": " + std::to_string(g) + ", expected " + std::to_string(w);
  }
  if (got.i != want.i) return "integer values differ";
  return {};
}

// "pass", "refused\t<line>", or what went wrong.
std::string run_case(const fs::path& dir) {
  std::string bytes = read_file(dir / "model.onnx");
  double rtol = 1e-3, atol = 1e-7;
  std::istringstream(read_file(dir / "tolerance.txt")) >> rtol >> atol;
  const std::vector<DataSet> sets = data_sets(dir);
  onnx::ModelProto proto;
  proto.ParseFromString(bytes);
  std::set<std::string> inits;
  for (const auto& t : proto.graph().initializer()) inits.insert(t.name());
  std::vector<std::string> names;
  for (const auto& i : proto.graph().input())
    if (!inits.count(i.name())) names.push_back(i.name());
  std::string refusal;
  std::optional<vinfer::Model> model;
  try {
    model.emplace(load(bytes));
  } catch (const vinfer::Error& e) {
    if (e.kind() != vinfer::ErrorKind::Unsupported) return std::string("error: ") + e.what();
    if (names.size() < 2 || sets.empty()) return "refused\t" + strip_name(e.what());
    refusal = strip_name(e.what());  // the backend then binds every input but the first to its values
  }
  for (const DataSet& d : sets) {
    std::map<std::string, Tensor> feeds;
    std::optional<vinfer::Model> bound;
    vinfer::Model* m = model ? &*model : nullptr;
    if (!m) {
      onnx::ModelProto b = proto;
      for (std::size_t i = 1; i < d.inputs.size() && i < names.size(); ++i) {
        onnx::TensorProto t = d.inputs[i];
        t.set_name(names[i]);
        *b.mutable_graph()->add_initializer() = t;
      }
      std::string bb;
      b.SerializeToString(&bb);
      try {
        bound.emplace(load(bb));
      } catch (const vinfer::Error&) {
        return "refused\t" + refusal;
      }
      m = &*bound;
    }
    for (std::size_t i = 0; i < d.inputs.size() && i < names.size(); ++i) {
      if (!model && i > 0) break;
      Tensor t;
      if (!to_tensor(d.inputs[i], t)) return "error: input " + std::to_string(i) + " of an unreadable type";
      feeds[names[i]] = std::move(t);
    }
    std::vector<Tensor> out;
    try {
      out = m->run(feeds);
    } catch (const vinfer::Error& e) {
      if (e.kind() == vinfer::ErrorKind::Unsupported) return "refused\t" + strip_name(e.what());
      return std::string("error: ") + e.what();
    }
    if (out.size() != d.outputs.size()) return "wrong: " + std::to_string(out.size()) + " outputs";
    for (std::size_t o = 0; o < out.size(); ++o) {
      Tensor want;
      if (!to_tensor(d.outputs[o], want)) return "wrong: output " + std::to_string(o) + " of a type vinfer does not give";
      const std::string diff = compare(out[o], want, rtol, atol);
      if (!diff.empty()) return "wrong: output " + std::to_string(o) + ": " + diff;
    }
  }
  return "pass";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: vinfer_node_runner CASES_DIR refused.txt\n");
    return 2;
  }
  std::map<std::string, std::string> refused;
  std::istringstream lines(read_file(argv[2]));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t tab = line.find('\t');
    refused[line.substr(0, tab)] = tab == std::string::npos ? "" : line.substr(tab + 1);
  }
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(argv[1]))
    if (e.is_directory()) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  int passed = 0, refusals = 0, failed = 0;
  for (const fs::path& c : cases) {
    const std::string name = c.filename().string();
    const std::string got = run_case(c);
    const auto it = refused.find(name);
    const std::string want = it == refused.end() ? "pass" : "refused\t" + it->second;
    if (got == want) {
      (got == "pass" ? passed : refusals)++;
      continue;
    }
    ++failed;
    std::printf("%s: got '%s', expected '%s'\n", name.c_str(), got.c_str(), want.c_str());
  }
  std::printf("%d pass, %d refused as expected, %d differ, of %zu cases\n", passed, refusals, failed, cases.size());
  return failed == 0 && !cases.empty() ? 0 : 1;
}
