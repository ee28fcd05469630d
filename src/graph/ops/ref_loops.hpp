// Internal: the loops that several reference kernels share (row-major
// tensors, ONNX/NumPy broadcasting).
#pragma once
#include <cstdint>
#include <vector>

#include "vinfer/graph.hpp"

namespace vinfer::detail {

// Row-major strides of `s` aligned to `out`'s trailing dimensions, with
// broadcast dimensions (size 1 where out is larger) set to 0.
inline std::vector<std::int64_t> bstrides(const Shape& s, const Shape& out) {
  std::vector<std::int64_t> st(out.size(), 0);
  std::int64_t acc = 1;
  for (std::size_t k = 0; k < s.size(); ++k) {
    const std::size_t i = s.size() - 1 - k, o = out.size() - 1 - k;
    st[o] = s[i] == 1 && out[o] != 1 ? 0 : acc;
    acc *= s[i];
  }
  return st;
}

// Advances a row-major multi-index over `shape`; false after the last element.
inline bool next_index(std::vector<std::int64_t>& idx, const Shape& shape) {
  for (std::size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < shape[d]) return true;
    idx[d] = 0;
  }
  return false;
}

// out[e] = f(a[...], b[...]) over the broadcast shape so.
template <typename T, typename U, typename F>
void broadcast_apply(const std::vector<T>& a, const Shape& sa, const std::vector<T>& b, const Shape& sb, std::vector<U>& out,
                     const Shape& so, F f) {
  const std::vector<std::int64_t> ta = bstrides(sa, so), tb = bstrides(sb, so);
  std::vector<std::int64_t> idx(so.size(), 0);
  const std::int64_t total = numel(so);
  for (std::int64_t e = 0; e < total; ++e) {
    std::int64_t ia = 0, ib = 0;
    for (std::size_t d = 0; d < so.size(); ++d) ia += idx[d] * ta[d], ib += idx[d] * tb[d];
    out[static_cast<std::size_t>(e)] = f(a[static_cast<std::size_t>(ia)], b[static_cast<std::size_t>(ib)]);
    next_index(idx, so);
  }
}

// Copies element `from` of x to element `to` of y, whichever type they hold (the same).
inline void copy_element(const TensorData& x, std::size_t from, TensorData& y, std::size_t to) {
  if (y.dtype == DType::F32) y.f[to] = x.f[from];
  else y.i[to] = x.i[from];
}

}  // namespace vinfer::detail
