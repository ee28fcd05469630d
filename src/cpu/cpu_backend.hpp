// Internal: the oneDNN CPU backend's entry point.
#pragma once
#include <memory>

#include "runtime/executor.hpp"

namespace vinfer::cpu {

// Compiles an optimized graph (one float input, one output). Fills the
// arena/kernel figures of `info`.
// tune_cache: EngineOptions::tune_cache ("" for none; used only with tune).
std::unique_ptr<detail::Executor> compile(const Graph& g, int threads, bool winograd, bool tune,
                                          const std::string& tune_cache, ModelInfo& info);

}  // namespace vinfer::cpu
