// Internal: what a backend gives the runtime: a compiled graph that runs one input.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vinfer/engine.hpp"

namespace vinfer::detail {

using OpProfile = LayerProfile;

class Executor {
 public:
  virtual ~Executor() = default;
  virtual void run(const float* input, float* output) = 0;
  // Runs once, timing every kernel.
  virtual std::vector<OpProfile> profile(const float* input, float* output) = 0;
  virtual int kernels() const = 0;
  // Named parts of the last run() where the backend times them (the CUDA
  // backend: upload, compute, download by CUDA events); empty otherwise.
  virtual std::vector<std::pair<std::string, double>> stage_times() { return {}; }
};

}  // namespace vinfer::detail
