// vinfer's own CUDA kernels: everything around cuDNN's convolutions and
// cuBLAS's matrix products. Grid-stride loops; float32; no allocation.
#include <cfloat>
#include <cmath>

#include "cuda/kernels.hpp"
#include "graph/activation_formula.hpp"

namespace vinfer::cuda::k {
namespace {

constexpr int kThreads = 256;

int blocks_for(std::int64_t n) {
  const std::int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 4096 ? (b > 0 ? b : 1) : 4096);
}

__device__ float apply_post(float v, const PostOps& post, const float* sum, std::int64_t i) {
  for (int p = 0; p < post.count; ++p)
    v = post.kind[p] == detail::kSum ? v + sum[i] : detail::activation_formula(post.kind[p], post.alpha[p], post.beta[p], v);
  return v;
}

__global__ void affine_post_kernel(const float* x, float* y, const float* scale, const float* shift,
                                   std::int64_t channels, std::int64_t inner, std::int64_t total, const float* sum,
                                   PostOps post) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t c = (i / inner) % channels;
    float v = x[i];
    if (scale) v *= scale[c];
    if (shift) v += shift[c];
    y[i] = apply_post(v, post, sum, i);
  }
}

__global__ void pool2d_kernel(const float* x, float* y, Pool2d p) {
  const std::int64_t total = p.planes * p.oh * p.ow;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const int ox = static_cast<int>(i % p.ow), oy = static_cast<int>((i / p.ow) % p.oh);
    const std::int64_t plane = i / (static_cast<std::int64_t>(p.ow) * p.oh);
    const float* xp = x + plane * p.h * p.w;
    const int y0 = oy * p.sh - p.pad_t, x0 = ox * p.sw - p.pad_l;
    float best = -FLT_MAX, acc = 0.f;
    int counted = 0;
    for (int ky = 0; ky < p.kh; ++ky) {
      const int iy = y0 + ky * p.dh;
      if (iy < 0 || iy >= p.h) continue;
      for (int kx = 0; kx < p.kw; ++kx) {
        const int ix = x0 + kx * p.dw;
        if (ix < 0 || ix >= p.w) continue;
        const float v = xp[static_cast<std::int64_t>(iy) * p.w + ix];
        best = fmaxf(best, v);
        acc += v;
        ++counted;
      }
    }
    if (p.max) {
      y[i] = best;
    } else {
      // PyTorch: count_include_pad counts explicit padding, never the ceil_mode overhang.
      int div = counted;
      if (p.count_include_pad) {
        const int ye = min(y0 + (p.kh - 1) * p.dh + 1, p.h + p.pad_b), xe = min(x0 + (p.kw - 1) * p.dw + 1, p.w + p.pad_r);
        div = (ye - y0) * (xe - x0);
      }
      y[i] = div > 0 ? acc / static_cast<float>(div) : 0.f;
    }
  }
}

__global__ void pad2d_kernel(const float* x, float* y, std::int64_t planes, int h, int w, int oh, int ow, int top, int left) {
  const std::int64_t total = planes * oh * ow;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const int ox = static_cast<int>(i % ow), oy = static_cast<int>((i / ow) % oh);
    const std::int64_t plane = i / (static_cast<std::int64_t>(ow) * oh);
    const int iy = oy - top, ix = ox - left;
    y[i] = iy >= 0 && iy < h && ix >= 0 && ix < w ? x[(plane * h + iy) * w + ix] : 0.f;
  }
}

// One block per plane, a tree reduction in shared memory.
__global__ void global_avg_kernel(const float* x, float* y, std::int64_t hw) {
  __shared__ float part[kThreads];
  const float* xp = x + blockIdx.x * hw;
  float acc = 0.f;
  for (std::int64_t i = threadIdx.x; i < hw; i += blockDim.x) acc += xp[i];
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[blockIdx.x] = part[0] / static_cast<float>(hw);
}

__global__ void binary_kernel(const float* a, const float* b, float* y, Broadcast bc, int op, std::int64_t total) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t rest = i, ia = 0, ib = 0;
    for (int d = bc.rank - 1; d >= 0; --d) {
      const std::int64_t idx = rest % bc.dims[d];
      rest /= bc.dims[d];
      ia += idx * bc.sa[d];
      ib += idx * bc.sb[d];
    }
    const float u = a[ia], v = b[ib];
    y[i] = op == 0 ? u + v : op == 1 ? u - v : op == 2 ? u * v : u / v;
  }
}

// One block per row: max, sum of exponentials, then the quotients.
__global__ void softmax_kernel(const float* x, float* y, std::int64_t len, std::int64_t inner) {
  __shared__ float part[kThreads];
  const std::int64_t line = blockIdx.x, o = line / inner, j = line % inner;
  const float* xr = x + o * len * inner + j;
  float* yr = y + o * len * inner + j;
  float m = -FLT_MAX;
  for (std::int64_t i = threadIdx.x; i < len; i += blockDim.x) m = fmaxf(m, xr[i * inner]);
  part[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s) part[threadIdx.x] = fmaxf(part[threadIdx.x], part[threadIdx.x + s]);
    __syncthreads();
  }
  m = part[0];
  __syncthreads();
  float acc = 0.f;
  for (std::int64_t i = threadIdx.x; i < len; i += blockDim.x) acc += expf(xr[i * inner] - m);
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  const float total = part[0];
  for (std::int64_t i = threadIdx.x; i < len; i += blockDim.x) yr[i * inner] = expf(xr[i * inner] - m) / total;
}

__global__ void permute_kernel(const float* x, float* y, Permute p, std::int64_t total) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t rest = i, src = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      src += (rest % p.out_dims[d]) * p.in_strides[d];
      rest /= p.out_dims[d];
    }
    y[i] = x[src];
  }
}

}  // namespace

void affine_post(const float* x, float* y, const float* scale, const float* shift, std::int64_t channels,
                 std::int64_t inner, std::int64_t total, const float* sum, const PostOps& post, cudaStream_t s) {
  affine_post_kernel<<<blocks_for(total), kThreads, 0, s>>>(x, y, scale, shift, channels, inner, total, sum, post);
}

void pool2d(const float* x, float* y, const Pool2d& p, cudaStream_t s) {
  pool2d_kernel<<<blocks_for(p.planes * p.oh * p.ow), kThreads, 0, s>>>(x, y, p);
}

void pad2d(const float* x, float* y, std::int64_t planes, int h, int w, int oh, int ow, int top, int left, cudaStream_t s) {
  pad2d_kernel<<<blocks_for(planes * oh * ow), kThreads, 0, s>>>(x, y, planes, h, w, oh, ow, top, left);
}

void global_avg(const float* x, float* y, std::int64_t planes, std::int64_t hw, cudaStream_t s) {
  global_avg_kernel<<<static_cast<unsigned>(planes), kThreads, 0, s>>>(x, y, hw);
}

void binary(const float* a, const float* b, float* y, const Broadcast& bc, Binary op, std::int64_t total, cudaStream_t s) {
  binary_kernel<<<blocks_for(total), kThreads, 0, s>>>(a, b, y, bc, static_cast<int>(op), total);
}

void softmax(const float* x, float* y, std::int64_t outer, std::int64_t len, std::int64_t inner, cudaStream_t s) {
  softmax_kernel<<<static_cast<unsigned>(outer * inner), kThreads, 0, s>>>(x, y, len, inner);
}

void permute(const float* x, float* y, const Permute& p, std::int64_t total, cudaStream_t s) {
  permute_kernel<<<blocks_for(total), kThreads, 0, s>>>(x, y, p, total);
}

namespace {
__global__ void fused_prep_kernel(detail::FusedPrepArgs a) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= a.size) return;
  for (int y = blockIdx.y; y < a.size; y += gridDim.y) detail::fused_prep_pixel(a, x, y);
}
}  // namespace

void fused_prep(const detail::FusedPrepArgs& a, cudaStream_t s) {
  const dim3 grid(static_cast<unsigned>((a.size + 127) / 128), static_cast<unsigned>(a.size < 65535 ? a.size : 65535));
  fused_prep_kernel<<<grid, 128, 0, s>>>(a);
}

}  // namespace vinfer::cuda::k
