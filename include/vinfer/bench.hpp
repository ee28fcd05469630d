// vinfer/bench.hpp: the seeds' scenario, timed stage by stage.
//
// One image at a time (SingleStream, as MLPerf defines it): for each iteration
// read the file -> decode -> resize -> normalize -> infer -> top-k. Every
// stage is timed inside the loop; an iteration's total is its wall time.
//
//   vinfer::Model model = vinfer::load_model("densenet121", "", {});
//   vinfer::Preprocessor pre(vinfer::preset("torchvision"));
//   vinfer::ScenarioResult r = vinfer::run_scenario(model, pre, {"photo.jpg"}, {});
#pragma once
#include <array>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "vinfer/engine.hpp"
#include "vinfer/preprocess.hpp"

namespace vinfer {

constexpr int kStages = 6;
// "read", "decode", "resize", "normalize", "infer", "topk"
const std::array<const char*, kStages>& stage_names();

struct IterationTimes {
  std::array<double, kStages> stage_ms{};
  double total_ms = 0;  // wall time of the iteration (pipeline: from this image's read to its top-k)
  int image = 0;        // index into the image list
  // Parts of the infer stage the backend timed on the device (CUDA: upload,
  // compute, download, by CUDA events); empty on the CPU.
  std::vector<std::pair<std::string, double>> device_ms;
};

struct ScenarioOptions {
  int loops = 100;          // timed iterations (at least this many)
  double min_time_s = 0;    // > 0: keep going until this much time has passed
  int warmup = 10;          // untimed iterations first
  bool pipeline = false;    // decode the next image while the current one is inferred
  // Resize + normalize inside Model::run_image (on the GPU with the CUDA
  // backend), timed as part of infer; the resize and normalize stages are 0.
  bool device_preprocess = false;
  int topk = 5;
  std::function<void(int done, int planned)> progress;  // called after each timed iteration
};

struct ScenarioResult {
  std::vector<IterationTimes> iterations;
  double wall_s = 0;          // timed part, start to end
  double throughput_fps = 0;  // iterations / wall_s
  std::vector<int> last_topk; // the last iteration's classes (so the work cannot be skipped)
};

// Images are visited round robin. Throws Error for a file that cannot be read
// (the benchmark does not skip bad input; classify does).
ScenarioResult run_scenario(Model& model, Preprocessor& pre, const std::vector<std::string>& images, const ScenarioOptions& opt);

}  // namespace vinfer
