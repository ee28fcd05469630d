// Internal: gemv.hpp's kernel written once over an ISA's vector type,
// included by simd_avx2.cpp and simd_avx512.cpp.
#pragma once
#include "cpu/gemv.hpp"

namespace vinfer::cpu {

template <class I>
void gemv_rows(const GemvRows& r) {
  using V = typename I::V;
  constexpr int L = I::L, R = 4;
  std::int64_t i = 0;
  for (; i + R <= r.count; i += R) {
    const float* w[R];
    V x[R];
    for (int j = 0; j < R; ++j) w[j] = r.w + r.ks[i + j] * r.ld, x[j] = I::set1(r.xs[i + j]);
    for (std::int64_t c = 0; c < r.n; c += L) {
      V a = I::load(r.acc + c);
      for (int j = 0; j < R; ++j) a = I::fmadd(x[j], I::load(w[j] + c), a);
      I::store(r.acc + c, a);
    }
  }
  for (; i < r.count; ++i) {
    const float* w0 = r.w + r.ks[i] * r.ld;
    const V x0 = I::set1(r.xs[i]);
    for (std::int64_t c = 0; c < r.n; c += L) I::store(r.acc + c, I::fmadd(x0, I::load(w0 + c), I::load(r.acc + c)));
  }
}

}  // namespace vinfer::cpu
