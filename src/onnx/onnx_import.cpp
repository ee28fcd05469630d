// ONNX import through Debian's libonnx (protobuf classes, checker, shape
// inference). Every size the file declares is checked against the data it
// carries before anything is read.
#include "onnx/onnx_import.hpp"
#include "graph/op_registry.hpp"
#include "graph/shape.hpp"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <optional>
#include <fstream>
#include <limits>
#include <numeric>
#include <set>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "util/checked.hpp"
#include "util/thread_pool.hpp"
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

// Where an initializer's bytes are when the parsed model does not hold them:
// large raw data is skipped while parsing and read once, straight into the
// tensor (no protobuf copy of the weights: VGG19's are 548 MB), and external
// data is read from its file the same way.
struct Span {
  bool set = false;
  std::string file;  // an external data file; empty: the model itself
  std::uint64_t offset = 0, size = 0;
};

// The model's own bytes: a file read as it is needed, or a buffer.
struct ModelBytes {
  const InputFile* file = nullptr;
  const std::uint8_t* memory = nullptr;
  std::uint64_t size = 0;
};

// Reads one span's bytes (its external file opened once).
class SpanReader {
 public:
  SpanReader(const std::string& model, const ModelBytes& src, const Span& span) : src_(src), span_(span) {
    if (span.file.empty()) return;
    ext_.emplace(span.file, std::numeric_limits<std::uint64_t>::max());
    if (span.offset + span.size > ext_->size()) bad(model, "external data '" + span.file + "' is shorter than its tensors declare");
  }
  void read(std::uint64_t at, void* dst, std::size_t n) const {
    if (ext_) ext_->read_at(span_.offset + at, dst, n);
    else if (src_.file) src_.file->read_at(span_.offset + at, dst, n);
    else std::memcpy(dst, src_.memory + span_.offset + at, n);
  }

 private:
  const ModelBytes& src_;
  const Span& span_;
  std::optional<InputFile> ext_;
};

// External data: the location must be a relative path inside the model's folder.
Span external_span(const std::string& model, const std::string& dir, const onnx::TensorProto& t, std::size_t want) {
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
  std::error_code ec;
  if (!fs::is_regular_file(full, ec))
    throw Error(ErrorKind::Io, model + ": cannot open external data '" + location + "' of tensor '" + t.name() + "'");
  const auto file_size = static_cast<std::int64_t>(fs::file_size(full, ec));
  if (ec) throw Error(ErrorKind::Io, model + ": cannot open external data '" + location + "' of tensor '" + t.name() + "'");
  if (length < 0) length = static_cast<std::int64_t>(want);
  if (offset < 0 || static_cast<std::size_t>(length) != want || offset > file_size || length > file_size - offset)
    bad(model, "external data of tensor '" + t.name() + "' (offset " + std::to_string(offset) + ", length " + std::to_string(length) +
                   ") does not fit its " + std::to_string(want) + " bytes or the file's " + std::to_string(file_size));
  return {true, f, static_cast<std::uint64_t>(offset), static_cast<std::uint64_t>(length)};
}

// Everything to_tensor checks, without converting: shape, data type, and
// that the data present matches the shape. Returns the shape.
Shape check_tensor(const std::string& model, const onnx::TensorProto& t, const GraphLimits& limits, const Span& span = {}) {
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
  if (span.set || t.has_raw_data()) {
    const std::uint64_t have = span.set ? span.size : t.raw_data().size();
    if (have != n * esize)
      bad(model, "tensor '" + t.name() + "' declares " + shape_str(s) + " (" + std::to_string(n * esize) + " bytes) but carries " +
                     std::to_string(have) + " bytes");
    return s;
  }
  const std::size_t have = dt == TP::FLOAT    ? static_cast<std::size_t>(t.float_data_size())
                           : dt == TP::DOUBLE ? static_cast<std::size_t>(t.double_data_size())
                           : dt == TP::INT64  ? static_cast<std::size_t>(t.int64_data_size())
                                              : static_cast<std::size_t>(t.int32_data_size());  // INT32, BOOL, UINT8, INT8
  if (have != n) bad(model, "tensor '" + t.name() + "' declares " + std::to_string(n) + " values but carries " + std::to_string(have));
  return s;
}

// Sizes `f` to n zeros, asking for transparent huge pages first where it is
// large: kernels that stream a big tensor as it is (the one-row fully
// connected kernel skipping rows) miss the TLB less (VGG19's first
// classifier layer: 7.6 instead of 8.0 ms), and fewer, larger page faults
// fill it faster.
void resize_for_streaming(std::vector<float>& f, std::size_t n) {
  f.reserve(n);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(f.data());
  const std::uintptr_t first = (begin + kHuge - 1) / kHuge * kHuge, last = (begin + n * sizeof(float)) / kHuge * kHuge;
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);  // advice only
#endif
  f.resize(n);
}

// A float32 [N, K] read from its span as [K, N], a block of rows at a time.
TensorData read_transposed(const SpanReader& in, const Shape& s) {
  const std::int64_t N = s[0], K = s[1];
  TensorData out;
  out.shape = {K, N};
  resize_for_streaming(out.f, static_cast<std::size_t>(N * K));
  constexpr std::int64_t R = 64;  // rows per read: 64 x K floats, each written as 64 floats per column
  std::vector<float> rows(static_cast<std::size_t>(R * K));
  for (std::int64_t n0 = 0; n0 < N; n0 += R) {
    const std::int64_t r = std::min(R, N - n0);
    in.read(static_cast<std::uint64_t>(n0 * K) * 4, rows.data(), static_cast<std::size_t>(r * K) * 4);
    float* dst = out.f.data() + n0;
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < K; ++k)
      for (std::int64_t j = 0; j < r; ++j) dst[k * N + j] = rows[static_cast<std::size_t>(j * K + k)];
  }
  return out;
}

// transposed: a float32 [N, K] initializer is read as [K, N] (see gemm_weights_to_transpose).
TensorData to_tensor(const std::string& model, const onnx::TensorProto& t, const GraphLimits& limits, const Span& span = {},
                     const ModelBytes& src = {}, bool transposed = false) {
  const Shape s = check_tensor(model, t, limits, span);
  const auto n = static_cast<std::size_t>(numel(s));
  using TP = onnx::TensorProto;
  const int dt = t.data_type();
  const std::string* raw = t.has_raw_data() ? &t.raw_data() : nullptr;
  std::string bytes;  // a span's bytes, where they are converted
  if (span.set) {
    const SpanReader in(model, src, span);
    if (transposed) return read_transposed(in, s);
    if (dt == TP::FLOAT) {
      TensorData out;
      out.shape = s;
      resize_for_streaming(out.f, n);
      if (n > 0) in.read(0, out.f.data(), n * 4);
      return out;
    }
    bytes.resize(span.size);
    in.read(0, bytes.data(), bytes.size());
    raw = &bytes;
  }
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

// The model's wire format, copied field by field into a skeleton that the
// protobuf classes then parse, except the large raw data of the main graph's
// initializers: each is skipped (an empty raw_data stays, so that the tensor
// still says where its values are) and its place recorded, in order. Fields
// are copied with protobuf's own wire-format reader, unchanged.
namespace wire {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;

constexpr std::uint32_t kDeferBytes = 16 << 10;  // smaller raw data stays in the skeleton
constexpr int kModelGraph = 7, kGraphInitializer = 5, kTensorRawData = 9;

bool is_message(std::uint32_t tag, int field) {
  return tag == WireFormatLite::MakeTag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
}

// Copies a length-delimited field whose contents `body` rewrites.
template <class Body>
bool rewrite(CodedInputStream& in, CodedOutputStream& out, std::uint32_t tag, Body&& body) {
  std::uint32_t len = 0;
  if (!in.ReadVarint32(&len) || len > static_cast<std::uint32_t>(std::numeric_limits<int>::max())) return false;
  const auto limit = in.PushLimit(static_cast<int>(len));
  std::string inner;
  bool ok;
  {
    google::protobuf::io::StringOutputStream sink(&inner);
    CodedOutputStream o(&sink);
    ok = body(in, o) && in.ConsumedEntireMessage() && in.BytesUntilLimit() == 0;
  }
  in.PopLimit(limit);
  if (!ok) return false;
  out.WriteTag(tag);
  out.WriteVarint32(static_cast<std::uint32_t>(inner.size()));
  out.WriteString(inner);
  return true;
}

// Copies every field, handing those `take` wants to it (it returns whether
// it read them well; nullopt: not its field).
template <class Take>
bool copy_fields(CodedInputStream& in, CodedOutputStream& out, Take&& take) {
  for (;;) {
    const std::uint32_t tag = in.ReadTag();
    if (tag == 0) return true;
    const std::optional<bool> taken = take(tag);
    if (taken.has_value()) {
      if (!*taken) return false;
    } else if (!WireFormatLite::SkipField(&in, tag, &out)) {
      return false;
    }
  }
}

bool tensor(CodedInputStream& in, CodedOutputStream& out, Span& span) {
  return copy_fields(in, out, [&](std::uint32_t tag) -> std::optional<bool> {
    if (!is_message(tag, kTensorRawData)) return std::nullopt;
    std::uint32_t len = 0;
    if (!in.ReadVarint32(&len)) return false;
    span = {};  // the last raw_data counts, as when protobuf parses it
    if (len < kDeferBytes) {
      std::string small;
      if (!in.ReadString(&small, static_cast<int>(len))) return false;
      out.WriteTag(tag);
      out.WriteVarint32(len);
      out.WriteString(small);
      return true;
    }
    span.set = true, span.offset = static_cast<std::uint64_t>(in.CurrentPosition()), span.size = len;
    if (!in.Skip(static_cast<int>(len))) return false;
    out.WriteTag(tag);
    out.WriteVarint32(0);
    return true;
  });
}

bool graph(CodedInputStream& in, CodedOutputStream& out, std::vector<Span>& spans) {
  return copy_fields(in, out, [&](std::uint32_t tag) -> std::optional<bool> {
    if (!is_message(tag, kGraphInitializer)) return std::nullopt;
    spans.emplace_back();
    return rewrite(in, out, tag, [&](CodedInputStream& i, CodedOutputStream& o) { return tensor(i, o, spans.back()); });
  });
}

// The skeleton of the model in `in`, and the spans of its initializers.
bool skeleton(CodedInputStream& in, std::string& skel, std::vector<Span>& spans) {
  in.SetTotalBytesLimit(std::numeric_limits<int>::max());
  google::protobuf::io::StringOutputStream sink(&skel);
  CodedOutputStream out(&sink);  // complete in skel once destroyed
  const bool ok = copy_fields(in, out, [&](std::uint32_t tag) -> std::optional<bool> {
    if (!is_message(tag, kModelGraph)) return std::nullopt;
    return rewrite(in, out, tag, [&](CodedInputStream& i, CodedOutputStream& o) { return graph(i, o, spans); });
  });
  return ok && in.ConsumedEntireMessage() && !out.HadError();
}

}  // namespace wire

void check_size(const std::string& name, std::uint64_t size) {
  if (size > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw Error(ErrorKind::LimitExceeded, name + ": ONNX files over 2 GiB must keep their weights as external data");
}

[[noreturn]] void parse_failed(const std::string& name) {
  bad(name, "not a valid ONNX model (protobuf parse failed; truncated or not ONNX?)");
}

// Large float32 [N, K] initializers read only as the weights of Gemms with
// transB (PyTorch's Linear): read as [K, N] and those Gemms' transB cleared,
// the layout the CPU's one-row kernel streams, so that it runs on the
// tensor itself instead of a transposed copy (VGG19's first classifier
// layer: 411 MB).
std::set<std::string> gemm_weights_to_transpose(const onnx::GraphProto& gp, const std::vector<Span>& spans) {
  std::set<std::string> out, refused;
  for (const onnx::NodeProto& np : gp.node())
    for (int i = 0; i < np.input_size(); ++i) {
      bool ok = i == 1 && np.op_type() == "Gemm" && (np.domain().empty() || np.domain() == "ai.onnx");
      bool trans_b = false;
      for (const onnx::AttributeProto& a : np.attribute()) {
        if (a.name() == "transB") trans_b = a.i() != 0;
        if (a.name() == "alpha" && a.f() != 1.f) ok = false;
      }
      (ok && trans_b ? out : refused).insert(np.input(i));
    }
  for (const onnx::ValueInfoProto& vi : gp.output()) refused.insert(vi.name());
  std::set<std::string> chosen;
  for (int i = 0; i < gp.initializer_size(); ++i) {
    const onnx::TensorProto& t = gp.initializer(i);
    if (spans[static_cast<std::size_t>(i)].set && t.data_type() == onnx::TensorProto::FLOAT && t.dims_size() == 2 &&
        out.count(t.name()) && !refused.count(t.name()))
      chosen.insert(t.name());
  }
  return chosen;
}

// torch's dynamo exporter without its optimizer writes torch.split and
// chunk as SplitToSequence(x, split) read by SequenceAt(seq, i), i a
// constant: each SequenceAt is then the Slice of x it names (and a Squeeze
// where the pieces are single entries without keepdims). vinfer holds no
// sequence values, so any other use of one is refused.
class SequenceSplits {
 public:
  explicit SequenceSplits(const std::string& model) : model_(model) {}

  // A Constant node's int64 value, for the splits and positions read later.
  void note_constant(const onnx::NodeProto& np, const Node& n) {
    const auto it = n.attrs.find("value");
    if (np.output_size() == 1 && it != n.attrs.end())
      if (const auto* t = std::get_if<TensorData>(&it->second); t && t->dtype == DType::I64) ints_[np.output(0)] = *t;
  }
  // Whether `np` was taken here (a SplitToSequence, or a SequenceAt of one).
  bool take(const onnx::NodeProto& np, Graph& g, std::map<std::string, int>& ids) {
    const bool onnx_domain = np.domain().empty() || np.domain() == "ai.onnx";
    const std::string label = "node '" + (np.name().empty() ? np.op_type() : np.name()) + "'";
    if (onnx_domain && np.op_type() == "SplitToSequence") {
      if (np.input_size() < 1 || np.output_size() != 1) bad(model_, label + ": SplitToSequence needs an input and one output");
      const auto x = ids.find(np.input(0));
      if (x == ids.end()) bad(model_, label + " reads '" + np.input(0) + "', which nothing produces");
      Split sp;
      sp.x = x->second;
      for (const onnx::AttributeProto& a : np.attribute()) {
        if (a.name() == "axis") sp.axis = a.i();
        if (a.name() == "keepdims") sp.keepdims = a.i() != 0;
      }
      if (np.input_size() > 1 && !np.input(1).empty()) {
        const TensorData& split = constant_ints(g, ids, np.input(1), label + ": the split");
        sp.sizes = split.i;
        sp.equal = split.shape.empty();
        if (sp.sizes.empty() || *std::min_element(sp.sizes.begin(), sp.sizes.end()) < 1)
          bad(model_, label + ": split sizes must be positive");
      }
      sequences_[np.output(0)] = sp;
      return true;
    }
    for (const std::string& in : np.input())
      if (sequences_.count(in) && !(onnx_domain && np.op_type() == "SequenceAt"))
        throw Error(ErrorKind::Unsupported, model_ + ": " + label + " (" + np.op_type() + ") reads the sequence '" + in +
                                                "'; vinfer reads sequences only through SequenceAt");
    if (!(onnx_domain && np.op_type() == "SequenceAt") || np.input_size() != 2 || !sequences_.count(np.input(0))) return false;
    const Split& sp = sequences_.at(np.input(0));
    const std::vector<std::int64_t>& at = constant_ints(g, ids, np.input(1), label + ": the position").i;
    if (at.size() != 1) bad(model_, label + ": the position must be one value");
    std::int64_t k = at[0], begin = 0, end = 0;
    if (!sp.equal) {
      const auto count = static_cast<std::int64_t>(sp.sizes.size());
      if (k < -count || k >= count) bad(model_, label + ": position " + std::to_string(k) + " of " + std::to_string(count) + " pieces");
      if (k < 0) k += count;
      for (std::int64_t j = 0; j <= k; ++j) {
        begin = end;
        if (__builtin_add_overflow(begin, sp.sizes[static_cast<std::size_t>(j)], &end)) bad(model_, label + ": split sizes overflow");
      }
    } else {
      // (Pieces of one size: how many depends on the input's shape.)
      if (k < 0) throw Error(ErrorKind::Unsupported, model_ + ": " + label + ": a negative position in a split of equal pieces");
      const std::int64_t size = sp.sizes.empty() ? 1 : sp.sizes[0];
      if (__builtin_mul_overflow(k, size, &begin) || __builtin_add_overflow(begin, size, &end))
        bad(model_, label + ": position " + std::to_string(k) + " overflows");
    }
    const std::string out = np.output_size() == 1 ? np.output(0) : "";
    if (out.empty() || ids.count(out)) bad(model_, label + ": SequenceAt needs one new output");
    const bool squeeze = sp.sizes.empty() && !sp.keepdims;
    const int sliced = g.add_value(squeeze ? out + "/piece" : out);
    auto ints = [&](const char* what, std::vector<std::int64_t> v) {
      const auto n = static_cast<std::int64_t>(v.size());
      return g.add_constant(out + "/" + what, TensorData::i64({n}, std::move(v)));
    };
    Node slice;
    slice.op = "Slice";
    slice.name = np.name().empty() ? out : np.name();
    slice.inputs = {sp.x, ints("starts", {begin}), ints("ends", {end}), ints("axes", {sp.axis})};
    slice.outputs = {sliced};
    g.nodes.push_back(std::move(slice));
    if (squeeze) {
      Node sq;
      sq.op = "Squeeze";
      sq.name = out + "/squeeze";
      sq.inputs = {sliced, ints("squeeze_axes", {sp.axis})};
      sq.outputs = {g.add_value(out)};
      g.nodes.push_back(std::move(sq));
    }
    ids[out] = g.nodes.back().outputs[0];
    return true;
  }
  bool is_sequence(const std::string& value) const { return sequences_.count(value) != 0; }

 private:
  struct Split {
    int x = -1;
    std::int64_t axis = 0;
    bool keepdims = true;
    bool equal = true;                // pieces of sizes[0] (or of 1 where none is given), else one size each
    std::vector<std::int64_t> sizes;
  };
  const TensorData& constant_ints(const Graph& g, const std::map<std::string, int>& ids, const std::string& value,
                                  const std::string& what) const {
    if (const auto it = ints_.find(value); it != ints_.end()) return it->second;
    const auto id = ids.find(value);
    const TensorData* t = id == ids.end() ? nullptr : g.constant(id->second);
    if (!t || t->dtype != DType::I64) throw Error(ErrorKind::Unsupported, model_ + ": " + what + " must be a constant integer");
    return *t;
  }
  const std::string& model_;
  std::map<std::string, TensorData> ints_;
  std::map<std::string, Split> sequences_;
};

// The element type of a graph input or output, or Unsupported naming it.
ElementType boundary_type(const std::string& model, const char* what, const std::string& value, int elem) {
  using TP = onnx::TensorProto;
  switch (elem) {
    case TP::FLOAT: return ElementType::Float32;
    case TP::INT64: return ElementType::Int64;
    case TP::INT32: return ElementType::Int32;
    case TP::BOOL: return ElementType::Bool;
    case TP::UINT8: return ElementType::UInt8;
    case TP::INT8: return ElementType::Int8;
    case TP::INT16: return ElementType::Int16;
    case TP::UINT16: return ElementType::UInt16;
    case TP::UINT32: return ElementType::UInt32;
    default: break;
  }
  const std::string type = TP::DataType_IsValid(elem) ? TP::DataType_Name(static_cast<TP::DataType>(elem)) : std::to_string(elem);
  throw Error(ErrorKind::Unsupported, model + ": " + what + " '" + value + "' is of type " + type +
                                          " (vinfer takes and gives float32 and the integer types that int64 holds: int64, int32, int16, int8, uint32, uint16, uint8, bool)");
}

Graph import_model(onnx::ModelProto& model, const std::string& name, const std::string& dir, const GraphLimits& limits,
                   StageClock& clock, std::vector<Span> spans, const ModelBytes& src) {
  if (!model.has_graph()) bad(name, "the ONNX model has no graph");
  std::int64_t opset = -1;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  // (Opsets 22 and 23 changed no operator vinfer reads but for the types they take; 23 added Attention.)
  if (opset < 7 || opset > 23)
    throw Error(ErrorKind::Unsupported, name + ": ONNX opset " + std::to_string(opset) + " (vinfer reads opsets 7 to 23)");
  // Debian's libonnx 1.12 knows IR 8 and opset 17: its checker refuses newer
  // models outright, so for them vinfer's own checks (each initializer here,
  // each node in shape inference) are the only ones.
  const bool newer_than_libonnx = opset > 17 || model.ir_version() > 8;

  if (model.graph().node_size() > limits.max_nodes)
    throw Error(ErrorKind::LimitExceeded, name + ": " + std::to_string(model.graph().node_size()) +
                                              " nodes, more than the limit " + std::to_string(limits.max_nodes));

  auto* inits = model.mutable_graph()->mutable_initializer();
  if (spans.size() != static_cast<std::size_t>(inits->size())) parse_failed(name);
  // External data is located (and confined to the model's folder) here, and
  // read when converted, like large raw data. ONNX's checker, which knows no
  // folder, sees plain tensors: each with a one-byte placeholder (it wants
  // raw data present and does not compare its size; vinfer's checks do).
  for (int i = 0; i < inits->size(); ++i) {
    onnx::TensorProto& t = *inits->Mutable(i);
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    const Shape s = checked_dims(name, t, limits);
    const std::size_t esize = t.data_type() == onnx::TensorProto::FLOAT || t.data_type() == onnx::TensorProto::INT32 ? 4
                              : t.data_type() == onnx::TensorProto::INT64 || t.data_type() == onnx::TensorProto::DOUBLE ? 8 : 1;
    spans[static_cast<std::size_t>(i)] = external_span(name, dir, t, static_cast<std::size_t>(numel(s)) * esize);
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
  }
  for (int i = 0; i < inits->size(); ++i)
    if (spans[static_cast<std::size_t>(i)].set) inits->Mutable(i)->set_raw_data(std::string(1, '\0'));
  // vinfer's own checks of the initializers come before the checks on the whole model.
  for (int i = 0; i < inits->size(); ++i) check_tensor(name, inits->Get(i), limits, spans[static_cast<std::size_t>(i)]);
  // Window attributes are divisors: checked before anything computes with them.
  for (const onnx::NodeProto& np : model.graph().node())
    for (const onnx::AttributeProto& a : np.attribute()) {
      const std::string& k = a.name();
      if (k != "strides" && k != "dilations" && k != "kernel_shape" && k != "group") continue;
      bool ok = a.type() != onnx::AttributeProto::INT || a.i() >= 1;
      for (std::int64_t v : a.ints()) ok &= v >= 1;
      if (!ok) bad(name, "node '" + (np.name().empty() ? np.op_type() : np.name()) + "': attribute '" + k + "' must be positive");
    }
  // Operators vinfer does not run are refused before libonnx's checker sees
  // them (their answer is a refusal either way). libonnx's shape inference is
  // not run at all: its functions crash on hostile input (STFT's, found by
  // fuzz_onnx), and vinfer's own shape inference checks every node it runs.
  for (const onnx::NodeProto& np : model.graph().node()) {
    const bool onnx_domain = np.domain().empty() || np.domain() == "ai.onnx";
    const std::string op = onnx_domain ? np.op_type() : np.domain() + "." + np.op_type();
    if (detail::find_op(op) || (onnx_domain && (op == "SplitToSequence" || op == "SequenceAt"))) continue;
    const std::string node = np.name().empty() ? (np.output_size() ? np.output(0) : op) : np.name();
    throw Error(ErrorKind::Unsupported, name + ": operator " + op + " (node '" + node + "') is not supported by vinfer");
  }
  try {
    if (!newer_than_libonnx) {
      onnx::checker::check_model(model);
    }
  } catch (const std::exception& e) {
    std::string msg = e.what();
    if (auto nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
    bad(name, "ONNX checker: " + msg);
  }
  clock.lap("check");
  const onnx::GraphProto& gp = model.graph();
  Graph g;
  g.name = gp.name().empty() ? name : gp.name();
  g.opset = static_cast<int>(opset);
  std::map<std::string, int> ids;
  std::int64_t bytes = 0;
  const std::set<std::string> transposed = gemm_weights_to_transpose(gp, spans);
  const int count = inits->size();
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    const onnx::TensorProto& t = inits->Get(i);
    std::int64_t elements = 1;
    for (std::int64_t d : t.dims()) elements *= d;  // bounded by check_tensor
    sizes[static_cast<std::size_t>(i)] = elements * (t.data_type() == onnx::TensorProto::FLOAT ? 4 : 8);
    bytes += sizes[static_cast<std::size_t>(i)];
    if (bytes > limits.max_total_bytes) throw Error(ErrorKind::LimitExceeded, name + ": weights exceed the model size limit");
  }
  // Converted on every core, largest first (reading fresh memory is bound by
  // page faults, which cores take in parallel: ResNet50's 97 MiB 1.6x faster).
  std::vector<int> order(static_cast<std::size_t>(count));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return sizes[static_cast<std::size_t>(a)] > sizes[static_cast<std::size_t>(b)]; });
  std::vector<TensorData> tensors(static_cast<std::size_t>(count));
  auto convert = [&](std::size_t i, bool transpose) {
    onnx::TensorProto& t = *inits->Mutable(static_cast<int>(i));
    tensors[i] = to_tensor(name, t, limits, spans[i], src, transpose);
    std::string().swap(*t.mutable_raw_data());
  };
  // The transposed ones (read_transposed: an OpenMP loop) on this thread:
  // on a pool thread that loop would start a second OpenMP team, and with
  // more OpenMP threads than cores libgomp sleeps instead of spinning at
  // every barrier of the network's kernels afterwards (MobileNetV3-Small:
  // 4.8 ms a pass instead of 1.4 on 2 cores).
  std::vector<int> rest;
  for (int i : order) {
    if (transposed.count(inits->Get(i).name())) convert(static_cast<std::size_t>(i), true);
    else rest.push_back(i);
  }
  std::atomic<int> next{0};
  const int left = static_cast<int>(rest.size());
  const int workers = std::min(hardware_threads(), std::max(left, 1));
  parallel_for(workers, workers, [&](int, int) {
    for (int j; (j = next++) < left;) convert(static_cast<std::size_t>(rest[static_cast<std::size_t>(j)]), false);
  });
  for (int i = 0; i < count; ++i)
    ids[inits->Get(i).name()] = g.add_constant(inits->Get(i).name(), std::move(tensors[static_cast<std::size_t>(i)]));
  for (const onnx::ValueInfoProto& vi : gp.input()) {
    if (ids.count(vi.name())) continue;  // older exporters list initializers as inputs too
    const auto& tt = vi.type().tensor_type();
    if (!vi.type().has_tensor_type())
      throw Error(ErrorKind::Unsupported, name + ": input '" + vi.name() + "' is not a tensor (a sequence, map or optional)");
    const ElementType type = boundary_type(name, "input", vi.name(), tt.elem_type());
    Shape s, fixed;  // symbolic dimensions as -1 (set_batch fixes them), and as 1 for the size check
    for (const auto& d : tt.shape().dim()) {
      s.push_back(d.has_dim_value() ? d.dim_value() : -1);
      fixed.push_back(d.has_dim_value() ? d.dim_value() : 1);
    }
    if (!dims_fit(fixed, limits.max_tensor_elements))
      throw Error(ErrorKind::LimitExceeded, name + ": input '" + vi.name() + "' " + shape_str(s) + " exceeds the tensor element limit");
    ids[vi.name()] = g.add_input(vi.name(), s, type);
  }
  SequenceSplits sequences(name);
  for (const onnx::NodeProto& np : gp.node()) {
    if (sequences.take(np, g, ids)) continue;
    Node n;
    n.op = np.domain().empty() || np.domain() == "ai.onnx" ? np.op_type() : np.domain() + "." + np.op_type();
    n.name = np.name().empty() ? (np.output_size() ? np.output(0) : n.op) : np.name();
    const detail::OpDef* def = detail::find_op(n.op);
    if (!def) throw Error(ErrorKind::Unsupported, name + ": operator " + n.op + " (node '" + n.name + "') is not supported by vinfer");
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
    if (n.op == "Gemm" && n.inputs.size() > 1 && transposed.count(np.input(1))) n.attrs["transB"] = std::int64_t{0};
    // Opset differences into the attributes the rest of vinfer reads (the operator's own rule).
    if (def->from_onnx) {
      try {
        def->from_onnx(n, opset);
      } catch (const Error& e) {
        throw Error(e.kind(), name + ": " + e.what());
      }
    }
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
    if (n.op == "Constant") sequences.note_constant(np, n);
    g.nodes.push_back(std::move(n));
  }
  for (const onnx::ValueInfoProto& vi : gp.output()) {
    if (sequences.is_sequence(vi.name()))
      throw Error(ErrorKind::Unsupported, name + ": graph output '" + vi.name() + "' is a sequence, which vinfer does not return");
    auto it = ids.find(vi.name());
    if (it == ids.end()) bad(name, "graph output '" + vi.name() + "' is never produced");
    if (vi.type().has_sequence_type() || vi.type().has_map_type() || vi.type().has_optional_type())
      throw Error(ErrorKind::Unsupported, name + ": graph output '" + vi.name() + "' is not a tensor, which vinfer does not return");
    const int elem = vi.type().tensor_type().elem_type();
    g.output_types.resize(g.outputs.size(), ElementType::Float32);
    g.mark_output(it->second);
    // (an output declared without a type is taken as float32, and checked against what it is)
    g.output_types.push_back(elem == onnx::TensorProto::UNDEFINED ? ElementType::Float32
                                                                   : boundary_type(name, "output", vi.name(), elem));
  }
  clock.lap("convert");
  return g;
}

}  // namespace

Graph import_onnx(const std::uint8_t* data, std::size_t size, const std::string& name, const std::string& dir,
                  const GraphLimits& limits, StageTimes* times) {
  StageClock clock(times);
  check_size(name, size);
  google::protobuf::io::CodedInputStream in(data, static_cast<int>(size));
  std::string skel;
  std::vector<Span> spans;
  onnx::ModelProto model;
  if (!wire::skeleton(in, skel, spans) || !model.ParseFromString(skel)) parse_failed(name);
  clock.lap("read");
  return import_model(model, name, dir, limits, clock, std::move(spans), ModelBytes{nullptr, data, size});
}

Graph import_onnx_file(const std::string& path, const std::string& dir, const GraphLimits& limits,
                       std::uint64_t max_file_bytes, StageTimes* times) {
  StageClock clock(times);
  const InputFile file(path, max_file_bytes);
  check_size(path, file.size());
  google::protobuf::io::FileInputStream stream(file.fd());
  std::string skel;
  std::vector<Span> spans;
  {
    google::protobuf::io::CodedInputStream in(&stream);
    if (!wire::skeleton(in, skel, spans)) parse_failed(path);
  }
  onnx::ModelProto model;
  if (stream.GetErrno() != 0 || !model.ParseFromString(skel)) parse_failed(path);
  for (const Span& s : spans)
    if (s.set && s.offset + s.size > file.size()) parse_failed(path);
  clock.lap("read");
  return import_model(model, path, dir, limits, clock, std::move(spans), ModelBytes{&file, nullptr, file.size()});
}

}  // namespace vinfer::detail
