// Model commands: `classify` (images -> top-k labels), `bench --forward-only`
// (forward-pass latency), `info` (what loading did) and `profile` (per-layer time).
#include <chrono>
#include <cstdio>
#include <random>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "vinfer/engine.hpp"
#include "vinfer/error.hpp"
#include "vinfer/io.hpp"
#include "vinfer/labels.hpp"
#include "vinfer/preprocess.hpp"
#include "vinfer/stats.hpp"
#include "vinfer/zoo.hpp"

namespace vinfer::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct ModelArgs {
  std::string model, weights;
  int threads = 0;
  ZooInfo zoo;
  void add_to(CLI::App& app) {
    app.add_option("model", model, "ONNX file or built-in name (" + [] {
      std::string s;
      for (const auto& n : zoo_models()) s += (s.empty() ? "" : ", ") + n;
      return s;
    }() + ")")->required();
    app.add_option("--weights", weights, "Weights for a built-in model: torchvision .pth (torch.save) or .safetensors");
    app.add_option("--threads", threads, "Threads (default: one per core)")->check(CLI::Range(0, 1024));
  }
  Model load() {
    EngineOptions opt;
    opt.threads = threads;
    Model m = load_model(model, weights, opt, &zoo);
    if (zoo.random_weights)
      std::fprintf(stderr, "vinfer: note: %s has seeded random weights (no --weights): labels are meaningless, timings are real\n",
                   model.c_str());
    return m;
  }
};

// The preset for a model: its input must be 1 x 3 x S x S.
Preset preset_for(const Model& m, const std::string& name) {
  const Shape& in = m.input_shape();
  if (in.size() != 4 || in[0] != 1) throw Error(ErrorKind::Unsupported, "model input " + shape_str(in) + " is not one image");
  const bool nchw = in[1] == 3;
  const std::int64_t size = nchw ? in[2] : in[1];
  if ((nchw && in[3] != size) || (!nchw && (in[3] != 3 || in[2] != size)))
    throw Error(ErrorKind::Unsupported, "model input " + shape_str(in) + " is not a square 3-channel image");
  Preset p = preset(name, static_cast<int>(size));
  if ((p.layout == Layout::NCHW) != nchw)
    throw Error(ErrorKind::InvalidArgument, "preset '" + name + "' produces " + (nchw ? "NHWC" : "NCHW") + " but the model takes " + shape_str(in));
  return p;
}

// A fixed input for forward-only timing (values like a normalized photo).
std::vector<float> fixed_input(std::size_t n) {
  std::mt19937 rng(1234);
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> x(n);
  for (float& v : x) v = d(rng);
  return x;
}

bool is_probability(const Model& m) {
  const Graph& g = m.graph();
  for (const Node& n : g.nodes)
    if (n.op == "Softmax" && !n.outputs.empty() && n.outputs[0] == g.outputs[0]) return true;
  return false;
}

struct ClassifyCmd {
  ModelArgs m;
  std::vector<std::string> images;
  std::string preset_name, logits_path;
  int topk = 5;
  bool json = false;

  int run() {
    Model model = m.load();
    if (preset_name.empty()) preset_name = m.zoo.preset;  // the model's own (torchvision for ONNX files)
    Preprocessor pre(preset_for(model, preset_name));
    const int n_out = static_cast<int>(model.output_size());
    const bool probs = is_probability(model);
    std::vector<float> input(model.input_size()), logits(static_cast<std::size_t>(n_out)), all_logits;
    int failed = 0;
    for (const std::string& path : images) {
      try {
        pre.run_file(path, input.data());
      } catch (const Error& e) {
        // One bad file does not stop the batch: report it and go on.
        ++failed;
        std::fprintf(stderr, "vinfer: error: %s\n", e.what());
        if (json) std::printf("%s\n", nlohmann::json{{"image", path}, {"error", e.what()}}.dump().c_str());
        all_logits.insert(all_logits.end(), static_cast<std::size_t>(n_out), std::nanf(""));
        continue;
      }
      model.run(input.data(), logits.data());
      all_logits.insert(all_logits.end(), logits.begin(), logits.end());
      const std::vector<float> p = probs ? logits : softmax(logits.data(), n_out);
      const std::vector<int> top = topk_indices(p.data(), n_out, topk);
      if (json) {
        nlohmann::json j{{"image", path}, {"model", m.model}, {"preset", preset_name}};
        for (int i : top) j["topk"].push_back({{"index", i}, {"label", imagenet_label(i)}, {"prob", p[static_cast<std::size_t>(i)]}});
        std::printf("%s\n", j.dump().c_str());
      } else {
        std::printf("%s\n", path.c_str());
        for (int i : top) std::printf("  %6.2f%%  %4d  %s\n", 100.0 * p[static_cast<std::size_t>(i)], i, imagenet_label(i).c_str());
      }
    }
    if (!logits_path.empty())
      write_npy(logits_path, all_logits.data(), {images.size(), static_cast<std::size_t>(n_out)});
    return failed ? kExitBadInput : kExitOk;
  }
};

struct BenchCmd {
  ModelArgs m;
  bool forward_only = false;
  int loops = 100, warmup = 10;
  std::string json_path;

  int run() {
    if (!forward_only)
      throw Error(ErrorKind::Unsupported, "`vinfer bench` times the forward pass only for now: pass --forward-only "
                                          "(`vinfer bench-preprocess` times file -> tensor)");
    if (loops < 1) throw Error(ErrorKind::InvalidArgument, "--loops must be >= 1");
    const auto t0 = Clock::now();
    Model model = m.load();
    const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    std::vector<float> x = fixed_input(model.input_size()), y(model.output_size());
    for (int i = 0; i < warmup; ++i) model.run(x.data(), y.data());
    std::vector<double> ms;
    ms.reserve(static_cast<std::size_t>(loops));
    for (int i = 0; i < loops; ++i) {
      const auto a = Clock::now();
      model.run(x.data(), y.data());
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
    }
    const LatencySummary s = summarize(ms);
    std::printf("%s: forward pass, batch 1, %d threads, %d loops after %d warm-up\n", m.model.c_str(), model.threads(), loops, warmup);
    std::printf("  p50 %.3f ms   p90 %.3f ms   min %.3f ms   mean %.3f ms   (load %.0f ms)\n", s.p50, s.p90, s.min, s.mean, load_ms);
    if (!json_path.empty()) {
      const MachineInfo mi = machine_info();
      nlohmann::json j{{"model", m.model},
                       {"mode", "forward-only"},
                       {"threads", model.threads()},
                       {"loops", loops},
                       {"warmup", warmup},
                       {"load_ms", load_ms},
                       {"latency_ms", {{"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"min", s.min}, {"max", s.max}, {"mean", s.mean}}},
                       {"per_iter_ms", ms},
                       {"machine", {{"cpu", mi.cpu}, {"logical_cores", mi.logical_cores}, {"os", mi.os}}},
                       {"vinfer", version()}};
      write_text(json_path, j.dump(2) + "\n");
    }
    return kExitOk;
  }
};

struct InfoCmd {
  ModelArgs m;
  bool profile = false;
  int runs = 5;

  int run() {
    Model model = m.load();
    const ModelInfo& i = model.info();
    std::printf("%s\n  input %s  output %s\n", i.source.c_str(), shape_str(model.input_shape()).c_str(), shape_str(model.output_shape()).c_str());
    std::printf("  nodes imported %d, kernels run %d, concatenations in place %d\n", i.nodes_imported, i.nodes_executed, i.concats_in_place);
    std::printf("  arena %.2f MiB (%.2f MiB without reuse), weights %.2f MiB\n", i.arena_bytes / 1048576.0, i.naive_bytes / 1048576.0,
                i.weight_bytes / 1048576.0);
    for (const std::string& p : i.passes) std::printf("  pass %s\n", p.c_str());
    if (!profile) return kExitOk;
    std::vector<float> x = fixed_input(model.input_size()), y(model.output_size());
    model.run(x.data(), y.data());
    std::vector<LayerProfile> best;
    for (int r = 0; r < runs; ++r) {  // per layer, the fastest of `runs`
      std::vector<LayerProfile> p = model.profile(x.data(), y.data());
      if (best.empty()) best = p;
      for (std::size_t k = 0; k < p.size(); ++k) best[k].ms = std::min(best[k].ms, p[k].ms);
    }
    double total = 0, flops = 0;
    for (const LayerProfile& l : best) total += l.ms, flops += l.flops;
    std::printf("\n%8s %6s %8s  %-44s %s\n", "ms", "share", "GFLOP/s", "layer", "implementation");
    for (const LayerProfile& l : best)
      std::printf("%8.3f %5.1f%% %8.1f  %-44.44s %s\n", l.ms, 100 * l.ms / total, l.flops > 0 ? l.flops / (l.ms * 1e6) : 0.0,
                  l.name.c_str(), l.impl.c_str());
    std::printf("%8.3f total, %.2f GFLOP, %.1f GFLOP/s overall (%d threads)\n", total, flops / 1e9, flops / (total * 1e6), model.threads());
    return kExitOk;
  }
};

}  // namespace

void add_classify(CLI::App& app, Handler& run) {
  auto c = std::make_shared<ClassifyCmd>();
  c->m.add_to(app);
  app.add_option("images", c->images, "Image files (JPEG, PNG)")->required();
  app.add_option("--preset", c->preset_name, "Preprocessing preset (default: the model's; torchvision for ONNX) (" + [] {
    std::string s;
    for (const auto& n : preset_names()) s += (s.empty() ? "" : ", ") + n;
    return s;
  }() + ")");
  app.add_option("--topk", c->topk, "How many classes to print")->check(CLI::Range(1, 1000));
  app.add_flag("--json", c->json, "One JSON object per image per line");
  app.add_option("--save-logits", c->logits_path, "Write the logits (N x classes, float32) to a .npy file");
  run = [c] { return c->run(); };
}

void add_bench(CLI::App& app, Handler& run) {
  auto c = std::make_shared<BenchCmd>();
  c->m.add_to(app);
  app.add_flag("--forward-only", c->forward_only, "Time the forward pass on a fixed input");
  app.add_option("--loops", c->loops, "Timed iterations");
  app.add_option("--warmup", c->warmup, "Untimed iterations first")->check(CLI::Range(0, 1000000));
  app.add_option("--json", c->json_path, "Write the figures as JSON");
  run = [c] { return c->run(); };
}

void add_info(CLI::App& app, Handler& run) {
  auto c = std::make_shared<InfoCmd>();
  c->m.add_to(app);
  app.add_flag("--profile", c->profile, "Also time every kernel (fastest of --runs)");
  app.add_option("--runs", c->runs, "Profile runs")->check(CLI::Range(1, 1000));
  run = [c] { return c->run(); };
}

}  // namespace vinfer::cli
