// Model commands: `bench` (file -> top-k stage by stage, or `--forward-only`
// forward-pass latency), `info` (what loading did) and `profile` (per-layer time).
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "model_args.hpp"
#include "vinfer/bench.hpp"
#include "vinfer/devices.hpp"
#include "vinfer/engine.hpp"
#include "vinfer/error.hpp"
#include "vinfer/io.hpp"
#include "vinfer/labels.hpp"
#include "vinfer/postprocess.hpp"
#include "vinfer/preprocess.hpp"
#include "vinfer/stats.hpp"
#include "vinfer/version.hpp"
#include "vinfer/zoo.hpp"

namespace vinfer::cli {
namespace {

using Clock = std::chrono::steady_clock;

// A fixed input for forward-only timing (values like a normalized photo).
std::vector<float> fixed_input(std::size_t n) {
  std::mt19937 rng(1234);
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> x(n);
  for (float& v : x) v = d(rng);
  return x;
}

// The input of forward-only timings: `path`'s .npy, or fixed_input. A given
// input (the peers' *.input.npy) makes timings that depend on the data
// (zeros skipped by fully connected layers) comparable exactly.
std::vector<float> forward_input(const Model& model, const std::string& path) {
  if (path.empty()) return fixed_input(model.input_size());
  std::vector<float> x;
  read_npy(path, x);
  if (x.size() != model.input_size())
    throw Error(ErrorKind::InvalidArgument, path + ": " + std::to_string(x.size()) + " values, the model takes " + std::to_string(model.input_size()));
  return x;
}


struct BenchCmd {
  ModelArgs m;
  std::vector<std::string> images;
  std::string preset_name, json_path, csv_path, plot_path, input_path;
  bool forward_only = false, pipeline = false;
  int loops = 100, warmup = 10;
  double min_time = 0;

  nlohmann::json machine_json(const Model& model) const {
    const MachineInfo mi = machine_info();
    return {{"cpu", mi.cpu}, {"cpu_id", mi.cpu_id}, {"logical_cores", mi.logical_cores}, {"simd", mi.simd}, {"os", mi.os}, {"threads", model.threads()}};
  }

  static nlohmann::json summary_json(const LatencySummary& s) {
    return {{"mean", s.mean}, {"p50", s.p50}, {"p90", s.p90}, {"p99", s.p99}, {"min", s.min}, {"max", s.max}};
  }

  int run_forward_only() {
    const auto t0 = Clock::now();
    Model model = m.load();
    const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    std::vector<float> x = forward_input(model, input_path), y(model.output_size());
    for (int i = 0; i < warmup; ++i) model.run(x.data(), y.data());
    std::vector<double> ms;
    std::map<std::string, std::vector<double>> stages;  // where the backend times parts of a run (CUDA)
    std::vector<std::string> stage_order;
    ms.reserve(static_cast<std::size_t>(loops));
    const auto start = Clock::now();
    for (int i = 0; i < loops || (min_time > 0 && std::chrono::duration<double>(Clock::now() - start).count() < min_time); ++i) {
      const auto a = Clock::now();
      model.run(x.data(), y.data());
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
      for (const auto& [name, t] : model.last_run_stages()) {
        if (!stages.count(name)) stage_order.push_back(name);
        stages[name].push_back(t);
      }
    }
    const LatencySummary s = summarize(ms);
    const std::int64_t batch = model.batch();
    std::printf("%s: forward pass, batch %lld, %s, %s, %zu loops after %d warm-up\n", m.model.c_str(), static_cast<long long>(batch),
                m.device == "cpu" ? (std::to_string(model.threads()) + " threads").c_str() : m.device.c_str(), m.precision.c_str(),
                ms.size(), warmup);
    std::printf("  p50 %.3f ms   p90 %.3f ms   min %.3f ms   mean %.3f ms   (load %.0f ms)\n", s.p50, s.p90, s.min, s.mean, load_ms);
    if (batch > 1)
      std::printf("  per image: p50 %.3f ms, %.1f images/s\n", s.p50 / static_cast<double>(batch), 1000.0 * static_cast<double>(batch) / s.p50);
    const auto [team_runs, single_runs] = model.team_runs();
    if (single_runs > 0)
      std::printf("  %lld of %lld runs on one thread (the team's had slowed down: other work holds the CPUs; --fixed-threads: never)\n",
                  static_cast<long long>(single_runs), static_cast<long long>(team_runs + single_runs));
    nlohmann::json stage_json = nlohmann::json::object();
    for (const std::string& name : stage_order) {
      const LatencySummary st = summarize(stages[name]);
      std::printf("  %-9s p50 %.3f ms   p90 %.3f ms   (device events)\n", name.c_str(), st.p50, st.p90);
      stage_json[name] = summary_json(st);
    }
    if (!json_path.empty()) {
      nlohmann::json j{{"model", m.model},  {"mode", "forward-only"}, {"random_weights", m.zoo.random_weights},
                       {"threads", model.threads()}, {"runs_on_one_thread", single_runs},
                       {"precision", m.precision}, {"batch", batch}, {"precision", m.precision}, {"loops", ms.size()}, {"warmup", warmup},
                       {"load_ms", load_ms}, {"latency_ms", summary_json(s)}, {"per_iter_ms", ms},
                       {"device", m.device},  {"stages_ms", stage_json}, {"input", input_path.empty() ? "fixed N(0,1) noise" : input_path},
                       {"machine", machine_json(model)}, {"vinfer", version()}};
      write_text(json_path, j.dump(2) + "\n");
    }
    return kExitOk;
  }

  int run() {
    if (loops < 1) throw Error(ErrorKind::InvalidArgument, "--loops must be >= 1");
    if (!forward_only && !input_path.empty()) throw Error(ErrorKind::InvalidArgument, "--input is the network's input for --forward-only");
    if (forward_only) {
      if (!images.empty()) throw Error(ErrorKind::InvalidArgument, "--forward-only times a fixed input; drop the images");
      return run_forward_only();
    }
    if (m.batch != 1)
      throw Error(ErrorKind::InvalidArgument,
                  "--batch applies to --forward-only here (the file -> top-k loop times one image at a time; "
                  "`vinfer classify --batch` measures throughput)");
    if (images.empty()) images.push_back(VINFER_SAMPLE_IMAGE);
    Model model = m.load();
    if (preset_name.empty()) preset_name = m.zoo.preset;
    Preprocessor pre(model_preset(model, preset_name));
    m.limit(pre);
    ScenarioOptions opt;
    opt.loops = loops;
    opt.warmup = warmup;
    opt.min_time_s = min_time;
    opt.pipeline = pipeline;
    opt.device_preprocess = m.device_preprocess();
    // A progress bar on a terminal, for runs long enough to want one.
    const bool tty = ::isatty(STDERR_FILENO) != 0;
    const auto started = Clock::now();
    bool drawn = false;
    if (tty)
      opt.progress = [&](int done, int planned) {
        const double el = std::chrono::duration<double>(Clock::now() - started).count();
        if (el < 2.0 && !drawn) return;
        drawn = true;
        const int total = std::max(done, planned), w = 30, fill = static_cast<int>(w * static_cast<double>(done) / total);
        std::fprintf(stderr, "\r[%s%s] %d/%d", std::string(static_cast<std::size_t>(fill), '#').c_str(),
                     std::string(static_cast<std::size_t>(w - fill), ' ').c_str(), done, total);
      };
    const ScenarioResult r = run_scenario(model, pre, images, opt);
    if (drawn) std::fprintf(stderr, "\r%*s\r", 50, "");

    std::vector<double> total;
    std::array<std::vector<double>, kStages> per;
    for (const IterationTimes& it : r.iterations) {
      total.push_back(it.total_ms);
      for (int k = 0; k < kStages; ++k) per[static_cast<std::size_t>(k)].push_back(it.stage_ms[static_cast<std::size_t>(k)]);
    }
    const LatencySummary ts = summarize(total);
    std::array<LatencySummary, kStages> ss;
    double stage_mean_sum = 0;
    for (int k = 0; k < kStages; ++k) {
      ss[static_cast<std::size_t>(k)] = summarize(per[static_cast<std::size_t>(k)]);
      stage_mean_sum += ss[static_cast<std::size_t>(k)].mean;
    }
    const double fps = pipeline ? r.throughput_fps : 1000.0 / ts.mean;
    // (The precision is named where it is not the default f32.)
    std::printf("%s%s, preset %s, %d threads%s, %zu iterations after %d warm-up, %s, %zu image(s)%s\n", m.model.c_str(),
                m.zoo.random_weights ? " (seeded random weights)" : "", preset_name.c_str(), model.threads(),
                m.precision == "f32" ? "" : (", " + m.precision).c_str(), r.iterations.size(), warmup,
                pipeline ? "pipelined (decode overlaps inference)" : "one image at a time", images.size(),
                opt.device_preprocess ? ", resize + normalize on the device (inside infer)" : "");
    std::printf("\n| FPS | Latency (ms) |\n|---:|---:|\n| %.1f | %.2f |\n\n", fps, ts.p50);
    std::printf("| stage | mean | p50 | p90 | p99 | min | max |\n|---|---:|---:|---:|---:|---:|---:|\n");
    for (int k = 0; k < kStages; ++k) {
      const LatencySummary& s = ss[static_cast<std::size_t>(k)];
      std::printf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", stage_names()[static_cast<std::size_t>(k)], s.mean, s.p50, s.p90, s.p99,
                  s.min, s.max);
    }
    std::printf("| **total** | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n", ts.mean, ts.p50, ts.p90, ts.p99, ts.min, ts.max);
    // The device's own clock inside the infer stage (CUDA events), where the backend has one.
    nlohmann::json device_json = nlohmann::json::object();
    if (!r.iterations.empty() && !r.iterations.front().device_ms.empty()) {
      std::printf("\n| infer, on the device | mean | p50 | p90 |\n|---|---:|---:|---:|\n");
      for (std::size_t k = 0; k < r.iterations.front().device_ms.size(); ++k) {
        std::vector<double> v;
        for (const IterationTimes& it : r.iterations)
          if (k < it.device_ms.size()) v.push_back(it.device_ms[k].second);
        const LatencySummary d = summarize(v);
        std::printf("| %s | %.3f | %.3f | %.3f |\n", r.iterations.front().device_ms[k].first.c_str(), d.mean, d.p50, d.p90);
        device_json[r.iterations.front().device_ms[k].first] = summary_json(d);
      }
    }
    if (pipeline)
      std::printf("\nthroughput %.1f images/s; latency counts from an image's read to its top-k, including waiting for the engine\n",
                  r.throughput_fps);
    else
      std::printf("\nstage means add up to %.1f%% of the mean total\n", 100.0 * stage_mean_sum / ts.mean);

    if (!json_path.empty()) {
      nlohmann::json j{{"model", m.model},
                       {"random_weights", m.zoo.random_weights},
                       {"preset", preset_name},
                       {"images", images},
                       {"mode", pipeline ? "pipeline" : "single-stream"},
                       {"loops", r.iterations.size()},
                       {"warmup", warmup},
                       {"fps", fps},
                       {"throughput_fps", r.throughput_fps},
                       {"latency_ms", summary_json(ts)},
                       {"machine", machine_json(model)},
                       {"threads", model.threads()},
                       {"device", m.device},
                       {"device_preprocess", opt.device_preprocess},
                       {"infer_on_device_ms", device_json},
                       {"vinfer", version()}};
      for (int k = 0; k < kStages; ++k) j["stages"][stage_names()[static_cast<std::size_t>(k)]] = summary_json(ss[static_cast<std::size_t>(k)]);
      j["per_iter_ms"] = total;
      write_text(json_path, j.dump(2) + "\n");
    }
    if (!csv_path.empty()) {
      std::string csv = "iteration,image";
      for (const char* n : stage_names()) csv += std::string(",") + n + "_ms";
      csv += ",total_ms\n";
      char buf[64];
      for (std::size_t i = 0; i < r.iterations.size(); ++i) {
        const IterationTimes& it = r.iterations[i];
        csv += std::to_string(i) + "," + images[static_cast<std::size_t>(it.image)];
        for (double v : it.stage_ms) {
          std::snprintf(buf, sizeof buf, ",%.4f", v);
          csv += buf;
        }
        std::snprintf(buf, sizeof buf, ",%.4f\n", it.total_ms);
        csv += buf;
      }
      write_text(csv_path, csv);
    }
    if (!plot_path.empty()) {
      std::vector<std::pair<std::string, double>> stages;
      for (int k = 0; k < kStages; ++k) stages.emplace_back(stage_names()[static_cast<std::size_t>(k)], ss[static_cast<std::size_t>(k)].p50);
      plot_benchmark(plot_path, m.model + ", " + preset_name + ", " + std::to_string(model.threads()) + " threads", total, stages);
    }
    return kExitOk;
  }
};

struct InfoCmd {
  ModelArgs m;
  bool profile = false, kernels = false;
  int runs = 5;
  std::string json_path, input_path;

  int run() {
    Model model = m.load();
    const ModelInfo& i = model.info();
    std::printf("%s\n  input %s  output %s\n", i.source.c_str(), shape_str(model.input_shape()).c_str(), shape_str(model.output_shape()).c_str());
    std::printf("  nodes imported %d, kernels run %d, concatenations in place %d\n", i.nodes_imported, i.nodes_executed, i.concats_in_place);
    std::printf("  arena %.2f MiB (%.2f MiB without reuse), weights %.2f MiB\n", i.arena_bytes / 1048576.0, i.naive_bytes / 1048576.0,
                i.weight_bytes / 1048576.0);
    std::string stages;
    double load_ms = 0;
    for (const auto& [stage, ms] : i.load_ms) {
      char part[64];
      std::snprintf(part, sizeof part, "%s%s %.0f", stages.empty() ? "" : ", ", stage.c_str(), ms);
      stages += part, load_ms += ms;
    }
    std::printf("  load %.0f ms (%s), peak resident memory %.0f MiB\n", load_ms, stages.c_str(), i.peak_rss_bytes / 1048576.0);
    if (i.opset > 0) std::printf("  ONNX opset %d\n", i.opset);
    std::string ops;
    for (const auto& [op, count] : i.operators) ops += (ops.empty() ? "" : ", ") + op + " " + std::to_string(count);
    std::printf("  operators: %s\n", ops.c_str());
    for (const std::string& p : i.passes) std::printf("  pass %s\n", p.c_str());
    // Where the kernels run: how many on each implementation, or each one.
    std::map<std::string, int> impls;
    for (const auto& k : i.kernels) ++impls[k.second];
    std::string where;
    for (const auto& [impl, count] : impls) where += (where.empty() ? "" : ", ") + impl + " " + std::to_string(count);
    std::printf("  kernels by implementation: %s\n", where.c_str());
    if (kernels)
      for (const auto& [node, impl] : i.kernels) std::printf("  kernel %-60s %s\n", node.c_str(), impl.c_str());
    if (!profile) return kExitOk;
    std::vector<float> x = forward_input(model, input_path), y(model.output_size());
    model.run(x.data(), y.data());
    // The ceiling, measured before and after the layers (the best of both:
    // a shared host can steal either), CPU only.
    PeakFlops peak = m.device == "cpu" ? measure_fp32_peak(model.threads()) : PeakFlops{};
    // Per layer the fastest of `runs` (what the kernel can do) and the median
    // (what it does in a pass, as ONNX Runtime's profiler reports).
    std::vector<LayerProfile> best;
    std::vector<std::vector<double>> all;
    for (int r = 0; r < runs; ++r) {
      std::vector<LayerProfile> p = model.profile(x.data(), y.data());
      if (best.empty()) best = p, all.resize(p.size());
      for (std::size_t k = 0; k < p.size(); ++k) best[k].ms = std::min(best[k].ms, p[k].ms), all[k].push_back(p[k].ms);
    }
    std::vector<double> median(best.size());
    double total = 0, flops = 0, median_total = 0;
    for (std::size_t k = 0; k < best.size(); ++k) {
      median[k] = summarize(all[k]).p50;
      total += best[k].ms, flops += best[k].flops, median_total += median[k];
    }
    if (peak.gflops > 0) peak.gflops = std::max(peak.gflops, measure_fp32_peak(model.threads()).gflops);
    // Winograd layers count direct-convolution FLOPs, so they can pass 100 %.
    if (peak.gflops > 0)
      std::printf("\n  FP32 peak here: %.1f GFLOP/s (%s, %d threads, register-only loop; %%peak below is against it)\n", peak.gflops,
                  peak.isa.c_str(), peak.threads);
    // wt MB / GB/s: the constants each layer read (the last run's) and at
    // what rate over its fastest time: the layers bound by fetching weights.
    std::printf("\n%8s %8s %6s %8s %6s %7s %6s  %-44s %s\n", "ms", "p50 ms", "share", "GFLOP/s", "%peak", "wt MB", "GB/s", "layer",
                "implementation");
    double weight_bytes = 0;
    for (std::size_t k = 0; k < best.size(); ++k) {
      const LayerProfile& l = best[k];
      const double g = l.flops > 0 ? l.flops / (l.ms * 1e6) : 0.0;
      weight_bytes += l.weight_bytes;
      std::printf("%8.3f %8.3f %5.1f%% %8.1f %5.0f%% %7.2f %6.1f  %-44.44s %s\n", l.ms, median[k], 100 * l.ms / total, g,
                  peak.gflops > 0 ? 100 * g / peak.gflops : 0.0, l.weight_bytes / 1e6, l.ms > 0 ? l.weight_bytes / (l.ms * 1e6) : 0.0,
                  l.name.c_str(), l.impl.c_str());
    }
    if (runs > 1) std::printf("%8s %8.3f p50 total (sum of the layers' medians over %d runs)\n", "", median_total, runs);
    std::printf("%8.3f total (the fastest of each), %.2f GFLOP, %.1f GFLOP/s overall (%d threads)%s\n", total, flops / 1e9, flops / (total * 1e6), model.threads(),
                peak.gflops > 0 ? (", " + std::to_string(static_cast<int>(100 * flops / (total * 1e6) / peak.gflops + 0.5)) + " % of peak").c_str() : "");
    if (weight_bytes > 0) std::printf("%8s %.1f MB of weights read a pass\n", "", weight_bytes / 1e6);
    if (!json_path.empty()) {
      nlohmann::json j;
      j["model"] = m.model, j["threads"] = model.threads(), j["runs"] = runs, j["peak_gflops"] = peak.gflops;
      j["layers"] = nlohmann::json::array();
      for (std::size_t k = 0; k < best.size(); ++k)
        j["layers"].push_back({{"layer", best[k].name}, {"impl", best[k].impl}, {"ms_min", best[k].ms}, {"ms_p50", median[k]},
                               {"flops", best[k].flops}, {"weight_bytes", best[k].weight_bytes}});
      write_text(json_path, j.dump(2) + "\n");
    }
    return kExitOk;
  }
};

}  // namespace

void add_bench(CLI::App& app, Handler& run) {
  auto c = std::make_shared<BenchCmd>();
  c->m.add_to(app);
  c->m.add_host_preprocess(app);
  app.add_option("images", c->images, "Images for the file -> top-k loop (default: the bundled sample photo)");
  app.add_option("--preset", c->preset_name, "Preprocessing preset (default: the model's)");
  app.add_flag("--forward-only", c->forward_only, "Time only the forward pass, on a fixed input");
  app.add_option("--input", c->input_path, "--forward-only: the network's input from a .npy (float32) instead of fixed noise");
  app.add_flag("--pipeline", c->pipeline, "Decode the next image while the current one is inferred; report throughput");
  app.add_option("--loops", c->loops, "Timed iterations (default 100)");
  app.add_option("--min-time", c->min_time, "Keep timing until this many seconds have passed")->check(CLI::Range(0.0, 86400.0));
  app.add_option("--warmup", c->warmup, "Untimed iterations first")->check(CLI::Range(0, 1000000));
  app.add_option("--json", c->json_path, "Write the figures as JSON");
  app.add_option("--csv", c->csv_path, "Write every iteration's stage times as CSV");
  app.add_option("--plot", c->plot_path, "Plot latency distribution and stages (.png or .svg, needs gnuplot)");
  run = [c] { return c->run(); };
}

void add_devices(CLI::App& app, Handler& run) {
  auto json = std::make_shared<bool>(false);
  app.add_flag("--json", *json, "One JSON object");
  run = [json] {
    nlohmann::json out = nlohmann::json::array();
    for (const BackendInfo& b : backends()) {
      nlohmann::json devs = nlohmann::json::array();
      for (const DeviceInfo& d : b.devices) devs.push_back({{"index", d.index}, {"name", d.name}, {"details", d.details}});
      out.push_back({{"backend", b.name}, {"compiled_in", b.compiled_in}, {"versions", b.versions}, {"devices", devs}, {"note", b.note}});
      if (*json) continue;
      std::printf("%s: %s%s%s\n", b.name.c_str(), b.compiled_in ? "compiled in" : "not compiled in",
                  b.versions.empty() ? "" : ", ", b.versions.c_str());
      for (const DeviceInfo& d : b.devices)
        std::printf("  %s:%d  %s (%s)\n", b.name.c_str(), d.index, d.name.c_str(), d.details.c_str());
      if (!b.note.empty()) std::printf("  %s\n", b.note.c_str());
    }
    if (*json) std::printf("%s\n", out.dump().c_str());
    return kExitOk;
  };
}

void add_info(CLI::App& app, Handler& run) {
  auto c = std::make_shared<InfoCmd>();
  c->m.compact_weights = true;  // as classify loads it
  c->m.add_to(app);
  app.add_flag("--profile", c->profile, "Also time every kernel (fastest of --runs)");
  app.add_flag("--kernels", c->kernels, "List every kernel and the implementation that runs it");
  app.add_option("--runs", c->runs, "Profile runs")->check(CLI::Range(1, 1000));
  run = [c] { return c->run(); };
}

void add_profile(CLI::App& app, Handler& run) {
  auto c = std::make_shared<InfoCmd>();
  c->profile = true;
  c->m.add_to(app);
  app.add_option("--runs", c->runs, "Runs (per layer: the fastest, and the median over the runs)")->check(CLI::Range(1, 1000));
  app.add_option("--json", c->json_path, "Also write the per-layer times as JSON");
  app.add_option("--input", c->input_path, "The network's input from a .npy (float32) instead of fixed noise");
  run = [c] { return c->run(); };
}

}  // namespace vinfer::cli
