// Internal: the oneDNN CPU backend's entry point.
#pragma once
#include <memory>

#include "runtime/executor.hpp"

namespace vinfer::cpu {

// Compiles an optimized graph (one float input, one output). Fills the
// arena/kernel figures of `info`.
std::unique_ptr<detail::Executor> compile(const Graph& g, int threads, bool winograd, bool tune, ModelInfo& info);

}  // namespace vinfer::cpu
