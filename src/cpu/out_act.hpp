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

  // x * sigmoid(x) = x / (1 + e^-x). e^-x = 2^z, z = -x log2(e); with
  // w = z + 1/2 = n + g (n = floor(w), g in [0, 1)), 2^z = 2^n 2^(g - 1/2):
  // 2^(g - 1/2) by a degree-5 polynomial (fitted for relative error, 2e-7
  // in float32), times 2^n; the reciprocal by the ISA's estimate and a
  // Newton step. Relative error within 5e-7 + 8e-8 |x| against the formula
  // in double (w's own rounding grows with |x|, where SiLU is e^x-small;
  // tests: Kernels.SiluAgainstDouble). w <= 126.5 keeps 1 + 2^z finite; a
  // NaN stays NaN. With AVX-512 the split is one instruction (VREDUCEPS
  // gives g, VSCALEFPS floors w itself) and 2^z underflows to 0 where w is
  // very negative: 14 operations (a range
  // reduction by ln 2 in two steps and a degree-6 polynomial took 19; SiLU
  // is ~10 % of EfficientNet-B0's pass). A division instead of the
  // reciprocal and its Newton step measured 5 % faster in Zen 4's 1x1
  // kernel, but Intel's AVX-512 divides a vector in 8-10 cycles on a port
  // the FMAs need.
  static V swish(V x) { return I::mul(x, sigmoid(x)); }

  // 1 / (1 + e^-x), as above.
  static V sigmoid(V x) {
    V w = I::fmadd(x, I::set1(-1.44269504088896341f), I::set1(0.5f));
    w = I::min(I::set1(126.5f), w);  // (the second operand where one is NaN: a NaN stays NaN)
    V g;
    const V n = I::floor_split(w, g);
    V p = I::set1(0.00132647122f);
    p = I::fmadd(p, g, I::set1(0.00635533500f));
    p = I::fmadd(p, g, I::set1(0.0394804925f));
    p = I::fmadd(p, g, I::set1(0.169810593f));
    p = I::fmadd(p, g, I::set1(0.490133852f));
    p = I::fmadd(p, g, I::set1(0.707106709f));
    const V d = I::add(I::set1(1.f), I::scale2(p, n));
    const V q = I::rcp(d);
    return I::mul(q, I::fnmadd(d, q, I::set1(2.f)));
  }

  template <OutAct A>
  static V apply(V x, V lo, V hi) {
    if constexpr (A == OutAct::Swish) return swish(x);
    else return I::min(I::max(x, lo), hi);
  }
};

}  // namespace vinfer::cpu
