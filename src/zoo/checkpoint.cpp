#include "zoo/checkpoint.hpp"

#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <set>

#include <nlohmann/json.hpp>

#include "util/checked.hpp"
#include "util/file_io.hpp"
#include "vinfer/error.hpp"

namespace vinfer::zoo {
namespace {

[[noreturn]] void bad(const std::string& name, const std::string& msg) { throw Error(ErrorKind::BadInput, name + ": " + msg); }

std::uint64_t rd_le(const std::uint8_t* p, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A checkpoint's bytes: in memory, or a file read piece by piece where they
// are needed (the weights straight into their tensors; a file that shrinks
// meanwhile is a clear error, not a fault as it would be if mapped).
class Source {
 public:
  Source(const std::uint8_t* d, std::size_t n, const std::string& name) : d_(d), n_(n), name_(name) {}
  Source(const detail::InputFile& f, const std::string& name) : file_(&f), n_(f.size()), name_(name) {}
  std::uint64_t size() const { return n_; }
  // Copies [off, off + len) into dst; throws BadInput if that is outside the data.
  void read(std::uint64_t off, void* dst, std::size_t len) const {
    if (off > n_ || len > n_ - off) bad(name_, "corrupt file (data outside it)");
    if (len == 0) return;
    if (file_) file_->read_at(off, dst, len);
    else std::memcpy(dst, d_ + off, len);
  }
  std::vector<std::uint8_t> bytes(std::uint64_t off, std::size_t len) const {
    if (off > n_ || len > n_ - off) bad(name_, "corrupt file (data outside it)");
    std::vector<std::uint8_t> v(len);
    read(off, v.data(), len);
    return v;
  }

 private:
  const detail::InputFile* file_ = nullptr;
  const std::uint8_t* d_ = nullptr;
  std::uint64_t n_ = 0;
  const std::string& name_;
};

// ---------------------------------------------------------------- element types

enum class Elem { F32, F16, BF16, F64, I64, I32, I16, I8, U8, Bool };

std::size_t elem_size(Elem e) {
  switch (e) {
    case Elem::F64: case Elem::I64: return 8;
    case Elem::F32: case Elem::I32: return 4;
    case Elem::F16: case Elem::BF16: case Elem::I16: return 2;
    default: return 1;
  }
}

bool is_float(Elem e) { return e == Elem::F32 || e == Elem::F16 || e == Elem::BF16 || e == Elem::F64; }

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      std::uint32_t m = man;
      do {
        ++e;
        m <<= 1;
      } while ((m & 0x400u) == 0);
      bits = sign | static_cast<std::uint32_t>(127 - 15 - e) << 23 | (m & 0x3ffu) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | man << 13;
  } else {
    bits = sign | (exp + 112) << 23 | man << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Reads element i of a little-endian array as float or int64.
double elem_f(const std::uint8_t* p, Elem e, std::size_t i) {
  const std::uint8_t* q = p + i * elem_size(e);
  switch (e) {
    case Elem::F32: { float f; std::memcpy(&f, q, 4); return f; }
    case Elem::F64: { double d; std::memcpy(&d, q, 8); return d; }
    case Elem::F16: return half_to_float(static_cast<std::uint16_t>(rd_le(q, 2)));
    case Elem::BF16: { const std::uint32_t b = static_cast<std::uint32_t>(rd_le(q, 2)) << 16; float f; std::memcpy(&f, &b, 4); return f; }
    default: return 0;
  }
}

std::int64_t elem_i(const std::uint8_t* p, Elem e, std::size_t i) {
  const std::uint8_t* q = p + i * elem_size(e);
  switch (e) {
    case Elem::I64: return static_cast<std::int64_t>(rd_le(q, 8));
    case Elem::I32: return static_cast<std::int32_t>(rd_le(q, 4));
    case Elem::I16: return static_cast<std::int16_t>(rd_le(q, 2));
    case Elem::I8: return static_cast<std::int8_t>(*q);
    default: return *q;
  }
}

// Where a tensor's storage is: `elems` elements of type `elem` from byte
// `offset` of the source.
struct Storage {
  const Source* src = nullptr;
  std::uint64_t offset = 0;
  std::size_t elems = 0;
  Elem elem = Elem::F32;
};

// A tensor from its storage with sizes/strides in elements; every index is
// bounds-checked. A row-major float32 tensor is read straight into place;
// others through a copy of the part of the storage they cover.
TensorData make_tensor(const std::string& name, const std::string& key, const Storage& st, std::int64_t offset,
                       const std::vector<std::int64_t>& size, const std::vector<std::int64_t>& stride, bool transpose) {
  if (transpose && size.size() == 2 && stride.size() == 2) {  // as a view with the strides swapped, read as row-major
    return make_tensor(name, key, st, offset, {size[1], size[0]}, {stride[1], stride[0]}, false);
  }
  if (size.size() != stride.size()) bad(name, "tensor '" + key + "' has sizes and strides of different ranks");
  TensorData t;
  const Elem e = st.elem;
  t.dtype = is_float(e) ? DType::F32 : DType::I64;
  std::int64_t n = 1, last = offset;
  bool row_major = true;
  for (std::size_t d = size.size(); d-- > 0;) {
    if (size[d] != 1 && stride[d] != n) row_major = false;
    if (size[d] < 0 || stride[d] < 0) bad(name, "tensor '" + key + "' has a negative size or stride");
    if (size[d] > 0 && n > (std::int64_t{1} << 40) / size[d]) bad(name, "tensor '" + key + "' is too large");
    n *= size[d];
    std::int64_t reach = 0;
    if (size[d] > 0 && (__builtin_mul_overflow(size[d] - 1, stride[d], &reach) || __builtin_add_overflow(last, reach, &last)))
      bad(name, "tensor '" + key + "' reads past the end of its storage");
  }
  t.shape = size;
  if (offset < 0 || (n > 0 && static_cast<std::uint64_t>(last) >= st.elems))
    bad(name, "tensor '" + key + "' reads past the end of its storage");
  const std::size_t es = elem_size(e);
  if (t.dtype == DType::F32) t.f.resize(static_cast<std::size_t>(n));
  else t.i.resize(static_cast<std::size_t>(n));
  if (n == 0) return t;
  if (e == Elem::F32 && row_major) {
    st.src->read(st.offset + static_cast<std::uint64_t>(offset) * 4, t.f.data(), static_cast<std::size_t>(n) * 4);
    return t;
  }
  if (e == Elem::F32 && size.size() == 2 && stride[0] == 1 && stride[1] == size[0]) {
    // A transposed matrix (a Linear's weights, read as the graph holds
    // them): a block of the stored rows at a time, each written as a column.
    const std::int64_t rows = size[1], cols = size[0];  // as stored
    constexpr std::int64_t R = 64;
    std::vector<float> block(static_cast<std::size_t>(R * cols));
    for (std::int64_t r0 = 0; r0 < rows; r0 += R) {
      const std::int64_t r = std::min(R, rows - r0);
      st.src->read(st.offset + static_cast<std::uint64_t>(offset + r0 * cols) * 4, block.data(), static_cast<std::size_t>(r * cols) * 4);
      for (std::int64_t c = 0; c < cols; ++c)
        for (std::int64_t j = 0; j < r; ++j) t.f[static_cast<std::size_t>(c * rows + r0 + j)] = block[static_cast<std::size_t>(j * cols + c)];
    }
    return t;
  }
  const std::vector<std::uint8_t> data =
      st.src->bytes(st.offset + static_cast<std::uint64_t>(offset) * es, static_cast<std::size_t>(last - offset + 1) * es);
  std::vector<std::int64_t> idx(size.size(), 0);
  for (std::int64_t k = 0; k < n; ++k) {
    std::int64_t src = 0;
    for (std::size_t d = 0; d < idx.size(); ++d) src += idx[d] * stride[d];
    if (t.dtype == DType::F32) t.f[static_cast<std::size_t>(k)] = static_cast<float>(elem_f(data.data(), e, static_cast<std::size_t>(src)));
    else t.i[static_cast<std::size_t>(k)] = elem_i(data.data(), e, static_cast<std::size_t>(src));
    for (std::size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < size[d]) break;
      idx[d] = 0;
    }
  }
  return t;
}

// ---------------------------------------------------------------- pickle

// Pickle values live in an arena owned by the caller and point at each other with
// raw pointers: a hostile pickle can build cycles (a list that holds itself),
// which reference counting would leak (found by fuzz_checkpoint).
struct PV;
using PVp = PV*;
struct PV {
  enum Kind { None, Bool, Int, Float, Str, Tuple, List, Dict, Global, Storage, Tensor, Mark } kind = None;
  std::int64_t i = 0;
  double f = 0;
  std::string s, s2;  // Str: s; Global: module s, name s2; Storage: key s, element type via elem
  std::vector<PVp> items;
  std::vector<std::pair<PVp, PVp>> dict;
  Elem elem = Elem::F32;  // Storage
  PVp storage;            // Tensor
  std::int64_t offset = 0;
  std::vector<std::int64_t> size, stride;
};

struct Arena {
  std::deque<PV> all;
  PVp mk(PV::Kind k) {
    all.emplace_back();
    all.back().kind = k;
    return &all.back();
  }
};

const std::map<std::string, Elem>& storage_types() {
  static const std::map<std::string, Elem> m = {
      {"FloatStorage", Elem::F32}, {"HalfStorage", Elem::F16}, {"BFloat16Storage", Elem::BF16}, {"DoubleStorage", Elem::F64},
      {"LongStorage", Elem::I64},  {"IntStorage", Elem::I32},  {"ShortStorage", Elem::I16},      {"CharStorage", Elem::I8},
      {"ByteStorage", Elem::U8},   {"BoolStorage", Elem::Bool}};
  return m;
}

bool allowed_global(const std::string& mod, const std::string& name) {
  if (mod == "collections" && name == "OrderedDict") return true;
  if (mod == "torch._utils" && (name == "_rebuild_tensor_v2" || name == "_rebuild_parameter")) return true;
  if (mod == "torch" && storage_types().count(name)) return true;
  return false;
}

class Unpickler {
 public:
  Unpickler(const std::uint8_t* p, std::size_t n, const std::string& name, Arena& arena)
      : p_(p), end_(p + n), name_(name), arena_(arena) {}
  // Persistent ids ('storage', type, key, location, numel[, view]) become Storage values.
  PVp load() {
    while (true) {
      const std::uint8_t op = byte();
      switch (op) {
        case 0x80: byte(); break;                              // PROTO
        case 0x95: take(8); break;                             // FRAME
        case '}': push(mk(PV::Dict)); break;                   // EMPTY_DICT
        case ']': push(mk(PV::List)); break;                   // EMPTY_LIST
        case ')': push(mk(PV::Tuple)); break;                  // EMPTY_TUPLE
        case 'N': push(mk(PV::None)); break;
        case 0x88: case 0x89: { auto v = mk(PV::Bool); v->i = op == 0x88; push(v); break; }
        case 'K': push_int(byte()); break;                                               // BININT1
        case 'M': push_int(static_cast<std::int64_t>(rd_le(take(2), 2))); break;         // BININT2
        case 'J': push_int(static_cast<std::int32_t>(rd_le(take(4), 4))); break;         // BININT
        case 0x8a: {                                                                     // LONG1
          const std::size_t n = byte();
          const std::uint8_t* q = take(n);
          if (n > 8) {  // only the legacy format's magic number is this wide: kept as bytes
            auto v = mk(PV::Int);
            v->s.assign(reinterpret_cast<const char*>(q), n);
            push(v);
            break;
          }
          std::uint64_t v = n ? rd_le(q, static_cast<int>(n)) : 0;
          if (n && n < 8 && (q[n - 1] & 0x80)) v |= ~std::uint64_t{0} << (8 * n);  // sign-extend
          push_int(static_cast<std::int64_t>(v));
          break;
        }
        case 'G': {                                                                      // BINFLOAT (big-endian)
          const std::uint8_t* q = take(8);
          std::uint64_t b = 0;
          for (int k = 0; k < 8; ++k) b = b << 8 | q[k];
          auto v = mk(PV::Float);
          std::memcpy(&v->f, &b, 8);
          push(v);
          break;
        }
        case 'X': push_str(static_cast<std::size_t>(rd_le(take(4), 4))); break;          // BINUNICODE
        case 0x8c: push_str(byte()); break;                                              // SHORT_BINUNICODE
        case 0x8d: push_str(static_cast<std::size_t>(rd_le(take(8), 8))); break;         // BINUNICODE8
        case 'T': push_str(static_cast<std::size_t>(rd_le(take(4), 4))); break;          // BINSTRING
        case 'U': push_str(byte()); break;                                               // SHORT_BINSTRING
        case 'B': push_str(static_cast<std::size_t>(rd_le(take(4), 4))); break;          // BINBYTES
        case 'C': push_str(byte()); break;                                               // SHORT_BINBYTES
        case 'q': memo(byte()); break;                                                   // BINPUT
        case 'r': memo(static_cast<std::uint32_t>(rd_le(take(4), 4))); break;            // LONG_BINPUT
        case 0x94: memo(static_cast<std::uint32_t>(memo_.size())); break;               // MEMOIZE
        case 'h': get(byte()); break;                                                    // BINGET
        case 'j': get(static_cast<std::uint32_t>(rd_le(take(4), 4))); break;             // LONG_BINGET
        case '(': push(mk(PV::Mark)); break;
        case 't': { auto v = mk(PV::Tuple); v->items = pop_mark(); push(v); break; }
        case 0x85: case 0x86: case 0x87: {                                               // TUPLE1..3
          auto v = mk(PV::Tuple);
          v->items.resize(op - 0x84u);
          for (std::size_t k = v->items.size(); k-- > 0;) v->items[k] = pop();
          push(v);
          break;
        }
        case 'a': { PVp x = pop(); list_of(top())->items.push_back(x); break; }         // APPEND
        case 'e': { auto xs = pop_mark(); auto& l = list_of(top())->items; l.insert(l.end(), xs.begin(), xs.end()); break; }
        case 's': { PVp v = pop(), k = pop(); dict_of(top())->dict.emplace_back(k, v); break; }  // SETITEM
        case 'u': {                                                                      // SETITEMS
          auto xs = pop_mark();
          if (xs.size() % 2) fail("SETITEMS with an odd number of items");
          for (std::size_t k = 0; k < xs.size(); k += 2) dict_of(top())->dict.emplace_back(xs[k], xs[k + 1]);
          break;
        }
        case 'c': {                                                                      // GLOBAL
          auto g = mk(PV::Global);
          g->s = line();
          g->s2 = line();
          check_global(*g);
          push(g);
          break;
        }
        case 0x93: {                                                                     // STACK_GLOBAL
          PVp nm = pop(), mod = pop();
          if (nm->kind != PV::Str || mod->kind != PV::Str) fail("STACK_GLOBAL without strings");
          auto g = mk(PV::Global);
          g->s = mod->s;
          g->s2 = nm->s;
          check_global(*g);
          push(g);
          break;
        }
        case 'Q': push(persistent(pop())); break;                                        // BINPERSID
        case 'R': case 0x81: { PVp args = pop(), fn = pop(); push(call(fn, args)); break; }  // REDUCE, NEWOBJ
        case 'b': pop(); break;  // BUILD: object state (e.g. a state dict's _metadata) is not needed
        case '.': {
          if (stack_.size() != 1) fail("pickle ends with " + std::to_string(stack_.size()) + " values on the stack");
          return stack_.back();
        }
        default: fail("unsupported pickle opcode 0x" + hex(op));
      }
      if (stack_.size() > 100000) fail("pickle stack too deep");
    }
  }
  std::size_t consumed(const std::uint8_t* begin) const { return static_cast<std::size_t>(p_ - begin); }

 private:
  [[noreturn]] void fail(const std::string& msg) { bad(name_, "checkpoint pickle: " + msg); }
  static std::string hex(unsigned v) {
    const char* d = "0123456789abcdef";
    return {d[(v >> 4) & 15], d[v & 15]};
  }
  std::uint8_t byte() { return *take(1); }
  const std::uint8_t* take(std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n) fail("truncated");
    const std::uint8_t* q = p_;
    p_ += n;
    return q;
  }
  std::string line() {
    const std::uint8_t* q = p_;
    while (p_ < end_ && *p_ != '\n') ++p_;
    if (p_ == end_) fail("truncated");
    std::string s(reinterpret_cast<const char*>(q), static_cast<std::size_t>(p_ - q));
    ++p_;
    return s;
  }
  void push(PVp v) { stack_.push_back(std::move(v)); }
  void push_int(std::int64_t i) {
    auto v = mk(PV::Int);
    v->i = i;
    push(v);
  }
  void push_str(std::size_t n) {
    auto v = mk(PV::Str);
    const std::uint8_t* q = take(n);
    v->s.assign(reinterpret_cast<const char*>(q), n);
    push(v);
  }
  PVp pop() {
    if (stack_.empty() || stack_.back()->kind == PV::Mark) fail("stack underflow");
    PVp v = stack_.back();
    stack_.pop_back();
    return v;
  }
  PVp& top() {
    if (stack_.empty()) fail("stack underflow");
    return stack_.back();
  }
  std::vector<PVp> pop_mark() {
    std::size_t k = stack_.size();
    while (k > 0 && stack_[k - 1]->kind != PV::Mark) --k;
    if (k == 0) fail("no MARK");
    std::vector<PVp> xs(stack_.begin() + static_cast<std::ptrdiff_t>(k), stack_.end());
    stack_.resize(k - 1);
    return xs;
  }
  PVp list_of(PVp& v) {
    if (v->kind != PV::List) fail("APPEND to a non-list");
    return v;
  }
  PVp dict_of(PVp& v) {
    if (v->kind != PV::Dict) fail("SETITEM on a non-dict");
    return v;
  }
  void memo(std::uint32_t k) {
    if (memo_.size() > 10000000) fail("memo too large");
    memo_[k] = top();
  }
  void get(std::uint32_t k) {
    auto it = memo_.find(k);
    if (it == memo_.end()) fail("memo key " + std::to_string(k) + " missing");
    push(it->second);
  }
  void check_global(const PV& g) {
    if (!allowed_global(g.s, g.s2))
      throw Error(ErrorKind::BadInput, name_ + ": refused: the checkpoint names the global '" + g.s + "." + g.s2 +
                                           "', which is not a tensor or state dict (vinfer never runs code from a checkpoint)");
  }
  PVp persistent(const PVp& pid) {
    if (pid->kind != PV::Tuple || pid->items.size() < 5 || pid->items[0]->kind != PV::Str || pid->items[0]->s != "storage")
      fail("unknown persistent id");
    const PVp& type = pid->items[1];
    const PVp& key = pid->items[2];
    const PVp& numel = pid->items[4];
    if (type->kind != PV::Global || key->kind != PV::Str || numel->kind != PV::Int) fail("malformed storage reference");
    const auto elem = storage_types().find(type->s2);
    if (elem == storage_types().end()) fail("persistent id names '" + type->s2 + "', which is not a storage type");
    auto st = mk(PV::Storage);
    st->s = key->s;
    st->elem = elem->second;
    st->i = numel->i;
    return st;
  }
  PVp call(const PVp& fn, const PVp& args) {
    if (fn->kind != PV::Global || args->kind != PV::Tuple) fail("REDUCE of a non-global");
    const auto& a = args->items;
    if (fn->s2 == "OrderedDict") return mk(PV::Dict);
    if (fn->s2 == "_rebuild_parameter") {
      if (a.empty() || a[0]->kind != PV::Tensor) fail("_rebuild_parameter without a tensor");
      return a[0];
    }
    if (fn->s2 == "_rebuild_tensor_v2") {
      if (a.size() < 4 || a[0]->kind != PV::Storage || a[1]->kind != PV::Int || a[2]->kind != PV::Tuple || a[3]->kind != PV::Tuple)
        fail("malformed _rebuild_tensor_v2");
      auto t = mk(PV::Tensor);
      t->storage = a[0];
      t->offset = a[1]->i;
      for (const PVp& d : a[2]->items) {
        if (d->kind != PV::Int) fail("non-integer tensor size");
        t->size.push_back(d->i);
      }
      for (const PVp& d : a[3]->items) {
        if (d->kind != PV::Int) fail("non-integer tensor stride");
        t->stride.push_back(d->i);
      }
      return t;
    }
    fail("cannot call " + fn->s + "." + fn->s2);
  }

  PVp mk(PV::Kind k) { return arena_.mk(k); }

  const std::uint8_t* p_;
  const std::uint8_t* end_;
  std::string name_;
  Arena& arena_;
  std::vector<PVp> stack_;
  std::map<std::uint32_t, PVp> memo_;
};

// The state dict inside what was pickled: the dict itself, or its "state_dict"/"model" entry.
const PV& find_state_dict(const PV& root, const std::string& name) {
  if (root.kind != PV::Dict) bad(name, "the checkpoint does not hold a state dict");
  for (const auto& [k, v] : root.dict)
    if (k->kind == PV::Str && (k->s == "state_dict" || k->s == "model") && v->kind == PV::Dict) return *v;
  return root;
}

// storage key -> where its elements are
using StorageFn = std::function<Storage(const PV& storage)>;

StateDict to_state_dict(const PV& root, const std::string& name, const StorageFn& storage_of, const std::set<std::string>& transposed) {
  StateDict sd;
  for (const auto& [k, v] : find_state_dict(root, name).dict) {
    if (k->kind != PV::Str) bad(name, "a state dict key is not a string");
    if (v->kind != PV::Tensor) continue;  // non-tensor entries (rare) carry no weights
    std::string key = k->s.rfind("module.", 0) == 0 ? k->s.substr(7) : k->s;
    sd[key] = make_tensor(name, key, storage_of(*v->storage), v->offset, v->size, v->stride, transposed.count(key) != 0);
  }
  return sd;
}

// ---------------------------------------------------------------- zip (torch >= 1.6)

struct ZipEntry {
  std::uint64_t offset = 0, size = 0;  // data offset and size
};

// The directory of a zip archive, read from its end: only the directory and
// the local headers are read, not the entries.
std::map<std::string, ZipEntry> read_zip(const Source& src, const std::string& name) {
  const std::uint64_t n = src.size();
  // End of central directory: the last 22+ bytes.
  if (n < 22) bad(name, "corrupt zip archive (too short)");
  const std::uint64_t tail_at = n > 65557 ? n - 65557 : 0;
  const std::vector<std::uint8_t> tail = src.bytes(tail_at, static_cast<std::size_t>(n - tail_at));
  std::size_t eocd = std::string::npos;
  for (std::size_t i = tail.size() - 22 + 1; i-- > 0;)
    if (rd_le(tail.data() + i, 4) == 0x06054b50) {
      eocd = i;
      break;
    }
  if (eocd == std::string::npos) bad(name, "corrupt zip archive (no end of central directory)");
  std::uint64_t count = rd_le(tail.data() + eocd + 10, 2), cd_off = rd_le(tail.data() + eocd + 16, 4);
  std::uint64_t cd_end = tail_at + eocd;
  if ((count == 0xffff || cd_off == 0xffffffff) && eocd >= 20 && rd_le(tail.data() + eocd - 20, 4) == 0x07064b50) {
    const std::uint64_t z64 = rd_le(tail.data() + eocd - 20 + 8, 8);
    const std::vector<std::uint8_t> z = src.bytes(z64, 56);
    if (rd_le(z.data(), 4) != 0x06064b50) bad(name, "corrupt zip64 directory");
    count = rd_le(z.data() + 32, 8);
    cd_off = rd_le(z.data() + 48, 8);
    cd_end = z64;
  }
  if (cd_off > cd_end) bad(name, "corrupt zip archive (entry outside the file)");
  const std::vector<std::uint8_t> cd = src.bytes(cd_off, static_cast<std::size_t>(cd_end - cd_off));
  const std::uint8_t* d = cd.data();
  auto need = [&](std::uint64_t off, std::uint64_t len) {
    if (off > cd.size() || len > cd.size() - off) bad(name, "corrupt zip archive (entry outside the file)");
  };
  std::map<std::string, ZipEntry> entries;
  std::uint64_t p = 0;
  for (std::uint64_t e = 0; e < count; ++e) {
    need(p, 46);
    if (rd_le(d + p, 4) != 0x02014b50) bad(name, "corrupt zip central directory");
    const std::uint64_t method = rd_le(d + p + 10, 2);
    std::uint64_t csize = rd_le(d + p + 20, 4), usize = rd_le(d + p + 24, 4);
    const std::uint64_t nlen = rd_le(d + p + 28, 2), xlen = rd_le(d + p + 30, 2), clen = rd_le(d + p + 32, 2);
    std::uint64_t local = rd_le(d + p + 42, 4);
    need(p + 46, nlen + xlen + clen);
    const std::string fname(reinterpret_cast<const char*>(d + p + 46), nlen);
    // zip64 extra field: 64-bit values for whichever of the 32-bit ones are saturated.
    for (std::uint64_t x = p + 46 + nlen; x + 4 <= p + 46 + nlen + xlen;) {
      const std::uint64_t id = rd_le(d + x, 2), len = rd_le(d + x + 2, 2);
      need(x + 4, len);
      if (id == 1) {
        std::uint64_t q = x + 4;
        auto next = [&](std::uint64_t& v) {
          if (v == 0xffffffff && q + 8 <= x + 4 + len) {
            v = rd_le(d + q, 8);
            q += 8;
          }
        };
        next(usize);
        next(csize);
        next(local);
      }
      x += 4 + len;
    }
    if (method != 0) bad(name, "zip entry '" + fname + "' is compressed; torch.save writes stored entries");
    const std::vector<std::uint8_t> header = src.bytes(local, 30);
    if (rd_le(header.data(), 4) != 0x04034b50) bad(name, "corrupt zip local header for '" + fname + "'");
    const std::uint64_t data = local + 30 + rd_le(header.data() + 26, 2) + rd_le(header.data() + 28, 2);
    if (data > n || usize > n - data) bad(name, "corrupt zip archive (entry outside the file)");
    entries[fname] = {data, usize};
    p += 46 + nlen + xlen + clen;
  }
  return entries;
}

StateDict read_torch_zip(const Source& src, const std::string& name, const std::set<std::string>& transposed) {
  const auto entries = read_zip(src, name);
  std::string prefix;
  for (const auto& [f, e] : entries)
    if (f.size() >= 8 && f.compare(f.size() - 8, 8, "data.pkl") == 0 && f.find('/') == f.size() - 9) prefix = f.substr(0, f.size() - 8);
  if (prefix.empty()) bad(name, "zip archive without data.pkl: not a torch.save checkpoint");
  if (auto bo = entries.find(prefix + "byteorder"); bo != entries.end()) {
    const auto order = src.bytes(bo->second.offset, static_cast<std::size_t>(std::min<std::uint64_t>(bo->second.size, 16)));
    if (std::string(order.begin(), order.end()) != "little")
      throw Error(ErrorKind::Unsupported, name + ": big-endian checkpoints are not supported");
  }
  const ZipEntry& pkl = entries.at(prefix + "data.pkl");
  const std::vector<std::uint8_t> pickle = src.bytes(pkl.offset, static_cast<std::size_t>(pkl.size));
  Arena arena;
  Unpickler up(pickle.data(), pickle.size(), name, arena);
  const PVp root = up.load();
  return to_state_dict(*root, name, [&](const PV& st) {
    auto it = entries.find(prefix + "data/" + st.s);
    if (it == entries.end()) bad(name, "storage '" + st.s + "' is missing from the archive");
    return Storage{&src, it->second.offset, static_cast<std::size_t>(it->second.size / elem_size(st.elem)), st.elem};
  }, transposed);
}

// ---------------------------------------------------------------- legacy torch.save (before 1.6)

StateDict read_torch_legacy(const std::uint8_t* d, std::size_t n, const std::string& name, const std::set<std::string>& transposed) {
  std::size_t pos = 0;
  Arena arena;
  auto next_pickle = [&]() {
    Unpickler up(d + pos, n - pos, name, arena);
    PVp v = up.load();
    pos += up.consumed(d + pos);
    return v;
  };
  const PVp magic = next_pickle();
  static const std::string kMagic("\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 10);  // 0x1950a86a20f9469cfc6c, little-endian
  if (magic->kind != PV::Int || magic->s != kMagic) bad(name, "a pickle, but not a torch.save checkpoint");
  next_pickle();  // protocol version
  next_pickle();  // sys info
  const PVp root = next_pickle();
  const PVp keys = next_pickle();
  if (keys->kind != PV::List) bad(name, "legacy checkpoint without its storage list");
  // Storages follow in that order, each as an int64 element count and its bytes.
  const Source src(d, n, name);
  std::map<std::string, Storage> storages;
  std::map<std::string, Elem> elems;
  // Which element type each storage has, from the tensors that use it (iterative:
  // a hostile pickle may nest deeply or hold cycles).
  std::set<const PV*> seen;
  std::vector<const PV*> todo{root};
  while (!todo.empty()) {
    const PV* v = todo.back();
    todo.pop_back();
    if (!seen.insert(v).second) continue;
    if (v->kind == PV::Tensor) elems[v->storage->s] = v->storage->elem;
    for (const PVp x : v->items) todo.push_back(x);
    for (const auto& [k, x] : v->dict) todo.push_back(x);
  }
  for (const PVp& k : keys->items) {
    if (k->kind != PV::Str) bad(name, "legacy storage key is not a string");
    if (n - pos < 8) bad(name, "truncated legacy checkpoint");
    const std::uint64_t count = rd_le(d + pos, 8);
    pos += 8;
    const std::size_t es = elem_size(elems.count(k->s) ? elems[k->s] : Elem::F32);
    if (count > (n - pos) / es) bad(name, "truncated legacy checkpoint (storage '" + k->s + "')");
    storages[k->s] = {&src, pos, static_cast<std::size_t>(count), elems.count(k->s) ? elems[k->s] : Elem::F32};
    pos += count * es;
  }
  return to_state_dict(*root, name, [&](const PV& st) {
    auto it = storages.find(st.s);
    if (it == storages.end()) bad(name, "storage '" + st.s + "' is missing");
    Storage found = it->second;
    found.elem = st.elem;  // (as the tensor reads it)
    found.elems = found.elem == it->second.elem ? found.elems : found.elems * elem_size(it->second.elem) / elem_size(st.elem);
    return found;
  }, transposed);
}

// ---------------------------------------------------------------- safetensors

StateDict read_safetensors(const Source& src, const std::string& name, const std::set<std::string>& transposed) {
  const std::uint64_t n = src.size();
  std::uint8_t len[8];
  src.read(0, len, 8);
  const std::uint64_t hlen = rd_le(len, 8);
  if (hlen > n - 8 || hlen > (100u << 20)) bad(name, "safetensors header length " + std::to_string(hlen) + " exceeds the file");
  const std::vector<std::uint8_t> header = src.bytes(8, static_cast<std::size_t>(hlen));
  nlohmann::json h;
  try {
    h = nlohmann::json::parse(header.begin(), header.end());
  } catch (const std::exception& e) {
    bad(name, std::string("safetensors header is not JSON: ") + e.what());
  }
  if (!h.is_object()) bad(name, "safetensors header is not an object");
  static const std::map<std::string, Elem> types = {{"F32", Elem::F32}, {"F16", Elem::F16}, {"BF16", Elem::BF16}, {"F64", Elem::F64},
                                                    {"I64", Elem::I64}, {"I32", Elem::I32}, {"I16", Elem::I16},   {"I8", Elem::I8},
                                                    {"U8", Elem::U8},   {"BOOL", Elem::Bool}};
  const std::uint64_t data = 8 + hlen, avail = n - 8 - hlen;
  StateDict sd;
  for (const auto& [key, v] : h.items()) {
    if (key == "__metadata__") continue;
    try {
      const std::string dt = v.at("dtype").get<std::string>();
      auto t = types.find(dt);
      if (t == types.end()) throw Error(ErrorKind::Unsupported, name + ": tensor '" + key + "' has dtype " + dt);
      // Integers only: nlohmann's conversion of a float (or of an integer too
      // large, which it parses as one) to an integer type is undefined.
      const std::string& tensor = key;  // (clang 14 cannot capture a structured binding)
      const nlohmann::json& entry = v;
      auto integers = [&](const char* field) {
        const nlohmann::json& a = entry.at(field);
        if (!a.is_array()) bad(name, "tensor '" + tensor + "': " + field + " is not a list");
        for (const nlohmann::json& e : a)
          if (!e.is_number_unsigned()) bad(name, "tensor '" + tensor + "': " + field + " holds " + e.dump() + ", not a size");
        return a.get<std::vector<std::uint64_t>>();
      };
      const std::vector<std::uint64_t> dims = integers("shape"), off = integers("data_offsets");
      if (off.size() != 2 || off[0] > off[1] || off[1] > avail) bad(name, "tensor '" + key + "' has data offsets outside the file");
      const std::size_t es = elem_size(t->second);
      const std::uint64_t bytes = off[1] - off[0];
      const std::optional<std::int64_t> count = detail::checked_product(dims, INT64_MAX / static_cast<std::int64_t>(es));
      if (!count) bad(name, "tensor '" + key + "' has a shape too large");
      if (static_cast<std::uint64_t>(*count) * es != bytes)
        bad(name, "tensor '" + key + "' has " + std::to_string(*count) + " elements, not the " + std::to_string(bytes / es) + " of its " +
                      std::to_string(bytes) + " bytes");
      const std::vector<std::int64_t> shape(dims.begin(), dims.end());  // each fits: checked_product
      std::vector<std::int64_t> stride(shape.size(), 1);  // row-major (with a 0 dimension, others may be huge)
      for (std::size_t i = shape.size(); i-- > 1;)
        if (__builtin_mul_overflow(stride[i], shape[i], &stride[i - 1])) bad(name, "tensor '" + key + "' has a shape too large");
      std::string k = key.rfind("module.", 0) == 0 ? key.substr(7) : key;
      sd[k] = make_tensor(name, key, Storage{&src, data + off[0], static_cast<std::size_t>(bytes / es), t->second}, 0, shape, stride,
                          transposed.count(k) != 0);
    } catch (const nlohmann::json::exception& e) {
      bad(name, "safetensors entry '" + key + "': " + e.what());
    }
  }
  return sd;
}

}  // namespace

namespace {
StateDict read_checkpoint(const Source& src, const std::string& name, const std::set<std::string>& transposed) {
  std::uint8_t head[10] = {};
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(src.size(), 10));
  src.read(0, head, n);
  if (n >= 4 && rd_le(head, 4) == 0x04034b50) return read_torch_zip(src, name, transposed);
  if (n >= 10 && head[8] == '{') return read_safetensors(src, name, transposed);
  bad(name, "not a PyTorch checkpoint (.pth: zip or legacy) or a .safetensors file");
}
}  // namespace

StateDict read_checkpoint_memory(const std::uint8_t* d, std::size_t n, const std::string& name, const std::set<std::string>& transposed) {
  if (n >= 2 && d[0] == 0x80 && d[1] <= 5) return read_torch_legacy(d, n, name, transposed);
  return read_checkpoint(Source(d, n, name), name, transposed);
}

StateDict read_checkpoint(const std::string& path, const std::set<std::string>& transposed) {
  const detail::InputFile file(path, std::uint64_t{1} << 40);
  std::uint8_t head[2] = {};
  if (file.size() >= 2) file.read_at(0, head, 2);
  if (head[0] == 0x80 && head[1] <= 5) {  // legacy: the storages follow the pickles, read as a whole
    std::vector<std::uint8_t> bytes;
    detail::read_file(path, bytes);
    return read_torch_legacy(bytes.data(), bytes.size(), path, transposed);
  }
  return read_checkpoint(Source(file, path), path, transposed);
}

}  // namespace vinfer::zoo
