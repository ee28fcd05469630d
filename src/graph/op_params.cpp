#include "graph/op_params.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "vinfer/error.hpp"

namespace vinfer::detail {
namespace {

[[noreturn]] void bad(const Node& n, const std::string& msg) { throw Error(ErrorKind::BadInput, n.label() + ": " + msg); }

std::vector<std::int64_t> ints_or(const Node& n, const char* key, std::size_t count, std::int64_t dflt) {
  std::vector<std::int64_t> v = n.get_ints(key);
  if (v.empty()) return std::vector<std::int64_t>(count, dflt);
  if (v.size() != count) bad(n, std::string("attribute '") + key + "' has " + std::to_string(v.size()) + " values, expected " + std::to_string(count));
  return v;
}

// Pads, auto_pad and output sizes shared by Conv and pools.
void resolve_window(const Node& n, const Shape& x, WindowParams& p, bool allow_ceil) {
  const std::size_t s = p.kernel.size();
  p.spatial = static_cast<int>(s);
  p.strides = ints_or(n, "strides", s, 1);
  p.dilations = ints_or(n, "dilations", s, 1);
  std::vector<std::int64_t> pads = ints_or(n, "pads", 2 * s, 0);
  p.pads_begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(s));
  p.pads_end.assign(pads.begin() + static_cast<std::ptrdiff_t>(s), pads.end());
  for (std::size_t i = 0; i < s; ++i) {
    if (p.kernel[i] < 1 || p.strides[i] < 1 || p.dilations[i] < 1) bad(n, "kernel, strides and dilations must be positive");
    if (p.pads_begin[i] < 0 || p.pads_end[i] < 0) bad(n, "negative pads are not supported");
  }
  const std::string auto_pad = n.get_string("auto_pad", "NOTSET");
  p.out.resize(s);
  p.pads_end_effective.resize(s);
  for (std::size_t i = 0; i < s; ++i) {
    const std::int64_t in = x[2 + i];
    const std::int64_t dk = (p.kernel[i] - 1) * p.dilations[i] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const std::int64_t out = (in + p.strides[i] - 1) / p.strides[i];
      const std::int64_t total = std::max<std::int64_t>(0, (out - 1) * p.strides[i] + dk - in);
      const std::int64_t small = total / 2, big = total - small;
      p.pads_begin[i] = auto_pad == "SAME_UPPER" ? small : big;
      p.pads_end[i] = auto_pad == "SAME_UPPER" ? big : small;
    } else if (auto_pad == "VALID") {
      p.pads_begin[i] = p.pads_end[i] = 0;
    } else if (auto_pad != "NOTSET") {
      bad(n, "unknown auto_pad '" + auto_pad + "'");
    }
    const std::int64_t span = in + p.pads_begin[i] + p.pads_end[i] - dk;
    if (span < 0) bad(n, "window " + std::to_string(dk) + " larger than padded input " + std::to_string(in + p.pads_begin[i] + p.pads_end[i]));
    std::int64_t out = span / p.strides[i] + 1;
    if (allow_ceil && p.ceil_mode) {
      out = (span + p.strides[i] - 1) / p.strides[i] + 1;
      // PyTorch/ONNX: the last window must start inside the input or the left padding.
      if ((out - 1) * p.strides[i] >= in + p.pads_begin[i]) --out;
    }
    p.out[i] = out;
    p.pads_end_effective[i] = p.ceil_mode ? (out - 1) * p.strides[i] + dk - in - p.pads_begin[i] : p.pads_end[i];
  }
}

}  // namespace

WindowParams conv_params(const Node& n, const Shape& x, const Shape& w) {
  if (x.size() != 4) throw Error(ErrorKind::Unsupported, n.label() + ": runs on 4-D NCHW input only, not " + shape_str(x));
  if (w.size() != x.size()) bad(n, "weight rank " + std::to_string(w.size()) + " does not match input rank " + std::to_string(x.size()));
  WindowParams p;
  p.group = n.get_int("group", 1);
  if (p.group < 1 || x[1] % p.group != 0 || w[0] % p.group != 0) bad(n, "group " + std::to_string(p.group) + " does not divide the channels");
  if (w[1] * p.group != x[1])
    bad(n, "weight " + shape_str(w) + " expects " + std::to_string(w[1] * p.group) + " input channels, input has " + std::to_string(x[1]));
  p.kernel.assign(w.begin() + 2, w.end());
  std::vector<std::int64_t> ks = n.get_ints("kernel_shape");
  if (!ks.empty() && ks != p.kernel) bad(n, "kernel_shape " + shape_str(ks) + " disagrees with weight " + shape_str(w));
  resolve_window(n, x, p, false);
  return p;
}

TransposedWindow conv_transpose_params(const Node& n, const Shape& x, const Shape& w) {
  if (x.size() < 3 || x.size() > 5)
    throw Error(ErrorKind::Unsupported, n.label() + ": runs on 1 to 3 spatial dimensions, not input " + shape_str(x));
  if (w.size() != x.size()) bad(n, "weight rank " + std::to_string(w.size()) + " does not match input rank " + std::to_string(x.size()));
  TransposedWindow p;
  const std::size_t s = x.size() - 2;
  p.spatial = static_cast<int>(s);
  p.group = n.get_int("group", 1);
  if (p.group < 1 || x[1] % p.group != 0) bad(n, "group " + std::to_string(p.group) + " does not divide the channels");
  if (w[0] != x[1]) bad(n, "weight " + shape_str(w) + " expects " + std::to_string(w[0]) + " input channels, input has " + std::to_string(x[1]));
  p.kernel.assign(w.begin() + 2, w.end());
  const std::vector<std::int64_t> ks = n.get_ints("kernel_shape");
  if (!ks.empty() && ks != p.kernel) bad(n, "kernel_shape " + shape_str(ks) + " disagrees with weight " + shape_str(w));
  p.strides = ints_or(n, "strides", s, 1);
  p.dilations = ints_or(n, "dilations", s, 1);
  p.output_padding = ints_or(n, "output_padding", s, 0);
  const std::vector<std::int64_t> pads = ints_or(n, "pads", 2 * s, 0);
  std::vector<std::int64_t> asked = n.get_ints("output_shape");
  if (asked.size() == x.size()) asked.erase(asked.begin(), asked.begin() + 2);  // written with N and C
  if (!asked.empty() && asked.size() != s) bad(n, "output_shape must have " + std::to_string(s) + " values");
  const std::string auto_pad = n.get_string("auto_pad", "NOTSET");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!same && auto_pad != "NOTSET" && auto_pad != "VALID") bad(n, "unknown auto_pad '" + auto_pad + "'");
  p.pads_begin.resize(s);
  p.pads_end.resize(s);
  p.out.resize(s);
  p.pads_end_effective.resize(s);
  for (std::size_t i = 0; i < s; ++i) {
    if (p.kernel[i] < 1 || p.strides[i] < 1 || p.dilations[i] < 1) bad(n, "kernel, strides and dilations must be positive");
    // (Bounds that keep the size arithmetic below in int64.)
    constexpr std::int64_t kMost = std::int64_t{1} << 24;
    if (p.kernel[i] > kMost || p.strides[i] > kMost || p.dilations[i] > kMost || pads[i] < -kMost || pads[i] > kMost ||
        pads[s + i] < -kMost || pads[s + i] > kMost || (!asked.empty() && (asked[i] < 0 || asked[i] > (std::int64_t{1} << 40))))
      bad(n, "kernel, strides, dilations, pads or output_shape out of range");
    if (p.output_padding[i] < 0 || (p.output_padding[i] >= p.strides[i] && p.output_padding[i] >= p.dilations[i]))
      bad(n, "output_padding must be smaller than the stride or the dilation");
    const std::int64_t full = p.strides[i] * (x[2 + i] - 1) + p.output_padding[i] + (p.kernel[i] - 1) * p.dilations[i] + 1;
    if (same) {
      // Pads derived from the size asked for (or in x stride), the odd one at the end (UPPER) or start (LOWER).
      p.out[i] = asked.empty() ? x[2 + i] * p.strides[i] : asked[i];
      const std::int64_t total = full - p.out[i];
      const std::int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor
      p.pads_begin[i] = auto_pad == "SAME_UPPER" ? half : total - half;
      p.pads_end[i] = total - p.pads_begin[i];
    } else {
      p.pads_begin[i] = auto_pad == "VALID" ? 0 : pads[i];
      p.pads_end[i] = auto_pad == "VALID" ? 0 : pads[s + i];
      if (p.pads_begin[i] < 0 || p.pads_end[i] < 0) bad(n, "negative pads are not supported");
      // output_shape with explicit pads: the transposed window from pads_begin on, cut or zero-extended at the end.
      p.out[i] = asked.empty() ? full - p.pads_begin[i] - p.pads_end[i] : asked[i];
      if (!asked.empty()) p.pads_end[i] = full - p.pads_begin[i] - p.out[i];
    }
    if (p.out[i] < 1) bad(n, "output size " + std::to_string(p.out[i]) + " is not positive");
    p.pads_end_effective[i] = p.pads_end[i];
  }
  return p;
}

namespace {
bool all_equal(const std::vector<std::int64_t>& v, std::int64_t e) {
  return std::all_of(v.begin(), v.end(), [e](std::int64_t i) { return i == e; });
}
}  // namespace

bool is_pointwise(const WindowParams& p, const Shape& w) {
  return w.size() == 4 && w[2] == 1 && w[3] == 1 && p.group == 1 && all_equal(p.strides, 1) &&
         all_equal(p.dilations, 1) && all_equal(p.pads_begin, 0) && all_equal(p.pads_end, 0);
}

bool windows_tile_map(const WindowParams& p, const Shape& x) {
  if (x.size() != 4 || p.kernel.size() != 2) return false;
  return p.kernel == p.strides && all_equal(p.dilations, 1) && all_equal(p.pads_begin, 0) && all_equal(p.pads_end, 0) &&
         !p.ceil_mode && x[2] % p.kernel[0] == 0 && x[3] % p.kernel[1] == 0;
}

WindowParams pool_params(const Node& n, const Shape& x) {
  if (x.size() != 4) throw Error(ErrorKind::Unsupported, n.label() + ": runs on 4-D NCHW input only, not " + shape_str(x));
  WindowParams p;
  p.kernel = n.get_ints("kernel_shape");
  if (p.kernel.size() != x.size() - 2) bad(n, "kernel_shape must have " + std::to_string(x.size() - 2) + " values");
  p.ceil_mode = n.get_int("ceil_mode", 0) != 0;
  p.count_include_pad = n.get_int("count_include_pad", 0) != 0;
  resolve_window(n, x, p, true);
  return p;
}

Shape broadcast_shapes(const Node& n, const Shape& a, const Shape& b) {
  const std::size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (std::size_t i = 0; i < r; ++i) {
    const std::int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const std::int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) bad(n, "shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int normalize_axis(const Node& n, std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r) bad(n, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return static_cast<int>(axis < 0 ? axis + r : axis);
}

SliceWindow slice_window(const Node& n, const Shape& x, const std::vector<std::int64_t>& starts,
                         const std::vector<std::int64_t>& ends, const std::vector<std::int64_t>& axes,
                         const std::vector<std::int64_t>& steps) {
  if (ends.size() != starts.size() || (!axes.empty() && axes.size() != starts.size()) ||
      (!steps.empty() && steps.size() != starts.size()))
    throw Error(ErrorKind::BadInput, n.label() + ": starts, ends, axes and steps have different lengths");
  SliceWindow w{Shape(x.size(), 0), x, Shape(x.size(), 1)};
  for (std::size_t k = 0; k < starts.size(); ++k) {
    const auto ax = static_cast<std::size_t>(normalize_axis(n, axes.empty() ? static_cast<std::int64_t>(k) : axes[k], x.size()));
    const std::int64_t step = steps.empty() ? 1 : steps[k];
    if (step == 0) throw Error(ErrorKind::BadInput, n.label() + ": a step of 0");
    const std::int64_t d = x[ax];
    // ONNX clamps to [0, d] going forward and to [-1, d - 1] going backward.
    const std::int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? d : d - 1;
    const std::int64_t s = std::clamp<std::int64_t>(starts[k] < 0 ? starts[k] + d : starts[k], std::int64_t{0}, hi);
    const std::int64_t e = std::clamp<std::int64_t>(ends[k] < 0 ? ends[k] + d : ends[k], lo, hi);
    const std::int64_t span = step > 0 ? e - s : s - e, mag = step > 0 ? step : -step;
    w.begin[ax] = s;
    w.size[ax] = span > 0 ? (span + mag - 1) / mag : 0;
    w.step[ax] = step;
  }
  return w;
}

EinsumTerms einsum_terms(const Node& n) {
  std::string eq;
  for (char c : n.get_string("equation", "")) if (c != ' ') eq += c;
  const std::size_t arrow = eq.find("->");
  if (eq.find("...") != std::string::npos || arrow == std::string::npos)
    throw Error(ErrorKind::Unsupported, n.label() + ": Einsum with '...' or without '->' is not supported");
  EinsumTerms t;
  t.output = eq.substr(arrow + 2);
  std::string term;
  for (char c : eq.substr(0, arrow) + ",") {
    if (c == ',') {
      t.inputs.push_back(term);
      term.clear();
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      term += c;
    } else {
      throw Error(ErrorKind::BadInput, n.label() + ": Einsum equation '" + eq + "'");
    }
  }
  for (char c : t.output)
    if (!std::isalpha(static_cast<unsigned char>(c)) || t.output.find(c) != t.output.rfind(c))
      throw Error(ErrorKind::BadInput, n.label() + ": Einsum equation '" + eq + "'");
  return t;
}

SplitParams split_params(const Graph& g, const Node& n, const Shape& x) {
  SplitParams p;
  p.axis = normalize_axis(n, n.get_int("axis", 0), x.size());
  const std::int64_t d = x[static_cast<std::size_t>(p.axis)];
  const std::size_t outs = n.outputs.size();
  if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
    const TensorData* s = g.constant(n.inputs[1]);
    if (!s || s->dtype != DType::I64) throw Error(ErrorKind::Unsupported, n.label() + ": split sizes must be constant int64");
    p.lengths = s->i;
  } else if (n.attrs.count("split")) {
    p.lengths = n.get_ints("split");
  } else {
    const std::int64_t parts = n.get_int("num_outputs", static_cast<std::int64_t>(outs));
    if (parts <= 0) throw Error(ErrorKind::BadInput, n.label() + ": num_outputs must be positive");
    const std::int64_t each = (d + parts - 1) / parts;
    for (std::int64_t k = 0; k < parts; ++k) p.lengths.push_back(std::max<std::int64_t>(0, std::min(each, d - k * each)));
  }
  std::int64_t sum = 0;
  for (std::int64_t l : p.lengths) {
    if (l < 0) throw Error(ErrorKind::BadInput, n.label() + ": a negative split length");
    sum += l;
  }
  if (p.lengths.size() != outs || sum != d)
    throw Error(ErrorKind::BadInput, n.label() + ": split lengths do not cover dimension " + std::to_string(d) + " in " + std::to_string(outs) + " outputs");
  return p;
}

LayerNormExtent layer_norm_extent(const Node& n, const Shape& x) {
  const int axis = normalize_axis(n, n.get_int("axis", -1), x.size());
  LayerNormExtent e;
  for (std::size_t d = 0; d < x.size(); ++d) (static_cast<int>(d) < axis ? e.outer : e.len) *= x[d];
  e.epsilon = n.get_float("epsilon", 1e-5f);
  return e;
}

SoftmaxExtent softmax_extent(const Node& n, const Shape& x) {
  const int axis = normalize_axis(n, n.get_int("axis", -1), x.size());
  SoftmaxExtent e;
  e.len = x[static_cast<std::size_t>(axis)];
  for (int d = 0; d < axis; ++d) e.outer *= x[static_cast<std::size_t>(d)];
  for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < x.size(); ++d) e.inner *= x[d];
  if (n.get_int("vinfer.opset", 13) < 13) {
    e.len *= e.inner;
    e.inner = 1;
  }
  return e;
}

const TensorData& DenseParams::weights() const {
  if (nk) return *nk;
  if (copy.f.empty()) {
    std::vector<float> w(static_cast<std::size_t>(N * K));
    for (std::int64_t j = 0; j < N; ++j)
      for (std::int64_t k = 0; k < K; ++k)
        w[static_cast<std::size_t>(j * K + k)] =
            alpha * (trans_b ? b->f[static_cast<std::size_t>(j * K + k)] : b->f[static_cast<std::size_t>(k * N + j)]);
    copy = TensorData::f32({N, K}, std::move(w));
  }
  return copy;
}

DenseParams dense_params(const Graph& g, const Node& n) {
  auto unsupported = [&](const std::string& what) {
    throw Error(ErrorKind::Unsupported, n.label() + ": " + what + " is not supported");
  };
  const Shape& as = g.value(n.inputs[0]).shape;
  const TensorData* b = g.constant(n.inputs[1]);
  if (!b) unsupported("a non-constant right operand");
  if (b->shape.size() != 2) unsupported("a right operand of rank " + std::to_string(b->shape.size()));
  const bool gemm = n.op == "Gemm";
  const bool ta = gemm && n.get_int("transA", 0) != 0, tb = gemm && n.get_int("transB", 0) != 0;
  // A transposed [K, 1] has the bytes of [1, K].
  if (ta && as[1] != 1) unsupported("transA with more than one row");
  if (numel(as) == 0 || b->numel() == 0) unsupported("an empty operand");
  DenseParams d;
  d.K = ta ? as[0] : as.back();
  d.M = numel(as) / d.K;
  d.N = tb ? b->shape[0] : b->shape[1];
  const float alpha = gemm ? n.get_float("alpha", 1.f) : 1.f, beta = gemm ? n.get_float("beta", 1.f) : 1.f;
  d.b = g.value(n.inputs[1]).constant;
  d.trans_b = tb, d.alpha = alpha;
  if (alpha == 1.f) (tb ? d.nk : d.kn) = d.b;
  if (n.inputs.size() > 2 && n.inputs[2] >= 0) {  // Gemm's C, or a MatMul's fused bias
    const TensorData* c = g.constant(n.inputs[2]);
    if (!c) unsupported("a non-constant C");
    if (c->numel() != d.N || (c->shape.size() == 2 && c->shape[0] != 1)) unsupported("C that is not one row of " + std::to_string(d.N));
    std::vector<float> bv(c->f);
    for (float& v : bv) v *= beta;
    d.bias = TensorData::f32({d.N}, std::move(bv));
  }
  return d;
}

AttentionDims attention_dims(const Node& n, const Shape& q, const Shape& k, const Shape& v) {
  AttentionDims d;
  if (q.size() != k.size() || q.size() != v.size() || (q.size() != 3 && q.size() != 4))
    bad(n, "Q, K and V must all be 3-D or all 4-D, got " + shape_str(q) + ", " + shape_str(k) + " and " + shape_str(v));
  d.three_d = q.size() == 3;
  d.batch = q[0];
  if (d.three_d) {
    d.q_heads = n.get_int("q_num_heads", 0), d.kv_heads = n.get_int("kv_num_heads", 0);
    if (d.q_heads < 1 || d.kv_heads < 1) bad(n, "3-D inputs need q_num_heads and kv_num_heads");
    if (q[2] % d.q_heads || k[2] % d.kv_heads || v[2] % d.kv_heads)
      bad(n, "hidden sizes " + std::to_string(q[2]) + ", " + std::to_string(k[2]) + " and " + std::to_string(v[2]) +
                 " are not whole numbers of heads");
    d.q_seq = q[1], d.kv_seq = k[1], d.size = q[2] / d.q_heads, d.v_size = v[2] / d.kv_heads;
    if (k[2] / d.kv_heads != d.size) bad(n, "Q and K heads differ in size");
  } else {
    d.q_heads = q[1], d.kv_heads = k[1], d.q_seq = q[2], d.kv_seq = k[2], d.size = q[3], d.v_size = v[3];
    if (v[1] != d.kv_heads || k[3] != d.size) bad(n, "K " + shape_str(k) + " and V " + shape_str(v) + " do not fit Q " + shape_str(q));
  }
  if (k[0] != d.batch || v[0] != d.batch || v[v.size() - 2] != d.kv_seq) bad(n, "Q, K and V differ in batch or K and V in length");
  if (d.kv_heads < 1 || d.q_heads % d.kv_heads) bad(n, std::to_string(d.q_heads) + " query heads over " + std::to_string(d.kv_heads) + " key heads");
  if (d.size < 1) bad(n, "heads of size 0");
  d.scale = n.has("scale") ? n.get_float("scale", 1.f) : 1.0 / std::sqrt(static_cast<double>(d.size));
  return d;
}

}  // namespace vinfer::detail
