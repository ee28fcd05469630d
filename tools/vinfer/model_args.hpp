// The options every model command shares (which network, where it runs,
// limits) and how they load it.
#pragma once
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "vinfer/engine.hpp"
#include "vinfer/error.hpp"
#include "vinfer/preprocess.hpp"
#include "vinfer/zoo.hpp"

namespace vinfer::cli {

struct ModelArgs {
  std::string model, weights;
  int threads = 0, batch = 1, micro_batch = 0;
  bool noted = false;  // the random-weights note, once per process
  bool no_winograd = false, no_tune = false, allow_tf32 = false, fixed_threads = false;
  std::string device = "cpu", precision = "f32", calibration;
  bool record_ranges = false;  // calibrate: watch the convolutions' inputs (and keep the weights)
  bool compact_weights = false;  // EngineOptions::compact_weights; classify and info set it before add_to
  std::string tune_cache = default_tune_cache();
  std::int64_t max_nodes = GraphLimits{}.max_nodes, max_model_mb = GraphLimits{}.max_total_bytes >> 20;
  std::int64_t max_pixels = DecodeOptions{}.max_pixels;
  ZooInfo zoo;
  void add_to(CLI::App& app) {
    app.add_option("model", model, "ONNX file or built-in name (" + [] {
      std::string s;
      for (const auto& n : zoo_models()) s += (s.empty() ? "" : ", ") + n;
      return s;
    }() + ")")->required();
    app.add_option("--weights", weights, "Weights for a built-in model: torchvision .pth (torch.save) or .safetensors");
    app.add_option("--threads", threads, "Threads (default: the CPUs this process may use: its affinity mask and cgroup CPU quota)")->check(CLI::Range(0, 1024));
    app.add_flag("--fixed-threads", fixed_threads,
                 "CPU: every run on all the threads (default: a run takes one thread instead while the team's runs "
                 "have slowed down and one thread is measured faster, as when other processes hold the CPUs)");
    app.add_option("--batch", batch, "Images per forward pass (the network's batch dimension must be dynamic; default 1)")
        ->check(CLI::Range(1, 4096));
    app.add_option("--micro-batch", micro_batch,
                   "CPU, with --batch: run each batch this many images at a time (0, the default: automatic, 4 for "
                   "networks whose activations per image outweigh their weights, e.g. DenseNet; `vinfer info` says)")
        ->check(CLI::Range(0, 4096));
    app.add_option("--device", device, "Where the network runs: cpu, cuda or cuda:N (see `vinfer devices`)");
    app.add_option("--precision", precision,
                   "CPU arithmetic: f32 (default); bf16 on CPUs with bfloat16 dot products (faster, logits within "
                   "~1e-2 of their range); int8 on CPUs with VNNI, with --calibration (`vinfer check` measures either "
                   "on your images)")
        ->check(CLI::IsMember({"f32", "bf16", "int8"}));
    app.add_option("--calibration", calibration,
                   "With --precision int8: the activation ranges, from `vinfer calibrate MODEL IMAGES... -o FILE`");
    app.add_flag("--allow-tf32", allow_tf32, "CUDA: let convolutions use TF32 tensor cores (faster, ~1e-3 relative error)");
    app.add_flag("--no-winograd", no_winograd, "Direct 3x3 convolutions only (to measure what Winograd brings)");
    app.add_flag("--no-tune", no_tune, "CPU: choose 3x3 and depthwise kernels by a fixed rule instead of timing them at load");
    app.add_flag("--compact-weights,!--whole-weights", compact_weights,
                 std::string("CPU: hold the Winograd weights of wide 3x3 layers on small maps half transformed "
                             "(VGG19: ~60 MiB less resident, those layers ~10 % slower at batch 1; this command: ") +
                     (compact_weights ? "compact" : "whole") + " by default)");
    app.add_option("--tune-cache", tune_cache,
                   "CPU: file that keeps the timed choices between runs (\"\" for none; default $VINFER_TUNE_CACHE, "
                   "else $XDG_CACHE_HOME/vinfer/tune.txt or ~/.cache/vinfer/tune.txt)");
    app.add_option("--max-nodes", max_nodes, "Refuse models with more nodes than this")->check(CLI::PositiveNumber);
    app.add_option("--max-model-mb", max_model_mb, "Refuse models whose weights exceed this many MiB")->check(CLI::PositiveNumber);
    app.add_option("--max-pixels", max_pixels, "Refuse images with more pixels than this (decompression bombs)")->check(CLI::PositiveNumber);
  }
  bool host_preprocess = false;  // classify, bench: keep resize + normalize on the CPU with --device cuda
  void limit(DecodeOptions& d) const { d.max_pixels = max_pixels; }
  void limit(Preprocessor& pre) const { limit(pre.decode_options()); }
  // With a CUDA device the preset's resize + normalize run there (Model::run_image).
  bool device_preprocess() const { return device != "cpu" && !host_preprocess; }
  void add_host_preprocess(CLI::App& app) {
    app.add_flag("--host-preprocess", host_preprocess,
                 "With --device cuda: resize and normalize on the CPU, then upload the tensor (default: upload the "
                 "decoded image and resize + normalize on the GPU in one kernel)");
  }
  Model load() {
    EngineOptions opt;
    opt.threads = threads;
    opt.adapt_threads = !fixed_threads;
    opt.batch = batch;
    opt.micro_batch = micro_batch;
    opt.winograd = !no_winograd;
    opt.tune = !no_tune;
    opt.tune_cache = tune_cache;
    opt.allow_tf32 = allow_tf32;
    opt.precision = parse_precision(precision);
    opt.keep_constants = record_ranges;  // the commands never recompile: the packed copies are enough
    opt.record_ranges = record_ranges;
    opt.compact_weights = compact_weights;
    if (opt.precision == Precision::INT8) {
      if (calibration.empty())
        throw Error(ErrorKind::InvalidArgument,
                    "--precision int8 needs --calibration FILE (make one: vinfer calibrate MODEL IMAGES... -o FILE)");
      opt.calibration = std::make_shared<const Calibration>(Calibration::load(calibration));
    }
    if (device == "cuda" || device.rfind("cuda:", 0) == 0) {
      opt.backend = Backend::Cuda;
      if (device.size() > 5) {
        const char* first = device.data() + 5;
        const char* last = device.data() + device.size();
        const auto [end, ec] = std::from_chars(first, last, opt.device);
        if (ec != std::errc() || end != last || opt.device < 0)
          throw Error(ErrorKind::InvalidArgument, "--device " + device + ": expected cuda:N");
      }
    } else if (device != "cpu") {
      throw Error(ErrorKind::InvalidArgument, "--device " + device + ": expected cpu, cuda or cuda:N");
    }
    opt.limits.max_nodes = max_nodes;
    opt.limits.max_total_bytes = max_model_mb << 20;
    opt.max_file_bytes = std::max<std::int64_t>(opt.max_file_bytes, (max_model_mb << 20) + (64 << 20));
    if (!weights.empty() && !is_zoo_model(model))
      throw Error(ErrorKind::InvalidArgument, "--weights applies to built-in networks only (" + model +
                                                  " is not one of them; an ONNX file carries its own)");
    Model m = load_model(model, weights, opt, &zoo);
    if (zoo.random_weights && !noted && (noted = true))
      std::fprintf(stderr, "vinfer: note: %s has seeded random weights (no --weights): labels are meaningless, timings are real\n",
                   model.c_str());
    return m;
  }
};

}  // namespace vinfer::cli
