// Internal: gemv.hpp's kernel written once over an ISA's vector type,
// included by simd_avx2.cpp and simd_avx512.cpp.
#pragma once
#include <cstdint>

#include "cpu/gemv.hpp"

namespace vinfer::cpu {

template <class I>
typename I::V gemv_load(const float* p) {
  return I::load(p);
}
template <class I>
typename I::V gemv_load(const std::uint16_t* p) {
  return I::load_bf16(p);
}

// T: the weights' type (float, or bfloat16 bits).
template <class I, class T>
void gemv_rows(const GemvRows& r, const T* base) {
  using V = typename I::V;
  constexpr int L = I::L, R = 4;
  std::int64_t i = 0;
  for (; i + R <= r.count; i += R) {
    const T* w[R];
    V x[R];
    for (int j = 0; j < R; ++j) w[j] = base + r.ks[i + j] * r.ld, x[j] = I::set1(r.xs[i + j]);
    for (std::int64_t c = 0; c < r.n; c += L) {
      V a = I::load(r.acc + c);
      for (int j = 0; j < R; ++j) a = I::fmadd(x[j], gemv_load<I>(w[j] + c), a);
      I::store(r.acc + c, a);
    }
  }
  for (; i < r.count; ++i) {
    const T* w0 = base + r.ks[i] * r.ld;
    const V x0 = I::set1(r.xs[i]);
    for (std::int64_t c = 0; c < r.n; c += L) I::store(r.acc + c, I::fmadd(x0, gemv_load<I>(w0 + c), I::load(r.acc + c)));
  }
}

}  // namespace vinfer::cpu
