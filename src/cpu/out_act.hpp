// Internal: the function vinfer's own convolution kernels (conv1x1.hpp,
// winograd.hpp) apply to each output as they store it, after the bias and
// any residual.
#pragma once

namespace vinfer::cpu {

// A clamp to [lo, hi] (none, ReLU, Clip), SiLU (x * sigmoid(x),
// EfficientNet's), or HardSwish (x * min(max(x / 6 + 1/2, 0), 1),
// MobileNetV3's, as oneDNN's post-op computes it).
enum class OutAct : int { Clamp, Swish, HardSwish };

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

  static V hard_swish(V x) {
    const V gate = I::min(I::max(I::fmadd(x, I::set1(1.f / 6), I::set1(0.5f)), I::zero()), I::set1(1.f));
    return I::mul(x, gate);
  }

  // 1 / (1 + e^-x), as above.
  static V sigmoid(V x) {
    V w = I::fmadd(x, I::set1(-1.44269504088896341f), I::set1(0.5f));
    w = I::min(I::set1(126.5f), w);  // (the second operand where one is NaN: a NaN stays NaN)
    const V d = I::add(I::set1(1.f), pow2_less_half(w));
    const V q = I::rcp(d);
    return I::mul(q, I::fnmadd(d, q, I::set1(2.f)));
  }

  // GELU(x) = x Phi(x), Phi the normal distribution (PyTorch's default,
  // 0.5 x (1 + erf(x / sqrt 2))). With a = |x| and h = Phi(-a) =
  // erfc(a / sqrt 2) / 2, GELU(x) = max(x, 0) - a h on either side.
  // erfc(z) = t P(t) e^-z^2 with t = 1 / (1 + p z), P of degree 4
  // (Abramowitz and Stegun 7.1.26: absolute error within 1.5e-7), e^-z^2 as
  // 2^w above. Absolute error within 2e-7 (1 + |x|) against the formula in
  // double (tests: Kernels.GeluAgainstDouble); 22 operations with AVX-512
  // against oneDNN's GELU post-op at 0.3-0.5 ns a value on two Zen 4
  // cores. a is held to 10 (h(10) = 7.6e-24: no denormal on the way; +inf
  // gives inf, -inf -7.6e-23 where the limit is 0; a NaN stays NaN).
  static V gelu(V x) {
    const V a = I::min(I::set1(10.f), I::abs(x));  // (the second operand where one is NaN)
    const V d = I::fmadd(a, I::set1(0.3275911f * 0.70710678118654752f), I::set1(1.f));
    V t = I::rcp(d);
    t = I::mul(t, I::fnmadd(d, t, I::set1(2.f)));
    V q = I::set1(0.5f * 1.061405429f);  // (the coefficients halved: h = erfc / 2)
    q = I::fmadd(q, t, I::set1(0.5f * -1.453152027f));
    q = I::fmadd(q, t, I::set1(0.5f * 1.421413741f));
    q = I::fmadd(q, t, I::set1(0.5f * -0.284496736f));
    q = I::fmadd(q, t, I::set1(0.5f * 0.254829592f));
    q = I::mul(q, t);
    // e^(-a^2 / 2) = 2^w, w = -a^2 log2(e) / 2 >= -72.2; split w + 1/2 as above
    const V h = I::mul(q, pow2_less_half(I::fmadd(I::mul(a, a), I::set1(-0.72134752044448170f), I::set1(0.5f))));
    return I::fnmadd(a, h, I::max(I::zero(), x));  // (max: x where x is NaN)
  }

  // 2^(w - 1/2): w = n + g (n = floor(w), g in [0, 1)), 2^(g - 1/2) by the
  // polynomial, times 2^n.
  static V pow2_less_half(V w) {
    V g;
    const V n = I::floor_split(w, g);
    V p = I::set1(0.00132647122f);
    p = I::fmadd(p, g, I::set1(0.00635533500f));
    p = I::fmadd(p, g, I::set1(0.0394804925f));
    p = I::fmadd(p, g, I::set1(0.169810593f));
    p = I::fmadd(p, g, I::set1(0.490133852f));
    p = I::fmadd(p, g, I::set1(0.707106709f));
    return I::scale2(p, n);
  }

  template <OutAct A>
  static V apply(V x, V lo, V hi) {
    if constexpr (A == OutAct::Swish) return swish(x);
    else if constexpr (A == OutAct::HardSwish) return hard_swish(x);
    else return I::min(I::max(x, lo), hi);
  }
};

}  // namespace vinfer::cpu
