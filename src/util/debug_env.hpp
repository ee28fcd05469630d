// Internal: every environment variable the library reads, in one place.
//
// They are debugging and measurement aids (forcing a kernel to compare it
// with another, logging the load-time timing), not options: what a user sets
// goes through EngineOptions and DecodeOptions. `vinfer info` lists those in
// effect, so that no figure is taken with one set unknowingly.
// docs/architecture.md describes each.
#pragma once
#include <string>
#include <vector>

namespace vinfer::detail {

enum class DebugVar {
  Isa,                // VINFER_ISA=plain|avx2|avx512: cap the instruction set (util/cpu_features.hpp)
  HugePages,          // VINFER_HUGE_PAGES=0: no transparent huge pages for weights
  Winograd,           // VINFER_WINOGRAD=vinfer|onednn|f23: 3x3 kernel by that rule, no timing
  WinogradF23,        // VINFER_WINOGRAD_F23=0: F(2x2,3x3) not among the timed candidates
  WinogradSplit,      // VINFER_WINOGRAD_SPLIT=tiles|positions: how Winograd splits work, no timing
  WinogradStride2,    // VINFER_WINOGRAD_STRIDE2=0: no Winograd for stride-2 3x3s
  Conv1x1,            // VINFER_CONV1X1=vinfer|preact|onednn|noscale: which 1x1 kernel may run
  Fc,                 // VINFER_FC=onednn: fully connected layers on oneDNN only
  PrefetchWeights,    // VINFER_PREFETCH_WEIGHTS=0: no fetching of the next layer's weights
  PrefetchOwn,        // VINFER_PREFETCH_OWN=0: GEMMs do not fetch their own next panel
  ProfileHotWeights,  // VINFER_PROFILE_HOT_WEIGHTS=1: profile with each op's weights in cache
  TuneLog,            // VINFER_TUNE_LOG=1: one stderr line per timed 3x3 shape
  CudaGraph,          // VINFER_CUDA_GRAPH=0: CUDA ops enqueued one by one, no graph replay
  Bf16,               // VINFER_BF16=0: run as on a CPU without bfloat16 dot products (util/cpu_features.hpp)
  Amx,                // VINFER_AMX=0: oneDNN held below AMX, as on a CPU without it (src/cpu/program.cpp)
  Png,                // VINFER_PNG=spng: every PNG through libspng alone (src/image/decode_png.cpp)
  GroupConv,          // VINFER_GROUP_CONV=onednn|vinfer: narrow-group convolutions on oneDNN (channels-last), or depthwise ones on vinfer's kernel untimed
  WinogradInt8,       // VINFER_WINOGRAD_INT8=0: int8 3x3s on oneDNN's direct kernels, not vinfer's Winograd
  SqueezeExcite,      // VINFER_SQUEEZE_EXCITE=0: squeeze-and-excite's pool and two 1x1s as three ops
  Gelu,               // VINFER_GELU=onednn: GELU after a matrix product as oneDNN's post-op, not vinfer's pass
  ConvChain,          // VINFER_CONV_CHAIN=0: an inverted residual's three convolutions as three ops, not one pass
  Team,               // VINFER_TEAM=one|all: every CPU run on one thread / on all of them, not chosen by the times runs take
};

// The variable's value, or nullptr when unset. Read at each call (cheap, and
// only at load time), so tests may set and unset them.
const char* debug_env(DebugVar v);
// Whether it is set to exactly `value`.
bool debug_env_is(DebugVar v, const char* value);
// "NAME=value" for each one set, for `vinfer info`.
std::vector<std::string> debug_env_in_effect();

}  // namespace vinfer::detail
