// Internal: squeeze-and-excite's kernels (squeeze_excite.hpp), written once
// over an ISA's vector type, included by simd_avx2.cpp and simd_avx512.cpp.
#pragma once
#include <algorithm>
#include <cstdint>

#include "cpu/out_act.hpp"
#include "cpu/squeeze_excite.hpp"

namespace vinfer::cpu {

template <class I>
struct SqueezeExciteKernels {
  using V = typename I::V;
  static constexpr int L = I::L;

  static void mean(const float* x, std::int64_t pixels, float* out) {
    V a0 = I::zero(), a1 = I::zero(), a2 = I::zero(), a3 = I::zero();
    std::int64_t p = 0;
    for (; p + 4 <= pixels; p += 4, x += 4 * L) {
      a0 = I::add(a0, I::load(x));
      a1 = I::add(a1, I::load(x + L));
      a2 = I::add(a2, I::load(x + 2 * L));
      a3 = I::add(a3, I::load(x + 3 * L));
    }
    for (; p < pixels; ++p, x += L) a0 = I::add(a0, I::load(x));
    I::store(out, I::mul(I::add(I::add(a0, a1), I::add(a2, a3)), I::set1(1.f / static_cast<float>(pixels))));
  }

  static void scale(const float* x, const float* s, std::int64_t pixels, float* y) {
    const V v = I::load(s);
    for (std::int64_t p = 0; p < pixels; ++p) I::store(y + p * L, I::mul(I::load(x + p * L), v));
  }

  static V apply(const SeAct& a, V x) {
    switch (a.kind) {
      case SeAct::Swish: return OutActs<I>::swish(x);
      case SeAct::Sigmoid: return OutActs<I>::sigmoid(x);
      case SeAct::HardSigmoid:
        return I::min(I::max(I::fmadd(x, I::set1(a.a), I::set1(a.b)), I::zero()), I::set1(1.f));
      case SeAct::Clamp: break;
    }
    return I::min(I::max(x, I::set1(a.a)), I::set1(a.b));
  }

  // N output vectors from v, their sums over k in [k0, k1) in four
  // interleaved chains each (the depth is up to ~1000 and the vectors few:
  // one chain would wait on the FMA latency); done: with the bias and the
  // function.
  template <int N>
  static void vectors(const SeLayer& f, const float* in, int k0, int k1, int v, bool done, float* out) {
    V acc[N][4];
    for (int j = 0; j < N; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = I::zero();
    const float* w = f.w + static_cast<std::size_t>(v) * L;
    int k = k0;
    for (; k + 4 <= k1; k += 4)
      for (int s = 0; s < 4; ++s) {
        const V a = I::set1(in[k + s]);
        const float* row = w + static_cast<std::size_t>(k + s) * f.ld;
        for (int j = 0; j < N; ++j) acc[j][s] = I::fmadd(a, I::load(row + j * L), acc[j][s]);
      }
    for (; k < k1; ++k) {
      const V a = I::set1(in[k]);
      const float* row = w + static_cast<std::size_t>(k) * f.ld;
      for (int j = 0; j < N; ++j) acc[j][0] = I::fmadd(a, I::load(row + j * L), acc[j][0]);
    }
    for (int j = 0; j < N; ++j) {
      const V sum = I::add(I::add(acc[j][0], acc[j][1]), I::add(acc[j][2], acc[j][3]));
      I::store(out + (v + j) * L, done ? apply(f.act, I::add(sum, I::load(f.bias + (v + j) * L))) : sum);
    }
  }

  static void layer(const SeLayer& f, const float* in, int k0, int k1, int v0, int v1, bool done, float* out) {
    for (int v = v0; v < v1; v += 4) {
      switch (std::min(4, v1 - v)) {
        case 1: vectors<1>(f, in, k0, k1, v, done, out); break;
        case 2: vectors<2>(f, in, k0, k1, v, done, out); break;
        case 3: vectors<3>(f, in, k0, k1, v, done, out); break;
        default: vectors<4>(f, in, k0, k1, v, done, out);
      }
    }
  }

  static void finish(const SeLayer& f, const float* parts, int count, std::size_t stride, int vectors, float* out) {
    for (int v = 0; v < vectors; ++v) {
      V acc = I::load(f.bias + v * L);
      for (int p = 0; p < count; ++p) acc = I::add(acc, I::load(parts + p * stride + v * L));
      I::store(out + v * L, apply(f.act, acc));
    }
  }
};

}  // namespace vinfer::cpu
