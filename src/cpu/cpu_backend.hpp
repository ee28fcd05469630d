// Internal: the oneDNN CPU backend's entry point.
#pragma once
#include <functional>
#include <memory>

#include "backend/executor.hpp"

namespace vinfer::cpu {

// Compiles an optimized graph (one float input, one output) with the
// options' winograd, tune, tune_cache and precision on `threads` threads.
// Fills the arena/kernel figures of `info`.
// done_with (optional) is called with each large weight (a Conv's, Gemm's or
// MatMul's constant input) as soon as the kernels that read it are built,
// so that the caller may free the graph's copy while the rest is compiled.
std::unique_ptr<detail::Executor> compile(const Graph& g, const EngineOptions& options, int threads, ModelInfo& info,
                                          const std::function<void(int value)>& done_with = {});

}  // namespace vinfer::cpu
