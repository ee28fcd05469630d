// Internal: the function vinfer's own convolution kernels (conv1x1.hpp,
// winograd.hpp) apply to each output as they store it, after the bias and
// any residual.
#pragma once

namespace vinfer::cpu {

// A clamp to [lo, hi] (none, ReLU, Clip), or SiLU (x * sigmoid(x), EfficientNet's).
enum class OutAct : int { Clamp, Swish };

// Where a residual (a tensor shaped as the output) is added: nowhere, before
// the function (ResNet's order: the sum, then ReLU), or after it
// (EfficientNetV2's: SiLU, then the shortcut).
enum class Residual : int { None, BeforeAct, AfterAct };

// The functions over an ISA's vector type (the ISA structs of simd_avx2.cpp
// and simd_avx512.cpp).
template <class I>
struct OutActs {
  using V = typename I::V;

  // x * sigmoid(x) = x / (1 + e^-x): e^-x as 2^n e^r (|r| <= ln 2 / 2, a
  // degree-6 polynomial), the reciprocal by the ISA's estimate and a Newton
  // step: relative error ~2e-7 against the formula in double. -x is clamped
  // to [-87, 88] so that 2^n stays a normal float and 1 + e^-x finite; a NaN
  // stays NaN (the final product).
  static V swish(V x) {
    const V t = I::min(I::max(I::sub(I::zero(), x), I::set1(-87.f)), I::set1(88.f));
    const V n = I::round(I::mul(t, I::set1(1.44269504088896341f)));
    V r = I::fnmadd(n, I::set1(0.693359375f), t);
    r = I::fnmadd(n, I::set1(-2.12194440e-4f), r);
    V p = I::set1(1.f / 720);
    p = I::fmadd(p, r, I::set1(1.f / 120));
    p = I::fmadd(p, r, I::set1(1.f / 24));
    p = I::fmadd(p, r, I::set1(1.f / 6));
    p = I::fmadd(p, r, I::set1(0.5f));
    p = I::fmadd(p, r, I::set1(1.f));
    p = I::fmadd(p, r, I::set1(1.f));
    const V d = I::add(I::set1(1.f), I::scale2(p, n));
    V q = I::rcp(d);
    q = I::mul(q, I::fnmadd(d, q, I::set1(2.f)));
    return I::mul(x, q);
  }

  template <OutAct A>
  static V apply(V x, V lo, V hi) {
    if constexpr (A == OutAct::Swish) return swish(x);
    else return I::min(I::max(x, lo), hi);
  }
};

}  // namespace vinfer::cpu
