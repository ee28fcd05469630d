// Internal: the CUDA backend (built when CMake finds CUDA and cuDNN; see
// VINFER_CUDA). Never includes the CPU backend, nor it this one.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "backend/executor.hpp"
#include "vinfer/devices.hpp"
#include "vinfer/engine.hpp"

namespace vinfer::cuda {

// The runtime's versions and the devices it sees (none, with the reason, on a
// machine without a GPU or driver).
BackendInfo probe();

// cuBLAS's version, loading it (it is opened on first use, not linked);
// throws Unsupported naming the library when it cannot be loaded.
std::string cublas_version();

// Compiles the optimized graph for device `options.device`: weights uploaded
// once, cuDNN's algorithm chosen per convolution shape at load, the whole
// forward pass (upload, kernels, download) captured as one CUDA graph.
std::unique_ptr<detail::Executor> compile(const Graph& g, const EngineOptions& options, ModelInfo& info);

}  // namespace vinfer::cuda
