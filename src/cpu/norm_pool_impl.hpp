// Internal: norm_pool.hpp's row kernel written once over an ISA's vector type
// (L channels of one pixel), included by simd_avx2.cpp and simd_avx512.cpp.
#pragma once
#include "cpu/norm_pool.hpp"

namespace vinfer::cpu {

template <class I>
void norm_pool_row(const NormPoolRow& r) {
  using V = typename I::V;
  constexpr int L = I::L;
  const V s = I::load(r.scale), t = I::load(r.shift), lo = I::set1(r.lo), inv = I::set1(r.inv_area);
  for (std::ptrdiff_t ox = 0; ox < r.ow; ++ox) {
    V acc = I::zero();
    for (int ky = 0; ky < r.kh; ++ky) {
      const float* p = r.x + (ky * r.w + ox * r.kw) * L;
      for (int kx = 0; kx < r.kw; ++kx) acc = I::add(acc, I::max(I::fmadd(I::load(p + kx * L), s, t), lo));
    }
    I::store(r.y + ox * L, I::mul(acc, inv));
  }
}

}  // namespace vinfer::cpu
