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

  // x * sigmoid(x) = x / (1 + e^-x). e^-x = 2^z, z = -x log2(e), split as
  // n + f (n an integer, |f| <= 1/2): 2^f by a degree-5 polynomial (fitted
  // for relative error, 1.6e-7 in float32), times 2^n; the reciprocal by
  // the ISA's estimate and a Newton step. Relative error within 5e-7 +
  // 8e-8 |x| against the formula in double (z's own rounding grows with
  // |x|, where SiLU is e^x-small; tests: Kernels.SiluAgainstDouble). z is
  // clamped to [-126, 126] so that 2^n stays a normal float and 1 + 2^z
  // finite; a NaN stays NaN (the final product). 16 operations: a range
  // reduction by ln 2 in two steps and a degree-6 polynomial took 19, and
  // SiLU is ~10 % of EfficientNet-B0's pass.
  static V swish(V x) {
    V z = I::mul(x, I::set1(-1.44269504088896341f));
    z = I::min(I::max(z, I::set1(-126.f)), I::set1(126.f));
    const V n = I::round(z);
    const V f = I::sub(z, n);
    V p = I::set1(0.00132647122f);
    p = I::fmadd(p, f, I::set1(0.00967151299f));
    p = I::fmadd(p, f, I::set1(0.0555073395f));
    p = I::fmadd(p, f, I::set1(0.240222424f));
    p = I::fmadd(p, f, I::set1(0.693147004f));
    p = I::fmadd(p, f, I::set1(1.f));
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
