// Internal: what a backend gives the runtime: a compiled graph that runs one input.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vinfer/engine.hpp"
#include "vinfer/error.hpp"
#include "vinfer/preprocess.hpp"

namespace vinfer::detail {

using OpProfile = LayerProfile;

class Executor {
 public:
  virtual ~Executor() = default;
  virtual void run(const float* input, float* output) = 0;
  // The graph's outputs, in order, each into its buffer (the CPU backend;
  // elsewhere one output only).
  virtual void run_outputs(const float* input, const std::vector<float*>& outputs) {
    if (outputs.size() != 1) throw Error(ErrorKind::Unsupported, "this backend runs networks with one output");
    run(input, outputs[0]);
  }
  // Runs once, timing every kernel.
  virtual std::vector<OpProfile> profile(const float* input, float* output) = 0;
  virtual int kernels() const = 0;
  // With EngineOptions::record_ranges: each observed value's range over the
  // runs so far, and how many runs that was.
  virtual std::vector<std::pair<int, ActivationRange>> ranges() const { return {}; }
  virtual std::int64_t runs() const { return 0; }
  // Runs on the whole team and on one thread (EngineOptions::adapt_threads).
  virtual std::array<std::int64_t, 2> team_runs() const { return {0, 0}; }
  // Named parts of the last run() where the backend times them (the CUDA
  // backend: upload, compute, download by CUDA events); empty otherwise.
  virtual std::vector<std::pair<std::string, double>> stage_times() { return {}; }
  // The preset's preprocessing on the backend's device, then the network;
  // false where the backend does not do it (the caller preprocesses on the
  // CPU and calls run()).
  virtual bool run_image(const ImageView<std::uint8_t>& /*rgb*/, const Preset& /*preset*/, float* /*output*/) {
    return false;
  }
};

}  // namespace vinfer::detail
