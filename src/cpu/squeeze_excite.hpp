// Internal: squeeze-and-excite's gate (EfficientNet's, MobileNetV3's,
// RegNetY's), s = f2(W2 f1(W1 mean(x) + b1) + b2), one value per image and
// channel (and, where nothing else applies it, x * s), as one op: the channel means of a channel-blocked map (nChw8c /
// nChw16c), then two small fully connected layers (C -> R -> C, weights
// packed at load). In a network these are a GlobalAveragePool and two 1x1
// convolutions on 1x1 maps: three ops whose work is a few microseconds
// each, and as many dispatches, layout conversions and waits.
#pragma once
#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <limits>

#include "cpu/aligned.hpp"
#include "cpu/prefetch.hpp"

namespace vinfer::cpu {

// The function after each layer: a clamp to [a, b] (none, ReLU, Clip), SiLU,
// the logistic sigmoid, or the hard sigmoid min(max(a x + b, 0), 1).
struct SeAct {
  enum Kind { Clamp, Swish, Sigmoid, HardSigmoid } kind = Clamp;
  float a = -std::numeric_limits<float>::infinity(), b = std::numeric_limits<float>::infinity();
};

// out[v] = act(bias[v] + sum over k < depth of in[k] x w[k][v]), v a vector
// of the output (its lanes), w row-major with rows ld floats apart.
struct SeLayer {
  const float* w = nullptr;
  int depth = 0, ld = 0;
  const float* bias = nullptr;
  SeAct act;
};

// The kernels per ISA (block 8: AVX2 + FMA, block 16: AVX-512;
// simd_block_runs): the mean of each lane over `pixels` vectors (one
// channel block of a map); a layer's output vectors [v0, v1) summed over
// k in [k0, k1), with the bias and function if done (else the sums alone);
// the first `vectors` of a layer's output from `count` such sums, stride
// floats apart; and y = x * s for `pixels` vectors of one channel block.
void se_mean_avx2(const float* x, std::int64_t pixels, float* out);
void se_mean_avx512(const float* x, std::int64_t pixels, float* out);
void se_scale_avx2(const float* x, const float* s, std::int64_t pixels, float* y);
void se_scale_avx512(const float* x, const float* s, std::int64_t pixels, float* y);
void se_layer_avx2(const SeLayer& f, const float* in, int k0, int k1, int v0, int v1, bool done, float* out);
void se_layer_avx512(const SeLayer& f, const float* in, int k0, int k1, int v0, int v1, bool done, float* out);
void se_finish_avx2(const SeLayer& f, const float* parts, int count, std::size_t stride, int vectors, float* out);
void se_finish_avx512(const SeLayer& f, const float* parts, int count, std::size_t stride, int vectors, float* out);

class SqueezeExcite {
 public:
  // Whether a kernel for the block runs here.
  static bool supports(int block);

  // c channels, r in the middle. w1: r x c (ONNX's [r, c, 1, 1]), w2: c x r;
  // biases r and c values, or null.
  SqueezeExcite(int c, int r, int block, const float* w1, const float* b1, SeAct act1, const float* w2,
                const float* b2, SeAct act2);

  // x: `images` blocked maps of c channels and `pixels` pixels, x_image
  // floats apart; s: each image's c gates, rounded up to the block (zeros
  // there), s_image floats apart; or, with y, x * s written there (x's
  // layout, y_image floats apart) and s in scratch. scratch:
  // scratch_bytes(threads) long. Runs on at most `threads` OpenMP threads.
  std::size_t scratch_bytes(int threads) const {
    return sizeof(float) * (2 * cpad_ + static_cast<std::size_t>(2 * rpad_) * std::max(1, threads));
  }
  void run(const float* x, std::int64_t pixels, int images, std::size_t x_image, float* s, std::size_t s_image,
           void* scratch, int threads, float* y = nullptr, std::size_t y_image = 0) const;

  // The packed weights and biases (for prefetching).
  ByteSpan packed_weights() const { return {w_.get(), w_bytes_}; }

 private:
  int c_, r_, block_, cpad_, rpad_;
  Block w_;  // w1 as [c][rpad], b1 (rpad), w2 as [r][cpad], b2 (cpad); zeros on the padding
  std::size_t w_bytes_ = 0;
  SeLayer l1_, l2_;
};

}  // namespace vinfer::cpu
