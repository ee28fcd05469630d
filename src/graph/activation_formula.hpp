// Internal: the element-wise activations' formulas (PostOp's kinds), plain
// C++ that compiles for the host and, inside nvcc, for the device: the
// reference evaluator, vinfer's CPU kernels and the CUDA kernels all apply
// these.
#pragma once
#include <cmath>

#if defined(__CUDACC__)
#define VINFER_ACT_HD __host__ __device__
#else
#define VINFER_ACT_HD
#endif

namespace vinfer::detail {

// The values of PostOp::Kind (static_assert in activation.cpp).
enum ActivationKind : int { kRelu = 0, kClip, kSigmoid, kSwish, kSum, kHardSigmoid, kHardSwish, kLeakyRelu, kTanh, kGelu };

VINFER_ACT_HD inline float clamp01(float v) { return v < 0.f ? 0.f : (v > 1.f ? 1.f : v); }

// kind's activation of v (kSum: v unchanged; its operand is the caller's).
VINFER_ACT_HD inline float activation_formula(int kind, float alpha, float beta, float v) {
  switch (kind) {
    case kRelu: return v > 0.f ? v : 0.f;
    case kClip: return fminf(fmaxf(v, alpha), beta);
    case kSigmoid: return 1.f / (1.f + expf(-v));
    case kSwish: return v / (1.f + expf(-v));
    case kHardSigmoid: return clamp01(alpha * v + beta);
    case kHardSwish: return v * clamp01(v / 6.f + 0.5f);
    case kLeakyRelu: return v < 0.f ? alpha * v : v;
    case kTanh: return tanhf(v);
    case kGelu: return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
    default: return v;
  }
}

}  // namespace vinfer::detail
