// Internal: vinfer's own CUDA kernels (kernels.cu), launched on a stream.
// Plain NCHW float32 everywhere; sizes in elements. Each is the GPU version
// of a CPU kernel or reference loop and has the same semantics.
#pragma once
#include <cstdint>

#include <cuda_runtime.h>

#include "image/fused_prep_kernel.hpp"

namespace vinfer::cuda::k {

// A fused epilogue: up to four post-ops applied in order after the bias.
// Up to four post-ops; kind: PostOp::Kind's value (the formulas of graph/activation_formula.hpp).
struct PostOps {
  int count = 0;
  int kind[4] = {};
  float alpha[4] = {}, beta[4] = {};
};

// y[i] = post(y[i] * scale[c] + shift[c]) with c = (i / inner) % channels;
// scale or shift may be null (1 and 0); sum: the Sum post-op's operand.
void affine_post(const float* x, float* y, const float* scale, const float* shift, std::int64_t channels,
                 std::int64_t inner, std::int64_t total, const float* sum, const PostOps& post, cudaStream_t s);

struct Pool2d {
  std::int64_t planes = 0;  // N * C
  int h = 0, w = 0, oh = 0, ow = 0;
  int kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int pad_t = 0, pad_l = 0, pad_b = 0, pad_r = 0;  // explicit padding (not the ceil_mode overhang)
  bool max = true, count_include_pad = false;
};
void pool2d(const float* x, float* y, const Pool2d& p, cudaStream_t s);

// Zero padding of planes h x w into oh x ow, the input at (top, left).
void pad2d(const float* x, float* y, std::int64_t planes, int h, int w, int oh, int ow, int top, int left, cudaStream_t s);

// y[p] = mean of plane p (hw values), for planes planes.
void global_avg(const float* x, float* y, std::int64_t planes, std::int64_t hw, cudaStream_t s);

// Elementwise a (op) b with numpy broadcasting over up to 6 dims: out_dims,
// and each operand's strides in elements (0 along broadcast dims).
struct Broadcast {
  int rank = 0;
  std::int64_t dims[6] = {}, sa[6] = {}, sb[6] = {};
};
enum class Binary : int { Add = 0, Sub = 1, Mul = 2, Div = 3 };
void binary(const float* a, const float* b, float* y, const Broadcast& bc, Binary op, std::int64_t total, cudaStream_t s);

// Softmax of x as [outer, len, inner] along len (one block per outer x inner line).
void softmax(const float* x, float* y, std::int64_t outer, std::int64_t len, std::int64_t inner, cudaStream_t s);

// y = x permuted: y's index (i0..ir) reads x at sum(ik * in_strides[k]).
struct Permute {
  int rank = 0;
  std::int64_t out_dims[6] = {}, in_strides[6] = {};
};
void permute(const float* x, float* y, const Permute& p, std::int64_t total, cudaStream_t s);

// A preset's resize and normalize from a u8 RGB image straight into the
// network's input: the formula of image/fused_prep_kernel.hpp, one thread per
// output pixel (all pointers in a on the device).
void fused_prep(const detail::FusedPrepArgs& a, cudaStream_t s);

}  // namespace vinfer::cuda::k
