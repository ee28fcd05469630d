// ONNX import through Debian's libonnx (protobuf classes, checker, shape
// inference). Every size the file declares is checked against the data it
// carries before anything is read.
#include "onnx/onnx_import.hpp"
#include "graph/shape.hpp"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "util/checked.hpp"
#include "util/file_io.hpp"
#include "vinfer/error.hpp"

namespace vinfer::detail {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void bad(const std::string& name, const std::string& msg) { throw Error(ErrorKind::BadInput, name + ": " + msg); }

Shape checked_dims(const std::string& model, const onnx::TensorProto& t, const GraphLimits& limits) {
  Shape s;
  for (std::int64_t d : t.dims()) {
    if (d < 0) bad(model, "tensor '" + t.name() + "' has a negative dimension");
    s.push_back(d);
  }
  // Zero dimensions count as 1, so that no product of any of them can overflow later.
  if (!dims_fit(s, limits.max_tensor_elements))
    throw Error(ErrorKind::LimitExceeded, model + ": tensor '" + t.name() + "' has more elements than the limit");
  return s;
}

// Reads external data: the location must be a relative path inside the model's folder.
std::string external_bytes(const std::string& model, const std::string& dir, const onnx::TensorProto& t, std::size_t want) {
  std::string location;
  std::int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset" || kv.key() == "length") {
      const std::optional<std::int64_t> v = parse_int64(kv.value());
      if (!v || *v < 0) bad(model, "tensor '" + t.name() + "' has external data " + kv.key() + " '" + kv.value() + "', not a byte count");
      (kv.key() == "offset" ? offset : length) = *v;
    }
  }
  if (location.empty()) bad(model, "tensor '" + t.name() + "' has external data without a location");
  if (dir.empty()) bad(model, "tensor '" + t.name() + "' has external data, but the model was not loaded from a file");
  const fs::path rel(location);
  if (rel.is_absolute()) bad(model, "external data path '" + location + "' is absolute; it must stay inside the model's folder");
  const fs::path base = fs::weakly_canonical(fs::path(dir));
  const fs::path full = fs::weakly_canonical(base / rel);
  const std::string b = base.string() + "/", f = full.string();
  if (f.compare(0, b.size(), b) != 0) bad(model, "external data path '" + location + "' leaves the model's folder");
  std::ifstream in(full, std::ios::binary);
  if (!in) throw Error(ErrorKind::Io, model + ": cannot open external data '" + location + "' of tensor '" + t.name() + "'");
  in.seekg(0, std::ios::end);
  const auto file_size = static_cast<std::int64_t>(in.tellg());
  if (length < 0) length = static_cast<std::int64_t>(want);
  if (offset < 0 || static_cast<std::size_t>(length) != want || offset > file_size || length > file_size - offset)
    bad(model, "external data of tensor '" + t.name() + "' (offset " + std::to_string(offset) + ", length " + std::to_string(length) +
                   ") does not fit its " + std::to_string(want) + " bytes or the file's " + std::to_string(file_size));
  std::string out(want, '\0');
  in.seekg(offset);
  in.read(out.data(), static_cast<std::streamsize>(want));
  if (!in) throw Error(ErrorKind::Io, model + ": short read of external data '" + location + "'");
  return out;
}

// Everything to_tensor checks, without converting: shape, data type, and
// that the data present matches the shape. Returns the shape.
Shape check_tensor(const std::string& model, const onnx::TensorProto& t, const GraphLimits& limits) {
  const Shape s = checked_dims(model, t, limits);
  const auto n = static_cast<std::size_t>(numel(s));
  using TP = onnx::TensorProto;
  const int dt = t.data_type();
  std::size_t esize = 0;
  switch (dt) {
    case TP::FLOAT: case TP::INT32: esize = 4; break;
    case TP::INT64: case TP::DOUBLE: esize = 8; break;
    case TP::BOOL: case TP::UINT8: case TP::INT8: esize = 1; break;
    default:
      throw Error(ErrorKind::Unsupported, model + ": tensor '" + t.name() + "' has ONNX data type " + std::to_string(dt) + ", which vinfer does not load");
  }
  if (t.data_location() == TP::EXTERNAL)
    bad(model, "tensor '" + t.name() + "' has external data where vinfer does not read it (only initializers)");
  if (t.has_raw_data()) {
    if (t.raw_data().size() != n * esize)
      bad(model, "tensor '" + t.name() + "' declares " + shape_str(s) + " (" + std::to_string(n * esize) + " bytes) but carries " +
                     std::to_string(t.raw_data().size()) + " bytes");
    return s;
  }
  const std::size_t have = dt == TP::FLOAT    ? static_cast<std::size_t>(t.float_data_size())
                           : dt == TP::DOUBLE ? static_cast<std::size_t>(t.double_data_size())
                           : dt == TP::INT64  ? static_cast<std::size_t>(t.int64_data_size())
                                              : static_cast<std::size_t>(t.int32_data_size());  // INT32, BOOL, UINT8, INT8
  if (have != n) bad(model, "tensor '" + t.name() + "' declares " + std::to_string(n) + " values but carries " + std::to_string(have));
  return s;
}

TensorData to_tensor(const std::string& model, const onnx::TensorProto& t, const GraphLimits& limits) {
  const Shape s = check_tensor(model, t, limits);
  const auto n = static_cast<std::size_t>(numel(s));
  using TP = onnx::TensorProto;
  const int dt = t.data_type();
  const std::string* raw = t.has_raw_data() ? &t.raw_data() : nullptr;
  TensorData out;
  out.shape = s;
  if (dt == TP::FLOAT || dt == TP::DOUBLE) {
    out.dtype = DType::F32;
    out.f.resize(n);
    if (raw) {
      if (dt == TP::FLOAT) {
        if (n > 0) std::memcpy(out.f.data(), raw->data(), n * 4);  // an empty vector's data() may be null
      } else {
        for (std::size_t i = 0; i < n; ++i) {
          double d;
          std::memcpy(&d, raw->data() + i * 8, 8);
          out.f[i] = static_cast<float>(d);
        }
      }
    } else if (dt == TP::FLOAT) {
      std::copy(t.float_data().begin(), t.float_data().end(), out.f.begin());
    } else {
      std::copy(t.double_data().begin(), t.double_data().end(), out.f.begin());
    }
  } else {
    out.dtype = DType::I64;
    out.i.resize(n);
    if (raw) {
      for (std::size_t i = 0; i < n; ++i) {
        if (dt == TP::INT64) {
          std::memcpy(&out.i[i], raw->data() + i * 8, 8);
        } else if (dt == TP::INT32) {
          std::int32_t v;
          std::memcpy(&v, raw->data() + i * 4, 4);
          out.i[i] = v;
        } else {
          out.i[i] = dt == TP::INT8 ? static_cast<std::int8_t>((*raw)[i]) : static_cast<std::uint8_t>((*raw)[i]);
        }
      }
    } else if (dt == TP::INT64) {
      std::copy(t.int64_data().begin(), t.int64_data().end(), out.i.begin());
    } else {
      std::copy(t.int32_data().begin(), t.int32_data().end(), out.i.begin());
    }
  }
  return out;
}

AttrValue to_attr(const std::string& model, const onnx::AttributeProto& a, const GraphLimits& limits) {
  using AP = onnx::AttributeProto;
  switch (a.type()) {
    case AP::INT: return static_cast<std::int64_t>(a.i());
    case AP::FLOAT: return a.f();
    case AP::STRING: return a.s();
    case AP::INTS: return std::vector<std::int64_t>(a.ints().begin(), a.ints().end());
    case AP::FLOATS: return std::vector<float>(a.floats().begin(), a.floats().end());
    case AP::TENSOR: return to_tensor(model, a.t(), limits);
    default:
      throw Error(ErrorKind::Unsupported, model + ": attribute '" + a.name() + "' has a type vinfer does not read (" + std::to_string(a.type()) + ")");
  }
}

void check_size(const std::string& name, std::uint64_t size) {
  if (size > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw Error(ErrorKind::LimitExceeded, name + ": ONNX files over 2 GiB must keep their weights as external data");
}

[[noreturn]] void parse_failed(const std::string& name) {
  bad(name, "not a valid ONNX model (protobuf parse failed; truncated or not ONNX?)");
}

Graph import_model(onnx::ModelProto& model, const std::string& name, const std::string& dir, const GraphLimits& limits) {
  if (!model.has_graph()) bad(name, "the ONNX model has no graph");
  std::int64_t opset = -1;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  if (opset < 7 || opset > 21)
    throw Error(ErrorKind::Unsupported, name + ": ONNX opset " + std::to_string(opset) + " (vinfer reads opsets 7 to 21)");
  // Debian's libonnx 1.12 knows IR 8 and opset 17: its checker refuses newer
  // models outright, so for them vinfer's own checks (each initializer here,
  // each node in shape inference) are the only ones.
  const bool newer_than_libonnx = opset > 17 || model.ir_version() > 8;

  if (model.graph().node_size() > limits.max_nodes)
    throw Error(ErrorKind::LimitExceeded, name + ": " + std::to_string(model.graph().node_size()) +
                                              " nodes, more than the limit " + std::to_string(limits.max_nodes));

  // External data is read (and confined to the model's folder) here, and put
  // inline, so that ONNX's checker, which knows no folder, sees plain tensors.
  for (onnx::TensorProto& t : *model.mutable_graph()->mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    const Shape s = checked_dims(name, t, limits);
    const std::size_t esize = t.data_type() == onnx::TensorProto::FLOAT || t.data_type() == onnx::TensorProto::INT32 ? 4
                              : t.data_type() == onnx::TensorProto::INT64 || t.data_type() == onnx::TensorProto::DOUBLE ? 8 : 1;
    std::string bytes = external_bytes(name, dir, t, static_cast<std::size_t>(numel(s)) * esize);
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
    t.set_raw_data(std::move(bytes));
  }
  // The checks on the whole model come before the conversion, so that each
  // initializer's protobuf copy can be freed as soon as it is converted
  // (VGG19: 548 MB held twice otherwise); vinfer's own checks of the
  // initializers still come first, as when they were converted first.
  for (const onnx::TensorProto& t : model.graph().initializer()) check_tensor(name, t, limits);
  // libonnx 1.12's shape inference divides by strides and dilations without
  // checking them (found by fuzz_onnx): vinfer checks them first.
  for (const onnx::NodeProto& np : model.graph().node())
    for (const onnx::AttributeProto& a : np.attribute()) {
      const std::string& k = a.name();
      if (k != "strides" && k != "dilations" && k != "kernel_shape" && k != "group") continue;
      bool ok = a.type() != onnx::AttributeProto::INT || a.i() >= 1;
      for (std::int64_t v : a.ints()) ok &= v >= 1;
      if (!ok) bad(name, "node '" + (np.name().empty() ? np.op_type() : np.name()) + "': attribute '" + k + "' must be positive");
    }
  try {
    if (!newer_than_libonnx) {
      onnx::checker::check_model(model);
      onnx::shape_inference::InferShapes(model);
    }
  } catch (const std::exception& e) {
    std::string msg = e.what();
    if (auto nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
    bad(name, "ONNX checker: " + msg);
  }
  const onnx::GraphProto& gp = model.graph();
  Graph g;
  g.name = gp.name().empty() ? name : gp.name();
  g.opset = static_cast<int>(opset);
  std::map<std::string, int> ids;
  std::int64_t bytes = 0;
  for (onnx::TensorProto& t : *model.mutable_graph()->mutable_initializer()) {
    TensorData td = to_tensor(name, t, limits);
    bytes += td.numel() * (td.dtype == DType::F32 ? 4 : 8);
    if (bytes > limits.max_total_bytes) throw Error(ErrorKind::LimitExceeded, name + ": weights exceed the model size limit");
    std::string().swap(*t.mutable_raw_data());
    ids[t.name()] = g.add_constant(t.name(), std::move(td));
  }
  for (const onnx::ValueInfoProto& vi : gp.input()) {
    if (ids.count(vi.name())) continue;  // older exporters list initializers as inputs too
    const auto& tt = vi.type().tensor_type();
    if (tt.elem_type() != onnx::TensorProto::FLOAT)
      throw Error(ErrorKind::Unsupported, name + ": input '" + vi.name() + "' is not float32");
    Shape s;
    for (const auto& d : tt.shape().dim()) s.push_back(d.has_dim_value() ? d.dim_value() : 1);  // symbolic (batch) dims run as 1
    if (!dims_fit(s, limits.max_tensor_elements))
      throw Error(ErrorKind::LimitExceeded, name + ": input '" + vi.name() + "' " + shape_str(s) + " exceeds the tensor element limit");
    ids[vi.name()] = g.add_input(vi.name(), s);
  }
  for (const onnx::NodeProto& np : gp.node()) {
    Node n;
    n.op = np.domain().empty() || np.domain() == "ai.onnx" ? np.op_type() : np.domain() + "." + np.op_type();
    n.name = np.name().empty() ? (np.output_size() ? np.output(0) : n.op) : np.name();
    if (!is_supported_op(n.op))
      throw Error(ErrorKind::Unsupported, name + ": operator " + n.op + " (node '" + n.name + "') is not supported by vinfer");
    for (const std::string& in : np.input()) {
      if (in.empty()) {
        n.inputs.push_back(-1);
        continue;
      }
      auto it = ids.find(in);
      if (it == ids.end()) bad(name, "node '" + n.name + "' reads '" + in + "', which nothing produces");
      n.inputs.push_back(it->second);
    }
    for (const onnx::AttributeProto& a : np.attribute()) n.attrs[a.name()] = to_attr(name, a, limits);
    // Normalize opset differences into the attributes the rest of vinfer reads.
    if (n.op == "Softmax") {
      if (opset < 13) n.attrs["vinfer.opset"] = opset;
      if (!n.has("axis")) n.attrs["axis"] = static_cast<std::int64_t>(opset < 13 ? 1 : -1);
    }
    if (n.op == "Constant" && !n.has("value")) {
      if (n.has("value_float")) n.attrs["value"] = TensorData::f32({}, {n.get_float("value_float", 0)});
      else if (n.has("value_floats")) {
        auto v = n.get_floats("value_floats");
        n.attrs["value"] = TensorData::f32({static_cast<std::int64_t>(v.size())}, v);
      } else if (n.has("value_int")) n.attrs["value"] = TensorData::i64({}, {n.get_int("value_int", 0)});
      else if (n.has("value_ints")) {
        auto v = n.get_ints("value_ints");
        n.attrs["value"] = TensorData::i64({static_cast<std::int64_t>(v.size())}, v);
      }
    }
    if ((n.op == "BatchNormalization" || n.op == "Dropout") && n.get_int("training_mode", 0) != 0)
      throw Error(ErrorKind::Unsupported, name + ": node '" + n.name + "' is in training mode");
    for (const std::string& out : np.output()) {
      if (out.empty()) {
        n.outputs.push_back(-1);
        continue;
      }
      if (ids.count(out)) bad(name, "value '" + out + "' is produced twice");
      const int id = g.add_value(out);
      ids[out] = id;
      n.outputs.push_back(id);
    }
    g.nodes.push_back(std::move(n));
  }
  for (const onnx::ValueInfoProto& vi : gp.output()) {
    auto it = ids.find(vi.name());
    if (it == ids.end()) bad(name, "graph output '" + vi.name() + "' is never produced");
    g.mark_output(it->second);
  }
  return g;
}

}  // namespace

Graph import_onnx(const std::uint8_t* data, std::size_t size, const std::string& name, const std::string& dir,
                  const GraphLimits& limits) {
  check_size(name, size);
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size))) parse_failed(name);
  return import_model(model, name, dir, limits);
}

Graph import_onnx_file(const std::string& path, const std::string& dir, const GraphLimits& limits,
                       std::uint64_t max_file_bytes) {
  const InputFile file(path, max_file_bytes);
  check_size(path, file.size());
  onnx::ModelProto model;
  google::protobuf::io::FileInputStream in(file.fd());
  if (!model.ParseFromZeroCopyStream(&in) || in.GetErrno() != 0) parse_failed(path);
  return import_model(model, path, dir, limits);
}

}  // namespace vinfer::detail
