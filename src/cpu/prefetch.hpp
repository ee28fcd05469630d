// Internal: fetching the next layers' weights into L2 while a layer computes.
// Inside a network every layer's weights come from memory or L3 (DenseNet121
// reads 31 MiB of them per image); touching them before each layer made
// DenseNet121's layers ~15 % faster in sum. vinfer's own GEMM kernels
// therefore issue one prefetch per k iteration of their register tiles
// (gemm_micro.inc), for lines handed out by a PrefetchCursor: a thread's share
// of the weights of the layers up to the next one that prefetches for itself.
// They also fetch the layer's own next weight panel while the current one's
// register tiles run (own_share): on a small map (ResNet50's 7x7 layer4, 49
// pixels in 5 register tiles) the first tile of each panel otherwise waits on
// memory, as the panel is one stream faster than one core's share of the
// memory's speed.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "util/debug_env.hpp"

namespace vinfer::cpu {

struct ByteSpan {
  const void* data = nullptr;
  std::size_t bytes = 0;
};

// A line already in L1: where the prefetches of a call with nothing to fetch go.
inline const char* idle_prefetch_line() {
  alignas(64) static const char line[64] = {};
  return line;
}

// Whether vinfer's GEMMs fetch their own next weight panel as they go
// (PrefetchCursor::own_next): VINFER_PREFETCH_OWN=0 turns it off, read when a
// layer is built (for A/Bs).
inline bool prefetch_own_weights() {
  return !detail::debug_env_is(detail::DebugVar::PrefetchOwn, "0");
}

// Weights a thread reads more than once (per block of pixels, per chunk of
// tiles) stay in L2 after the first pass up to about this much (half of a
// 1 MiB L2): past it, every pass fetches its next panels.
constexpr std::size_t kOwnFetchBytes = std::size_t{512} << 10;

// Register tile i of `tiles` that run on one weight panel fetches the i-th
// share of the `bytes` at `next` (the next panel) over its k iterations.
inline void own_share(const void* next, std::size_t bytes, int k, int i, int tiles, const char*& at, int& step) {
  const std::size_t share = (bytes + tiles - 1) / tiles;
  at = static_cast<const char*>(next) + share * i;
  step = static_cast<int>(std::min<std::size_t>(64, (share + k - 1) / k));
}

// One thread's share of the lines of `spans`, handed out a run of consecutive
// lines per GEMM call. Not shared between threads.
class PrefetchCursor {
 public:
  // thread of threads: which share; calls: about how many GEMM calls the
  // thread makes (the lines are spread evenly over them).
  PrefetchCursor(const std::vector<ByteSpan>* spans, int thread, int threads, long calls)
      : spans_(spans), calls_(std::max(1L, calls)) {
    if (!spans_ || threads < 1) return;
    std::size_t total = 0;
    for (const ByteSpan& s : *spans_) total += lines(s);
    std::size_t begin = total * thread / threads;
    left_ = total * (thread + 1) / threads - begin;
    while (span_ < spans_->size() && begin >= lines((*spans_)[span_])) begin -= lines((*spans_)[span_++]);
    line_ = begin;
  }

  // Whether the GEMM also fetches its own next weight panel while it runs the
  // current one's register tiles (own_share).
  bool own_next = true;

  // For a GEMM call of k iterations: its first prefetch address p and the
  // bytes between its prefetches (at most a line: k iterations cover the run
  // without gaps).
  void next(int k, const char*& p, int& step) {
    p = idle_prefetch_line(), step = 0;
    if (!spans_ || left_ == 0 || k <= 0) return;
    while (span_ < spans_->size() && lines((*spans_)[span_]) == 0) ++span_;
    if (span_ >= spans_->size()) return;
    const ByteSpan& s = (*spans_)[span_];
    std::size_t run = (left_ + calls_ - 1) / static_cast<std::size_t>(calls_);
    run = std::min({run, static_cast<std::size_t>(k), lines(s) - line_, left_});
    if (calls_ > 1) --calls_;
    p = static_cast<const char*>(s.data) + line_ * 64;
    step = static_cast<int>((run * 64 + k - 1) / k);
    line_ += run, left_ -= run;
    if (line_ == lines(s)) ++span_, line_ = 0;
  }

 private:
  static std::size_t lines(const ByteSpan& s) { return (s.bytes + 63) / 64; }
  const std::vector<ByteSpan>* spans_ = nullptr;
  std::size_t span_ = 0, line_ = 0;  // the next line: span and line within it
  std::size_t left_ = 0;             // lines still to hand out
  long calls_ = 1;                   // calls still expected
};

}  // namespace vinfer::cpu
