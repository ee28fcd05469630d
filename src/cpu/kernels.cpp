#include "cpu/kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cpu/gemv.hpp"
#include "graph/activation.hpp"

namespace vinfer::cpu {
void apply_post(float* y, std::int64_t n, const std::vector<PostOp>& post, const float* sum) {
  for (const PostOp& p : post) {
    if (p.kind == PostOp::Sum) {
      for (std::int64_t i = 0; i < n; ++i) y[i] += sum[i];
    } else if (p.kind == PostOp::Relu) {
      for (std::int64_t i = 0; i < n; ++i) y[i] = std::max(y[i], 0.f);
    } else {
      for (std::int64_t i = 0; i < n; ++i) y[i] = detail::apply_activation(p, y[i]);
    }
  }
}

namespace {

bool is_single_relu(const std::vector<PostOp>& post) { return post.size() == 1 && post[0].kind == PostOp::Relu; }

}  // namespace

void scale_shift_row(const float* x, float* y, std::int64_t n, float s, float b, const std::vector<PostOp>& post, const float* sum) {
  if (is_single_relu(post)) {  // DenseNet's BN-ReLU: one pass
    for (std::int64_t i = 0; i < n; ++i) y[i] = std::max(x[i] * s + b, 0.f);
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] * s + b;
  apply_post(y, n, post, sum);
}

namespace {

template <int B>
void blocked_impl(const float* x, float* y, std::int64_t n, const float* s, const float* b, const std::vector<PostOp>& post,
                  const float* sum) {
  float sv[B], bv[B];
  std::copy(s, s + B, sv);
  std::copy(b, b + B, bv);
  if (is_single_relu(post)) {
    for (std::int64_t i = 0; i < n; ++i)
      for (int c = 0; c < B; ++c) y[i * B + c] = std::max(x[i * B + c] * sv[c] + bv[c], 0.f);
    return;
  }
  for (std::int64_t i = 0; i < n; ++i)
    for (int c = 0; c < B; ++c) y[i * B + c] = x[i * B + c] * sv[c] + bv[c];
  apply_post(y, n * B, post, sum);
}

}  // namespace

void scale_shift_blocked(const float* x, float* y, std::int64_t n, int block, const float* s, const float* b,
                         const std::vector<PostOp>& post, const float* sum) {
  if (block == 16) blocked_impl<16>(x, y, n, s, b, post, sum);
  else blocked_impl<8>(x, y, n, s, b, post, sum);
}

void scale_shift_blocked16_bf16(const float* x, std::uint16_t* y, std::int64_t n, std::int64_t y_stride, int count, const float* s,
                                const float* b, bool relu) {
  for (std::int64_t p = 0; p < n; ++p)
    for (int c = 0; c < count; ++c) {
      const float v = x[p * 16 + c] * s[c] + b[c];
      y[p * y_stride + c] = to_bf16(relu ? std::max(v, 0.f) : v);
    }
}

void gemv_rows_plain(const GemvRows& r) {
  for (std::int64_t i = 0; i < r.count; ++i) {
    const float* w = r.w + r.ks[i] * r.ld;
    const float x = r.xs[i];
    for (std::int64_t c = 0; c < r.n; ++c) r.acc[c] = std::fma(x, w[c], r.acc[c]);
  }
}

void gemv_rows_bf16_plain(const GemvRows& r) {
  for (std::int64_t i = 0; i < r.count; ++i) {
    const std::uint16_t* w = r.w16 + r.ks[i] * r.ld;
    const float x = r.xs[i];
    for (std::int64_t c = 0; c < r.n; ++c) {
      const std::uint32_t u = static_cast<std::uint32_t>(w[c]) << 16;
      float v;
      std::memcpy(&v, &u, sizeof v);
      r.acc[c] = std::fma(x, v, r.acc[c]);
    }
  }
}

void quantize(const float* x, void* y, std::int64_t n, float inv_scale, bool is_unsigned) {
  const float lo = is_unsigned ? 0.f : -128.f, hi = is_unsigned ? 255.f : 127.f;
  for (std::int64_t i = 0; i < n; ++i) {
    float v = x[i] * inv_scale;
    if (!(v >= lo)) v = lo;
    if (v > hi) v = hi;
    const auto q = static_cast<int>(std::nearbyint(v));
    if (is_unsigned) static_cast<std::uint8_t*>(y)[i] = static_cast<std::uint8_t>(q);
    else static_cast<std::int8_t*>(y)[i] = static_cast<std::int8_t>(q);
  }
}

void quantize_bf16(const std::uint16_t* x, void* y, std::int64_t n, float inv_scale, bool is_unsigned) {
  for (std::int64_t i = 0; i < n; ++i) {
    const std::uint32_t u = static_cast<std::uint32_t>(x[i]) << 16;
    float v;
    std::memcpy(&v, &u, sizeof v);
    quantize(&v, static_cast<std::int8_t*>(y) + i, 1, inv_scale, is_unsigned);
  }
}

void scale_shift_blocked16_quantize(const float* x, void* y, std::int64_t n, std::int64_t y_stride, int count, const float* s,
                                    const float* b, bool relu, float inv_scale, bool is_unsigned) {
  float v[16];
  for (std::int64_t p = 0; p < n; ++p) {
    for (int c = 0; c < 16; ++c) {
      v[c] = std::fma(x[p * 16 + c], s[c], b[c]);
      if (relu && !(v[c] > 0)) v[c] = 0;
    }
    quantize(v, static_cast<std::int8_t*>(y) + p * y_stride, count, inv_scale, is_unsigned);
  }
}

}  // namespace vinfer::cpu
