// Operators that move or select values without arithmetic, and the shape
// arithmetic exporters leave in graphs (Shape, Gather, Range, ...).
#include <algorithm>
#include <limits>
#include <cmath>

#include "graph/op_params.hpp"
#include "graph/op_registry.hpp"
#include "graph/ops/ref_loops.hpp"
#include "graph/shape.hpp"
#include "vinfer/error.hpp"

namespace vinfer::detail {
namespace {

using I = std::int64_t;

// Reshapes: the output holds the input's values in the same order.
void copy_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  c.y().f = x.f;
  c.y().i = x.i;
}

// ---- Identity, Dropout (inference: identity; its mask output is never read)
void identity_shape(ShapeContext& c) {
  c.need_inputs(1, 1);
  c.set(0, c.in_shape(0), c.in_dtype(0));
}

// Inference only: training mode (an attribute before opset 12, an input
// since) draws a random mask, which no exact answer can match: refused.
void dropout_shape(ShapeContext& c) {
  c.need_inputs(1, 3);
  if (c.has_input(2)) {
    const TensorData& t = c.need_const(2, "training_mode");
    if (t.numel() != 1) c.bad("training_mode must be a scalar");
    if (t.dtype == DType::I64 ? t.i[0] != 0 : t.f[0] != 0) c.unsupported("training mode is not supported (its output is random)");
  }
  c.set(0, c.in_shape(0), c.in_dtype(0));
  if (c.n.outputs.size() > 1 && c.n.outputs[1] >= 0) c.set(1, c.in_shape(0), DType::I64);  // the mask: booleans
}

void dropout_reference(RefContext& c) {
  copy_reference(c);
  if (c.n.outputs.size() > 1 && c.n.outputs[1] >= 0) std::fill(c.out(1).i.begin(), c.out(1).i.end(), 1);  // nothing dropped
}

// ---- Size (the element count, an int64 scalar), Tile (the input repeated a constant number of times per dimension)
void size_shape(ShapeContext& c) {
  c.need_inputs(1, 1);
  (void)c.in_shape(0);
  c.set(0, {}, DType::I64);
}

void size_reference(RefContext& c) { c.y().i.at(0) = numel(c.arg(0).shape); }

void tile_shape(ShapeContext& c) {
  c.need_inputs(2, 2);
  const Shape& x = c.in_shape(0);
  const TensorData& r = c.need_const(1, "repeats");
  if (r.dtype != DType::I64 || r.shape.size() != 1 || r.numel() != static_cast<I>(x.size()))
    c.bad("repeats must be one int64 per dimension of " + shape_str(x));
  Shape out;
  for (std::size_t d = 0; d < x.size(); ++d) {
    if (r.i[d] < 0) c.bad("a negative repeat");
    if (x[d] > 0 && r.i[d] > (std::int64_t{1} << 40) / x[d]) c.bad("the output is too large");
    out.push_back(x[d] * r.i[d]);
  }
  c.set(0, out, c.in_dtype(0));
}

void tile_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  TensorData& y = c.y();
  std::vector<I> idx(y.shape.size(), 0);
  for (I e = 0; e < numel(y.shape); ++e) {
    I from = 0;
    for (std::size_t d = 0; d < idx.size(); ++d) from = from * x.shape[d] + idx[d] % x.shape[d];
    copy_element(x, static_cast<std::size_t>(from), y, static_cast<std::size_t>(e));
    next_index(idx, y.shape);
  }
}

// The element offset of a multi-index in a row-major shape, with dimension `axis` at `at`.
I offset_with(const Shape& s, const std::vector<I>& idx, std::size_t axis, I at) {
  I o = 0;
  for (std::size_t d = 0; d < s.size(); ++d) o = o * s[d] + (d == axis ? at : idx[d]);
  return o;
}

// An index along a dimension of `dim` (negative from the end), or BadInput.
I checked_index(const Node& n, I k, I dim) {
  if (k < 0) k += dim;
  if (k < 0 || k >= dim) throw Error(ErrorKind::BadInput, n.label() + ": index " + std::to_string(k) + " out of range for " + std::to_string(dim));
  return k;
}

// ---- GatherElements(data, indices), ScatterElements(data, indices, updates): along axis, element by element
void gather_elements_shape(ShapeContext& c) {
  const bool scatter = c.n.op == "ScatterElements";
  c.need_inputs(scatter ? 3 : 2, scatter ? 3 : 2);
  const Shape &x = c.in_shape(0), &idx = c.in_shape(1);
  if (c.in_dtype(1) != DType::I64) c.bad("indices must be integers");
  if (idx.size() != x.size() || x.empty()) c.bad("data and indices must have the same rank");
  const auto axis = static_cast<std::size_t>(normalize_axis(c.n, c.n.get_int("axis", 0), x.size()));
  for (std::size_t d = 0; d < x.size(); ++d)
    if (d != axis && idx[d] > x[d]) c.bad("indices " + shape_str(idx) + " exceed data " + shape_str(x));
  if (scatter) {
    if (c.in_shape(2) != idx || c.in_dtype(2) != c.in_dtype(0)) c.bad("updates must be indices' shape and data's type");
    const std::string r = c.n.get_string("reduction", "none");
    if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min") c.bad("reduction '" + r + "'");
  }
  c.set(0, scatter ? x : idx, c.in_dtype(0));
}

void gather_elements_reference(RefContext& c) {
  const TensorData &x = c.arg(0), &ind = c.arg(1);
  const auto axis = static_cast<std::size_t>(normalize_axis(c.n, c.n.get_int("axis", 0), x.shape.size()));
  std::vector<I> idx(ind.shape.size(), 0);
  for (std::size_t e = 0; e < ind.i.size(); ++e, next_index(idx, ind.shape)) {
    const I k = checked_index(c.n, ind.i[e], x.shape[axis]);
    copy_element(x, static_cast<std::size_t>(offset_with(x.shape, idx, axis, k)), c.y(), e);
  }
}

template <typename T>
T scatter_combine(const std::string& r, T old, T v) {
  return r == "add" ? old + v : r == "mul" ? old * v : r == "max" ? std::max(old, v) : r == "min" ? std::min(old, v) : v;
}

void scatter_elements_reference(RefContext& c) {
  const TensorData &x = c.arg(0), &ind = c.arg(1), &upd = c.arg(2);
  TensorData& y = c.y();
  y.f = x.f, y.i = x.i;
  const auto axis = static_cast<std::size_t>(normalize_axis(c.n, c.n.get_int("axis", 0), x.shape.size()));
  const std::string r = c.n.get_string("reduction", "none");
  std::vector<I> idx(ind.shape.size(), 0);
  for (std::size_t e = 0; e < ind.i.size(); ++e, next_index(idx, ind.shape)) {
    const auto to = static_cast<std::size_t>(offset_with(x.shape, idx, axis, checked_index(c.n, ind.i[e], x.shape[axis])));
    if (y.dtype == DType::F32) y.f[to] = scatter_combine(r, y.f[to], upd.f[e]);
    else y.i[to] = scatter_combine(r, y.i[to], upd.i[e]);
  }
}

// ---- Trilu: the upper (or lower) triangle of the last two dimensions, from diagonal k
void trilu_shape(ShapeContext& c) {
  c.need_inputs(1, 2);
  if (c.in_shape(0).size() < 2) c.bad("input must have at least 2 dimensions");
  if (c.has_input(1) && (numel(c.in_shape(1)) != 1 || c.in_dtype(1) != DType::I64)) c.bad("k must be one int64");
  c.set(0, c.in_shape(0), c.in_dtype(0));
}

void trilu_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  const TensorData* kt = c.opt(1);
  const I k = kt ? kt->i.at(0) : 0;
  const bool upper = c.n.get_int("upper", 1) != 0;
  const std::size_t r = x.shape.size();
  std::vector<I> idx(r, 0);
  TensorData& y = c.y();
  for (std::size_t e = 0; e < (y.dtype == DType::F32 ? y.f.size() : y.i.size()); ++e, next_index(idx, x.shape)) {
    const I diff = idx[r - 1] - idx[r - 2];
    if (upper ? diff >= k : diff <= k) copy_element(x, e, y, e);
  }
}

// ---- EyeLike: ones on diagonal k of a 2-D shape, of the input's type or `dtype`'s (float32 or integers)
void eye_like_shape(ShapeContext& c) {
  c.need_inputs(1, 1);
  if (c.in_shape(0).size() != 2) c.bad("input must be 2-D");
  DType t = c.in_dtype(0);
  if (c.n.has("dtype")) {
    const I d = c.n.get_int("dtype", 1);
    if (d != 1 && d != 2 && d != 3 && d != 6 && d != 7 && d != 9) c.unsupported("dtype " + std::to_string(d) + " is not supported");
    t = d == 1 ? DType::F32 : DType::I64;
  }
  c.set(0, c.in_shape(0), t);
}

void eye_like_reference(RefContext& c) {
  TensorData& y = c.y();
  const I rows = y.shape[0], cols = y.shape[1], k = c.n.get_int("k", 0);
  if (k >= cols || k <= -rows) return;  // (no diagonal inside; and r + k cannot overflow below)
  for (I r = 0; r < rows; ++r)
    if (r + k >= 0 && r + k < cols) {
      const auto at = static_cast<std::size_t>(r * cols + r + k);
      if (y.dtype == DType::F32) y.f[at] = 1.f;
      else y.i[at] = 1;
    }
}

// ---- CumSum(x, axis): running sums along a constant axis (exclusive: without the element; reverse: from the end)
void cumsum_shape(ShapeContext& c) {
  c.need_inputs(2, 2);
  const TensorData& a = c.need_const(1, "the axis");
  if (a.dtype != DType::I64 || a.numel() != 1) c.bad("the axis must be one integer");
  normalize_axis(c.n, a.i[0], c.in_shape(0).size());
  c.set(0, c.in_shape(0), c.in_dtype(0));
}

void cumsum_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  Node n = c.n;
  n.attrs["axis"] = c.arg(1).i.at(0);
  const SoftmaxExtent e = softmax_extent(n, x.shape);
  const bool exclusive = c.n.get_int("exclusive", 0) != 0, reverse = c.n.get_int("reverse", 0) != 0;
  TensorData& y = c.y();
  for (I o = 0; o < e.outer; ++o)
    for (I in = 0; in < e.inner; ++in) {
      double fsum = 0;
      I isum = 0;
      for (I j = 0; j < e.len; ++j) {
        const I k = reverse ? e.len - 1 - j : j;
        const auto at = static_cast<std::size_t>((o * e.len + k) * e.inner + in);
        if (y.dtype == DType::F32) {
          if (!exclusive) fsum += x.f[at];
          y.f[at] = static_cast<float>(fsum);
          if (exclusive) fsum += x.f[at];
        } else {
          if (!exclusive) isum += x.i[at];
          y.i[at] = isum;
          if (exclusive) isum += x.i[at];
        }
      }
    }
}

// ---- Flatten, Reshape, Squeeze, Unsqueeze
void flatten_shape(ShapeContext& c) {
  c.need_inputs(1, 1);
  const Shape& x = c.in_shape(0);
  I axis = c.n.get_int("axis", 1);
  if (axis < 0) axis += static_cast<I>(x.size());
  if (axis < 0 || axis > static_cast<I>(x.size())) c.bad("axis out of range");
  I a = 1, b = 1;
  for (std::size_t i = 0; i < x.size(); ++i) (static_cast<I>(i) < axis ? a : b) *= x[i];
  c.set(0, {a, b}, c.in_dtype(0));
}

void reshape_shape(ShapeContext& c) {
  c.need_inputs(2, 2);
  c.set(0, reshape_target(c.n, c.in_shape(0), c.need_const(1, "the target shape")), c.in_dtype(0));
}

void unsqueeze_shape(ShapeContext& c) {
  c.need_inputs(1, 2);
  const Shape& x = c.in_shape(0);
  const std::vector<I> axes = axes_of(c.g, c.n, 1);
  const std::size_t r = x.size() + axes.size();
  std::vector<bool> ins(r, false);
  for (I a : axes) {
    const int ax = normalize_axis(c.n, a, r);
    if (ins[static_cast<std::size_t>(ax)]) c.bad("repeated axis");
    ins[static_cast<std::size_t>(ax)] = true;
  }
  Shape out;
  std::size_t k = 0;
  for (std::size_t i = 0; i < r; ++i) out.push_back(ins[i] ? 1 : x[k++]);
  c.set(0, out, c.in_dtype(0));
}

void squeeze_shape(ShapeContext& c) {
  c.need_inputs(1, 2);
  const Shape& x = c.in_shape(0);
  const std::vector<I> axes = axes_of(c.g, c.n, 1);
  std::vector<bool> drop(x.size(), false);
  for (I a : axes) drop[static_cast<std::size_t>(normalize_axis(c.n, a, x.size()))] = true;
  Shape out;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (axes.empty() && x[i] == 1) continue;
    if (drop[i]) {
      if (x[i] != 1) c.bad("cannot squeeze a dimension of size " + std::to_string(x[i]));
      continue;
    }
    out.push_back(x[i]);
  }
  c.set(0, out, c.in_dtype(0));
}

// ---- Concat, Split
void concat_shape(ShapeContext& c) {
  if (c.n.inputs.empty()) c.bad("needs at least one input");
  const Shape& first = c.in_shape(0);
  const int axis = normalize_axis(c.n, c.n.get_int("axis", 1), first.size());
  Shape out = first;
  out[static_cast<std::size_t>(axis)] = 0;
  for (std::size_t i = 0; i < c.n.inputs.size(); ++i) {
    const Shape& s = c.in_shape(i);
    if (s.size() != first.size() || c.in_dtype(i) != c.in_dtype(0)) c.bad("inputs differ in rank or type");
    for (std::size_t d = 0; d < s.size(); ++d)
      if (static_cast<int>(d) != axis && s[d] != first[d])
        c.bad("input " + std::to_string(i) + " shape " + shape_str(s) + " does not match " + shape_str(first));
    out[static_cast<std::size_t>(axis)] += s[static_cast<std::size_t>(axis)];
  }
  c.set(0, out, c.in_dtype(0));
}

void concat_reference(RefContext& c) {
  TensorData& y = c.y();
  const int axis = normalize_axis(c.n, c.n.get_int("axis", 1), y.shape.size());
  I outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= y.shape[static_cast<std::size_t>(d)];
  for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < y.shape.size(); ++d) inner *= y.shape[d];
  const I ytotal = y.shape[static_cast<std::size_t>(axis)] * inner;
  I off = 0;
  for (std::size_t k = 0; k < c.n.inputs.size(); ++k) {
    const TensorData& x = c.arg(k);
    const I xs = x.shape[static_cast<std::size_t>(axis)] * inner;
    for (I o = 0; o < outer; ++o)
      for (I j = 0; j < xs; ++j) copy_element(x, static_cast<std::size_t>(o * xs + j), y, static_cast<std::size_t>(o * ytotal + off + j));
    off += xs;
  }
}

void split_shape(ShapeContext& c) {
  c.need_inputs(1, 2);
  const SplitParams p = split_params(c.g, c.n, c.in_shape(0));
  for (std::size_t o = 0; o < c.n.outputs.size(); ++o) {
    Shape s = c.in_shape(0);
    s[static_cast<std::size_t>(p.axis)] = p.lengths[o];
    c.set(o, s, c.in_dtype(0));
  }
}

void split_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  const SplitParams p = split_params(c.g, c.n, x.shape);
  I outer = 1, inner = 1;
  for (int d = 0; d < p.axis; ++d) outer *= x.shape[static_cast<std::size_t>(d)];
  for (std::size_t d = static_cast<std::size_t>(p.axis) + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  const I len = x.shape[static_cast<std::size_t>(p.axis)];
  I start = 0;
  for (std::size_t o = 0; o < c.n.outputs.size(); ++o) {
    TensorData& part = c.out(o);
    const I l = p.lengths[o];
    if (c.n.outputs[o] >= 0)
      for (I a = 0; a < outer; ++a)
        for (I k = 0; k < l * inner; ++k)
          copy_element(x, static_cast<std::size_t>((a * len + start) * inner + k), part, static_cast<std::size_t>(a * l * inner + k));
    start += l;
  }
}

// ---- GatherND, ScatterND: each index tuple (the indices' last axis) picks a
// slice of x; GatherND copies it out, ScatterND writes the update's slice into it.
void gather_nd_shape(ShapeContext& c) {
  c.need_inputs(2, 2);
  const Shape &x = c.in_shape(0), &idx = c.in_shape(1);
  if (c.n.get_int("batch_dims", 0) != 0) c.unsupported("batch_dims other than 0");
  if (c.in_dtype(1) != DType::I64 || idx.empty() || idx.back() < 1 || idx.back() > static_cast<I>(x.size()))
    c.bad("indices must be int64 with a last dimension of 1 to " + std::to_string(x.size()));
  Shape out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), x.begin() + idx.back(), x.end());
  c.set(0, out, c.in_dtype(0));
}

void scatter_nd_shape(ShapeContext& c) {
  c.need_inputs(3, 3);
  const Shape &x = c.in_shape(0), &idx = c.in_shape(1), &upd = c.in_shape(2);
  if (c.in_dtype(1) != DType::I64 || idx.empty() || idx.back() < 1 || idx.back() > static_cast<I>(x.size()))
    c.bad("indices must be int64 with a last dimension of 1 to " + std::to_string(x.size()));
  Shape want(idx.begin(), idx.end() - 1);
  want.insert(want.end(), x.begin() + idx.back(), x.end());
  if (upd != want || c.in_dtype(2) != c.in_dtype(0)) c.bad("updates must be " + shape_str(want) + " of the data's type");
  const std::string r = c.n.get_string("reduction", "none");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min") c.bad("reduction '" + r + "'");
  c.set(0, x, c.in_dtype(0));
}

template <bool kScatter>
void gather_scatter_nd_reference(RefContext& c) {
  const TensorData &x = c.arg(0), &idx = c.arg(1);
  TensorData& y = c.y();
  if (kScatter) y = x;
  const TensorData& from = kScatter ? c.arg(2) : x;
  const I depth = idx.shape.back(), count = numel(idx.shape) / depth;
  const std::string reduction = c.n.get_string("reduction", "none");
  I inner = 1;
  for (std::size_t d = static_cast<std::size_t>(depth); d < x.shape.size(); ++d) inner *= x.shape[d];
  const std::vector<I> xs = bstrides(x.shape, x.shape);
  for (I u = 0; u < count; ++u) {
    I at = 0;
    for (I d = 0; d < depth; ++d) {
      const I dim = x.shape[static_cast<std::size_t>(d)];
      I v = idx.i[static_cast<std::size_t>(u * depth + d)];
      v = v < 0 ? v + dim : v;
      if (v < 0 || v >= dim) throw Error(ErrorKind::BadInput, c.n.label() + ": index out of range");
      at += v * xs[static_cast<std::size_t>(d)];
    }
    for (I e = 0; e < inner; ++e) {
      const auto slice = static_cast<std::size_t>(at + e), packed = static_cast<std::size_t>(u * inner + e);
      if (!kScatter || reduction == "none") copy_element(from, kScatter ? packed : slice, y, kScatter ? slice : packed);
      else if (y.dtype == DType::F32) y.f[slice] = scatter_combine(reduction, y.f[slice], from.f[packed]);
      else y.i[slice] = scatter_combine(reduction, y.i[slice], from.i[packed]);
    }
  }
}

// ---- Gather
void gather_shape(ShapeContext& c) {
  c.need_inputs(2, 2);
  const Shape& x = c.in_shape(0);
  const Shape& idx = c.in_shape(1);
  if (c.in_dtype(1) != DType::I64) c.bad("indices must be int64");
  const int axis = normalize_axis(c.n, c.n.get_int("axis", 0), x.size());
  Shape out(x.begin(), x.begin() + axis);
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), x.begin() + axis + 1, x.end());
  c.set(0, out, c.in_dtype(0));
}

void gather_reference(RefContext& c) {
  const TensorData &x = c.arg(0), &idx = c.arg(1);
  TensorData& y = c.y();
  const int axis = normalize_axis(c.n, c.n.get_int("axis", 0), x.shape.size());
  I outer = 1, inner = 1;
  const I d = x.shape[static_cast<std::size_t>(axis)];
  for (int k = 0; k < axis; ++k) outer *= x.shape[static_cast<std::size_t>(k)];
  for (std::size_t k = static_cast<std::size_t>(axis) + 1; k < x.shape.size(); ++k) inner *= x.shape[k];
  const I ni = static_cast<I>(idx.i.size());
  for (I o = 0; o < outer; ++o)
    for (I j = 0; j < ni; ++j) {
      I t = idx.i[static_cast<std::size_t>(j)];
      if (t < 0) t += d;
      if (t < 0 || t >= d)
        throw Error(ErrorKind::BadInput, c.n.label() + ": index " + std::to_string(idx.i[static_cast<std::size_t>(j)]) + " out of range");
      for (I e = 0; e < inner; ++e)
        copy_element(x, static_cast<std::size_t>((o * d + t) * inner + e), y, static_cast<std::size_t>((o * ni + j) * inner + e));
    }
}

// ---- vinfer.ChannelGather: y[n, j] = the inputs concatenated along the
// channels, its channel channels[j] (a graph pass makes it from ShuffleNet's
// channel shuffle and the split after it; passes.cpp, fuse_channel_shuffle).
void channel_gather_shape(ShapeContext& c) {
  if (c.n.inputs.empty()) c.bad("needs at least one input");
  const Shape& first = c.in_shape(0);
  if (first.size() != 4) c.bad("takes 4-dimensional inputs");
  I total = 0;
  for (std::size_t i = 0; i < c.n.inputs.size(); ++i) {
    const Shape& s = c.in_shape(i);
    if (s.size() != 4 || s[0] != first[0] || s[2] != first[2] || s[3] != first[3] || c.in_dtype(i) != DType::F32)
      c.bad("input " + std::to_string(i) + " shape " + shape_str(s) + " does not match " + shape_str(first));
    total += s[1];
  }
  const std::vector<I> ch = c.n.get_ints("channels");
  if (ch.empty()) c.bad("needs channels");
  for (I j : ch)
    if (j < 0 || j >= total) c.bad("channel " + std::to_string(j) + " outside the inputs' " + std::to_string(total));
  c.set(0, {first[0], static_cast<I>(ch.size()), first[2], first[3]});
}

void channel_gather_reference(RefContext& c) {
  TensorData& y = c.y();
  const std::vector<I> ch = c.n.get_ints("channels");
  const I n = y.shape[0], hw = y.shape[2] * y.shape[3], out_c = static_cast<I>(ch.size());
  for (std::size_t j = 0; j < ch.size(); ++j) {
    I k = ch[j];  // the input holding it, and its channel there
    std::size_t i = 0;
    while (k >= c.arg(i).shape[1]) k -= c.arg(i++).shape[1];
    const TensorData& x = c.arg(i);
    for (I b = 0; b < n; ++b)
      std::copy_n(x.f.begin() + (b * x.shape[1] + k) * hw, hw, y.f.begin() + (b * out_c + static_cast<I>(j)) * hw);
  }
}

// ---- Slice (opset 10+: starts, ends, axes, steps as constant inputs)
void slice_shape(ShapeContext& c) {
  c.need_inputs(3, 5);
  const Shape& x = c.in_shape(0);
  const std::vector<I> starts = c.need_const(1, "starts").i, ends = c.need_const(2, "ends").i;
  const std::vector<I> axes = c.has_input(3) ? c.need_const(3, "axes").i : std::vector<I>{};
  const std::vector<I> steps = c.has_input(4) ? c.need_const(4, "steps").i : std::vector<I>{};
  c.set(0, slice_window(c.n, x, starts, ends, axes, steps).size, c.in_dtype(0));
}

void slice_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  TensorData& y = c.y();
  const SliceWindow w = slice_window(c.n, x.shape, c.arg(1).i, c.arg(2).i, c.opt(3) ? c.opt(3)->i : std::vector<I>{},
                                     c.opt(4) ? c.opt(4)->i : std::vector<I>{});
  std::vector<I> idx(y.shape.size(), 0);
  const std::vector<I> xs = bstrides(x.shape, x.shape);
  for (I e = 0; e < numel(y.shape); ++e) {
    I src = 0;
    for (std::size_t d = 0; d < idx.size(); ++d) src += (w.begin[d] + idx[d] * w.step[d]) * xs[d];
    copy_element(x, static_cast<std::size_t>(src), y, static_cast<std::size_t>(e));
    next_index(idx, y.shape);
  }
}

// ---- Transpose
void transpose_shape(ShapeContext& c) {
  c.need_inputs(1, 1);
  const Shape& x = c.in_shape(0);
  const std::vector<I> perm = transpose_perm(c.n, x.size());
  Shape out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = x[static_cast<std::size_t>(perm[i])];
  c.set(0, out, c.in_dtype(0));
}

void transpose_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  TensorData& y = c.y();
  const std::vector<I> perm = transpose_perm(c.n, x.shape.size());
  const std::vector<I> xs = bstrides(x.shape, x.shape);
  std::vector<I> idx(y.shape.size(), 0);
  for (I e = 0; e < numel(y.shape); ++e) {
    I src = 0;
    for (std::size_t d = 0; d < idx.size(); ++d) src += idx[d] * xs[static_cast<std::size_t>(perm[d])];
    copy_element(x, static_cast<std::size_t>(src), y, static_cast<std::size_t>(e));
    next_index(idx, y.shape);
  }
}

// ---- Pad (constant mode; pads an attribute before opset 11, an input from it)
void pad_shape(ShapeContext& c) {
  if (c.has_input(3)) c.unsupported("the axes input is not supported (pads for every dimension)");
  c.need_inputs(1, 3);
  const Shape& x = c.in_shape(0);
  const std::vector<I> pads = pad_amounts(c.g, c.n);
  if (pads.size() != 2 * x.size()) c.bad("pads must have " + std::to_string(2 * x.size()) + " values");
  if (c.n.get_string("mode", "constant") != "constant") c.unsupported("mode '" + c.n.get_string("mode", "") + "' is not supported");
  if (c.has_input(2)) c.need_const(2, "constant_value");
  Shape out = x;
  for (std::size_t i = 0; i < x.size(); ++i) out[i] += pads[i] + pads[i + x.size()];
  c.set(0, out, c.in_dtype(0));
}

void pad_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  TensorData& y = c.y();
  const std::vector<I> pads = pad_amounts(c.g, c.n);
  if (y.dtype == DType::F32) std::fill(y.f.begin(), y.f.end(), pad_value(c.g, c.n));
  const std::vector<I> ys = bstrides(y.shape, y.shape);
  std::vector<I> idx(x.shape.size(), 0);
  for (I e = 0; e < numel(x.shape); ++e) {
    I dst = 0;
    bool inside = true;
    for (std::size_t d = 0; d < idx.size(); ++d) {
      const I o = idx[d] + pads[d];  // negative pads crop
      inside &= o >= 0 && o < y.shape[d];
      dst += o * ys[d];
    }
    if (inside) copy_element(x, static_cast<std::size_t>(e), y, static_cast<std::size_t>(dst));
    next_index(idx, x.shape);
  }
}

// ---- Constant (value, or value_float(s)/value_int(s) normalized to value at import)
void constant_from_onnx(Node& n, std::int64_t) {
  if (n.has("value")) return;
  if (n.has("value_float")) {
    n.attrs["value"] = TensorData::f32({}, {n.get_float("value_float", 0)});
  } else if (n.has("value_floats")) {
    auto v = n.get_floats("value_floats");
    n.attrs["value"] = TensorData::f32({static_cast<I>(v.size())}, v);
  } else if (n.has("value_int")) {
    n.attrs["value"] = TensorData::i64({}, {n.get_int("value_int", 0)});
  } else if (n.has("value_ints")) {
    auto v = n.get_ints("value_ints");
    n.attrs["value"] = TensorData::i64({static_cast<I>(v.size())}, v);
  }
}

void constant_shape(ShapeContext& c) {
  c.need_inputs(0, 0);
  auto it = c.n.attrs.find("value");
  if (it == c.n.attrs.end() || !std::holds_alternative<TensorData>(it->second)) c.unsupported("only the 'value' tensor attribute is supported");
  const TensorData& t = std::get<TensorData>(it->second);
  c.set(0, t.shape, t.dtype);
}

void constant_reference(RefContext& c) { c.y() = std::get<TensorData>(c.n.attrs.at("value")); }

void constant_of_shape_shape(ShapeContext& c) {
  c.need_inputs(1, 1);
  const TensorData& s = c.need_const(0, "the shape");
  DType t = DType::F32;
  auto it = c.n.attrs.find("value");
  if (it != c.n.attrs.end()) t = std::get<TensorData>(it->second).dtype;
  c.set(0, s.i, t);
}

void constant_of_shape_reference(RefContext& c) {
  TensorData& y = c.y();
  auto it = c.n.attrs.find("value");
  if (it == c.n.attrs.end()) return;
  const TensorData& v = std::get<TensorData>(it->second);
  if (y.dtype == DType::F32) std::fill(y.f.begin(), y.f.end(), v.f.at(0));
  else std::fill(y.i.begin(), y.i.end(), v.i.at(0));
}

// ---- Shape (its dimensions, start..end), Range, Cast
std::pair<I, I> shape_span(const Node& n, std::size_t rank) {
  const auto r = static_cast<I>(rank);
  I start = n.get_int("start", 0), end = n.get_int("end", r);
  start = std::clamp(start < 0 ? start + r : start, I{0}, r);
  end = std::clamp(end < 0 ? end + r : end, I{0}, r);
  return {start, std::max(start, end)};
}

void shape_shape(ShapeContext& c) {
  c.need_inputs(1, 1);
  const auto [start, end] = shape_span(c.n, c.in_shape(0).size());
  c.set(0, {end - start}, DType::I64);
}

void shape_reference(RefContext& c) {
  const Shape& s = c.g.value(c.n.inputs.at(0)).shape;
  const I start = shape_span(c.n, s.size()).first;
  for (std::size_t k = 0; k < c.y().i.size(); ++k) c.y().i[k] = s[static_cast<std::size_t>(start) + k];
}

void range_shape(ShapeContext& c) {
  c.need_inputs(3, 3);
  const TensorData &s0 = c.need_const(0, "start"), &s1 = c.need_const(1, "limit"), &s2 = c.need_const(2, "delta");
  if (s0.numel() != 1 || s1.numel() != 1 || s2.numel() != 1 || s0.dtype != s1.dtype || s0.dtype != s2.dtype)
    c.bad("start, limit and delta must be scalars of one type");
  auto at = [](const TensorData& t) { return t.dtype == DType::F32 ? static_cast<double>(t.f[0]) : static_cast<double>(t.i[0]); };
  const double count = std::ceil((at(s1) - at(s0)) / at(s2));
  if (!(count < 1e9)) c.bad("delta 0, or more than 1e9 values");
  c.set(0, {std::max<I>(0, static_cast<I>(count))}, s0.dtype);
}

void range_reference(RefContext& c) {
  const TensorData &s0 = c.arg(0), &s2 = c.arg(2);
  TensorData& y = c.y();
  for (I k = 0; k < numel(y.shape); ++k) {
    if (y.dtype == DType::F32) y.f[static_cast<std::size_t>(k)] = s0.f[0] + static_cast<float>(k) * s2.f[0];
    else y.i[static_cast<std::size_t>(k)] = s0.i[0] + k * s2.i[0];
  }
}

// ONNX type codes vinfer casts to: FLOAT 1, UINT8 2, INT8 3, UINT16 4, INT16 5,
// INT32 6, INT64 7, BOOL 9, UINT32 12 (the integers kept as int64, wrapped to
// their type's range; booleans 0/1).
void cast_shape(ShapeContext& c) {
  c.need_inputs(1, 1);
  const I to = c.n.get_int("to", 0);
  if (to != 1 && (to < 2 || to > 7) && to != 9 && to != 12)
    c.unsupported("cast to ONNX type " + std::to_string(to) + " is not supported");
  c.set(0, c.in_shape(0), to == 1 ? DType::F32 : DType::I64);
}

// A float toward zero as an int64 (NaN 0, beyond the range its end: C++ leaves those undefined).
I float_to_int(float v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18f) return std::numeric_limits<I>::max();
  if (v <= -9.2233720368547758e18f) return std::numeric_limits<I>::min();
  return static_cast<I>(v);
}

I wrap_to(I v, I to) {
  const auto u = static_cast<std::uint64_t>(v);
  switch (to) {
    case 2: return static_cast<std::uint8_t>(u);
    case 3: return static_cast<std::int8_t>(static_cast<std::uint8_t>(u));
    case 4: return static_cast<std::uint16_t>(u);
    case 5: return static_cast<std::int16_t>(static_cast<std::uint16_t>(u));
    case 6: return static_cast<std::int32_t>(static_cast<std::uint32_t>(u));
    case 12: return static_cast<std::uint32_t>(u);
    default: return v;
  }
}

void cast_reference(RefContext& c) {
  const TensorData& x = c.arg(0);
  TensorData& y = c.y();
  const I to = c.n.get_int("to", 0);
  for (std::size_t k = 0; k < (y.dtype == DType::F32 ? y.f.size() : y.i.size()); ++k) {
    if (y.dtype == DType::F32) y.f[k] = x.dtype == DType::F32 ? x.f[k] : static_cast<float>(x.i[k]);
    else if (to == 9) y.i[k] = x.dtype == DType::I64 ? x.i[k] != 0 : x.f[k] != 0.f;
    else y.i[k] = wrap_to(x.dtype == DType::I64 ? x.i[k] : float_to_int(x.f[k]), to);
  }
}

// CastLike(x, t): a Cast to t's type, which shape inference knows; the node
// becomes that Cast. vinfer holds integer and bool tensors as int64, so a t
// of either makes it a Cast to INT64 (exporters write CastLike to match the
// other operand of arithmetic, float32 or int64 shape values).
void cast_like_shape(ShapeContext& c) {
  c.need_inputs(2, 2);
  c.n.attrs = {{"to", I{c.in_dtype(1) == DType::F32 ? 1 : 7}}};
  c.n.op = "Cast";
  c.n.inputs.resize(1);
  cast_shape(c);
}

}  // namespace

void add_layout_ops(std::vector<OpDef>& ops) {
  constexpr auto Any = OpDef::Any;
  ops.insert(ops.end(), {
      {.name = "Identity", .shape = identity_shape, .reference = copy_reference, .types = Any},
      {.name = "Dropout", .shape = dropout_shape, .reference = dropout_reference, .from_onnx = refuse_training_mode},
      {.name = "Flatten", .shape = flatten_shape, .reference = copy_reference, .types = Any},
      {.name = "Reshape", .shape = reshape_shape, .reference = copy_reference, .types = Any},
      {.name = "Squeeze", .shape = squeeze_shape, .reference = copy_reference, .types = Any},
      {.name = "Unsqueeze", .shape = unsqueeze_shape, .reference = copy_reference, .types = Any},
      {.name = "Concat", .shape = concat_shape, .reference = concat_reference, .types = Any},
      {.name = "Split", .shape = split_shape, .reference = split_reference, .types = Any},
      {.name = "GatherND", .shape = gather_nd_shape, .reference = gather_scatter_nd_reference<false>, .types = Any},
      {.name = "ScatterND", .shape = scatter_nd_shape, .reference = gather_scatter_nd_reference<true>, .types = Any},
      {.name = "Gather", .shape = gather_shape, .reference = gather_reference, .types = Any},
      {.name = "Slice", .shape = slice_shape, .reference = slice_reference, .types = Any},
      {.name = "Transpose", .shape = transpose_shape, .reference = transpose_reference, .types = Any},
      {.name = "vinfer.ChannelGather", .shape = channel_gather_shape, .reference = channel_gather_reference},
      {.name = "Pad", .shape = pad_shape, .reference = pad_reference, .types = Any},
      {.name = "Constant", .shape = constant_shape, .reference = constant_reference, .types = Any, .from_onnx = constant_from_onnx},
      {.name = "ConstantOfShape", .shape = constant_of_shape_shape, .reference = constant_of_shape_reference, .types = Any},
      {.name = "Shape", .shape = shape_shape, .reference = shape_reference, .types = Any},
      {.name = "Size", .shape = size_shape, .reference = size_reference, .types = Any},
      {.name = "GatherElements", .shape = gather_elements_shape, .reference = gather_elements_reference, .types = Any},
      {.name = "ScatterElements", .shape = gather_elements_shape, .reference = scatter_elements_reference, .types = Any},
      {.name = "Trilu", .shape = trilu_shape, .reference = trilu_reference, .types = Any},
      {.name = "EyeLike", .shape = eye_like_shape, .reference = eye_like_reference, .types = Any},
      {.name = "CumSum", .shape = cumsum_shape, .reference = cumsum_reference, .types = Any},
      {.name = "Tile", .shape = tile_shape, .reference = tile_reference, .types = Any},
      {.name = "Range", .shape = range_shape, .reference = range_reference, .types = Any},
      {.name = "Cast", .shape = cast_shape, .reference = cast_reference, .types = Any},
      {.name = "CastLike", .shape = cast_like_shape, .reference = cast_reference, .types = Any},
  });
}

}  // namespace vinfer::detail
