// Internal: what a backend gives the runtime: a compiled graph that runs one input.
#pragma once
#include <memory>
#include <string>
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
};

}  // namespace vinfer::detail
