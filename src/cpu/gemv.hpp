// Internal: a fully connected layer for one input row (batch 1) that skips the
// input's zeros. y = W x reads every weight once per image; VGG19's classifier
// is 494 MB of them, read at the memory's speed (a fifth of its pass on two
// cores). Its inputs come out of ReLUs: where x[k] is 0, row k of W^T adds
// nothing and is not read. With the weights stored transposed ([K][N], each
// input's row contiguous), skipping is whole rows, so the bytes read fall with
// the zeros (41 % of fc6's inputs with this repository's random weights; EIE,
// Han et al. 2016, counts 82 % for pretrained VGG16's fc6).
//
// Exact: a skipped product is 0 * w = +-0, which changes no sum, as long as
// every weight is finite (0 * inf is NaN); the op checks that at load.
#pragma once
#include <cstdint>

namespace vinfer::cpu {

// acc[0:n) += sum over i < count of xs[i] * w[ks[i] * ld + 0:n).
struct GemvRows {
  const float* w;           // [K][ld], ld >= n (the _bf16 kernels: w16 instead)
  std::int64_t ld, n;       // n: a multiple of the ISA's vector (16 floats covers both)
  const std::int32_t* ks;   // the rows to add
  const float* xs;          // their factors
  std::int64_t count;
  float* acc;               // n floats
  const std::uint16_t* w16 = nullptr;  // the _bf16 kernels' weights: bfloat16, widened exactly, float32 sums
};

// The plain version (any n) and one per ISA (n a multiple of 8: AVX2 + FMA;
// of 16: AVX-512). Four rows per pass over acc, so that acc is loaded and
// stored once per four weight vectors.
void gemv_rows_plain(const GemvRows& r);
void gemv_rows_avx2(const GemvRows& r);
void gemv_rows_avx512(const GemvRows& r);
// The same on bfloat16 weights (w16): half the bytes read for the layers
// that precision int8 leaves out (the classifier). Any CPU (the widening is a
// shift), no AVX512_BF16 needed.
void gemv_rows_bf16_plain(const GemvRows& r);
void gemv_rows_bf16_avx2(const GemvRows& r);
void gemv_rows_bf16_avx512(const GemvRows& r);

}  // namespace vinfer::cpu
