// Internal: a per-channel normalization (x * scale + shift, then max with lo:
// a ReLU when lo = 0) averaged over k_h x k_w windows that tile the map, on a
// channel-blocked tensor (nChw8c / nChw16c): DenseNet's transitions once the
// pool runs before their 1x1 convolution (graph pass pool_before_conv1x1).
// One read of the full-size input, no normalized copy written and read back.
#pragma once
#include <cstddef>

namespace vinfer::cpu {

struct NormPoolRow {
  const float* x;       // the window band's first input row, one channel block
  std::ptrdiff_t w;     // input width (pixels)
  int kh, kw;           // window
  std::ptrdiff_t ow;    // output width
  const float* scale;   // the block's channels
  const float* shift;
  float lo, inv_area;   // 1 / (kh * kw)
  float* y;             // the output row
};

// One output row of one channel block: the plain version (any block size)
// and one per ISA (block 8: AVX2 + FMA, block 16: AVX-512; simd_block_runs).
void norm_pool_row_plain(const NormPoolRow& r, int block);
void norm_pool_row_avx2(const NormPoolRow& r);
void norm_pool_row_avx512(const NormPoolRow& r);

}  // namespace vinfer::cpu
