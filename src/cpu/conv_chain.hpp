// Internal: an inverted-residual block's three convolutions (MobileNetV2's,
// MNASNet's): a 1x1 expansion, a depthwise convolution and a 1x1 projection
// (with the block's residual), run as one pass down the map instead of three
// passes over it; so too ResNeXt's bottlenecks, whose middle convolution has
// groups of 2 to 8 channels (group_conv.hpp's). Run one after another, each layer writes a whole tensor
// (the expansion's 144 channels of 56x56 are 1.8 MB) that the next reads
// back after it has left the core's L2; in one pass each thread takes its
// own output rows and, a few rows at a time, expands the input rows they
// need, convolves them depthwise and projects the result, all still in its
// L2. Each thread computes the expanded rows it owns (every row once);
// the output rows whose window reaches into a neighbour's rows run after
// one barrier, at the end. (bench_conv --benchmark_filter=Chain, Zen 4, 2
// threads, MobileNetV2's and MNASNet's blocks on maps of 14x14 to 56x56:
// 0-11 % faster than the three kernels with the data in cache, up to 45 %
// with the caches flushed before each run; on 7x7 maps, where the rows a
// thread shares are half its rows, 3-15 % slower: supports() takes maps of
// at least 7 rows a thread. From 16 input channels or fewer vinfer's 1x1
// is slower than oneDNN's: MobileNetV2's 16 -> 96 on 112x112 0.25 ms
// against 0.20, and the chain stays apart.)
//
// The three kernels are vinfer's own (conv1x1.hpp, group_conv.hpp) and the
// chain computes exactly what they compute run one after another.
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

#include "cpu/conv1x1.hpp"
#include "cpu/group_conv.hpp"

namespace vinfer::cpu {

// Floats from one image to the next of each tensor (the residual: as y).
struct ConvChainStrides {
  std::size_t x = 0, e = 0, d = 0, y = 0;
};

class ConvChain {
 public:
  // Whether the three fit together: a 1x1 of stride 1 (from more than 16
  // channels) whose output the depthwise or narrow-group convolution reads,
  // whose output the 1x1 projection of stride 1 reads, in one channel
  // block; the output at least 7 rows a thread.
  static bool supports(const Conv1x1Geometry& expand, const GroupConvGeometry& dw, const Conv1x1Geometry& project,
                       int threads);

  ConvChain(std::unique_ptr<Conv1x1Pre> expand, std::unique_ptr<GroupConv> dw, std::unique_ptr<Conv1x1Pre> project);

  // x: the input; e, d: the expansion's and the depthwise convolution's
  // outputs, written whole (the layers' tensors); y: the output, plus
  // residual (shaped as y) if not null. scratch: 64-byte aligned,
  // scratch_bytes(threads) long. Runs on at most `threads` OpenMP threads,
  // which meanwhile prefetch `prefetch` (the next layers' weights) into L2.
  std::size_t scratch_bytes(int threads) const;
  void run(const float* x, float* e, float* d, float* y, const float* residual, void* scratch, int threads, int images,
           const ConvChainStrides& strides, const std::vector<ByteSpan>* prefetch = nullptr) const;

  const Conv1x1Pre& expand() const { return *expand_; }
  const GroupConv& depthwise() const { return *dw_; }  // (or narrow-group)
  const Conv1x1Pre& project() const { return *project_; }

 private:
  std::size_t thread_bytes() const;
  std::unique_ptr<Conv1x1Pre> expand_;
  std::unique_ptr<GroupConv> dw_;
  std::unique_ptr<Conv1x1Pre> project_;
};

}  // namespace vinfer::cpu
