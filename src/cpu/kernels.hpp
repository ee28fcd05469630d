// Internal: vinfer's own CPU kernels (free functions, plain C++ that the
// compiler vectorizes; the reference is graph/reference.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "vinfer/graph.hpp"

namespace vinfer::cpu {

// The post-ops in order over a contiguous span (`sum`: the Sum operand's
// matching span, if there is one).
void apply_post(float* y, std::int64_t n, const std::vector<PostOp>& post, const float* sum);
// y[i] = post(x[i] * s + b) over one channel's row of n values.
void scale_shift_row(const float* x, float* y, std::int64_t n, float s, float b, const std::vector<PostOp>& post, const float* sum);
// The same over n pixels of one channel block (nChw8c/16c): `block` channels
// interleaved; s and b point at `block` values.
void scale_shift_blocked(const float* x, float* y, std::int64_t n, int block, const float* s, const float* b,
                         const std::vector<PostOp>& post, const float* sum);

}  // namespace vinfer::cpu
