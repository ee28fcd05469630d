// Image benchmarks. `vinfer bench-resize`: the resize question's loop. Resize a (gray)
// photo by 1/k, N times, printing the time of every 1000 iterations as the
// seed does; with --decode-in-loop each iteration also reads and decodes the
// file. `vinfer bench-preprocess`: a preset's file -> tensor, stage by stage.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <tuple>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "vinfer/decode.hpp"
#include "vinfer/error.hpp"
#include "vinfer/io.hpp"
#include "vinfer/preprocess.hpp"
#include "vinfer/stats.hpp"
#include "vinfer/version.hpp"

namespace vinfer::cli {
namespace {

using Clock = std::chrono::steady_clock;

std::string timedelta(double seconds) {  // Python's str(datetime.timedelta)
  char buf[64];
  const int h = static_cast<int>(seconds / 3600), m = static_cast<int>(seconds / 60) % 60;
  std::snprintf(buf, sizeof buf, "%d:%02d:%09.6f", h, m, std::fmod(seconds, 60.0));
  return buf;
}

void write_json(const std::string& path, const nlohmann::json& j) { write_text(path, j.dump(2) + "\n"); }

struct BenchResizeCmd {
  std::string image, json_path, gray_rule = "pil", size;
  int k = 3, iters = 5000, warmup = 10;
  bool gray = false, decode_in_loop = false, fast = false;
  ResizeArgs r;

  int run() {
    if (k < 1) throw Error(ErrorKind::InvalidArgument, "--k must be >= 1");
    if (iters < 1) throw Error(ErrorKind::InvalidArgument, "--iters must be >= 1");
    const ResizeSpec spec = r.spec();
    DecodeOptions opt;
    opt.threads = r.threads;  // 2+: libjpeg on one thread, chroma upsampling + colour on another
    if (gray) {
      opt.format = PixelFormat::Gray;
      opt.gray_rule = parse_gray_rule(gray_rule);
      opt.luma_only = fast;
    }
    ImageU8 img;
    ImageInfo info;
    decode_file(image, opt, img, &info);
    // The seed's size: (int(h / k), int(w / k)).
    int ow = info.width / k, oh = info.height / k;
    if (!size.empty()) std::tie(ow, oh) = parse_size(size);
    if (ow < 1 || oh < 1) throw Error(ErrorKind::InvalidArgument, "--k " + std::to_string(k) + " leaves an empty image");
    if (fast) opt.target_width = ow, opt.target_height = oh;
    // PyTorch and TensorFlow produce float tensors in the seed; Pillow and OpenCV keep uint8.
    const bool f32 = spec.compat == Compat::Torch || spec.compat == Compat::Tf;
    Resizer resizer(spec);
    ImageU8 out8;
    ImageF32 out32;
    auto once = [&] {
      if (decode_in_loop) decode_file(image, opt, img);
      if (f32) resizer.run(img.view(), ow, oh, out32);
      else resizer.run(img.view(), ow, oh, out8);
    };
    for (int i = 0; i < warmup; ++i) once();
    std::vector<double> per_iter;
    per_iter.reserve(iters);
    auto block = Clock::now();
    for (int i = 0; i < iters; ++i) {
      const auto t = Clock::now();
      once();
      const auto e = Clock::now();
      per_iter.push_back(std::chrono::duration<double, std::milli>(e - t).count());
      if (i % 1000 == 0) {  // the seed prints at i = 0, 1000, 2000, ...
        std::printf("%s\n", timedelta(std::chrono::duration<double>(e - block).count()).c_str());
        std::fflush(stdout);
        block = Clock::now();
      }
    }
    const LatencySummary s = summarize(per_iter);
    std::printf("bench-resize %s: %dx%d -> %dx%d (%s, %s %s%s, %s%s), %d iterations\n", image.c_str(), img.width(),
                img.height(), ow, oh, gray ? "gray" : "rgb", std::string(to_string(spec.compat)).c_str(),
                std::string(to_string(spec.filter)).c_str(), spec.antialias ? " antialias" : "", f32 ? "f32" : "u8",
                decode_in_loop ? (fast ? ", decode in loop (fast)" : ", decode in loop") : "", iters);
    std::printf("per iteration: p50 %.4f ms, mean %.4f ms, p90 %.4f ms, min %.4f ms\n", s.p50, s.mean, s.p90, s.min);
    if (!json_path.empty()) {
      const MachineInfo m = machine_info();
      nlohmann::json j = {
          {"tool", "vinfer bench-resize"},
          {"version", version()},
          {"image", image},
          {"input", {{"width", img.width()}, {"height", img.height()}, {"channels", img.channels()}}},
          {"output", {{"width", ow}, {"height", oh}, {"dtype", f32 ? "f32" : "u8"}}},
          {"k", k},
          {"iters", iters},
          {"warmup", warmup},
          {"compat", to_string(spec.compat)},
          {"filter", to_string(spec.filter)},
          {"antialias", spec.antialias},
          {"gray", gray},
          {"decode_in_loop", decode_in_loop},
          {"fast", fast},
          {"threads", r.threads},
          {"per_iter_ms", {{"p50", s.p50}, {"mean", s.mean}, {"p90", s.p90}, {"p99", s.p99}, {"min", s.min}, {"max", s.max}}},
          {"machine", {{"cpu", m.cpu}, {"cpu_id", m.cpu_id}, {"logical_cores", m.logical_cores}, {"simd", m.simd}, {"os", m.os}}},
      };
      write_json(json_path, j);
    }
    return kExitOk;
  }
};

struct BenchPreprocessCmd {
  std::string image, preset_name, json_path;
  int size = 224, iters = 200, warmup = 10, threads = 1;
  bool fast = false;

  int run() {
    if (iters < 1) throw Error(ErrorKind::InvalidArgument, "--iters must be >= 1");
    Preset p = preset(preset_name, size);
    p.fast_decode = fast;
    Preprocessor pre(p, threads);
    std::vector<float> tensor(pre.tensor_size());
    for (int i = 0; i < warmup; ++i) pre.run_file(image, tensor.data());
    std::vector<double> total, read, decode, resize, normalize;
    for (int i = 0; i < iters; ++i) {
      const auto t = Clock::now();
      pre.run_file(image, tensor.data());
      total.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
      const auto& s = pre.last_timings();
      read.push_back(s.read_ms);
      decode.push_back(s.decode_ms);
      resize.push_back(s.resize_ms);
      normalize.push_back(s.normalize_ms);
    }
    const LatencySummary s = summarize(total);
    std::printf("bench-preprocess %s: preset %s%s, %d iterations, %d thread(s)\n", image.c_str(), p.name.c_str(),
                fast ? " (fast decode)" : "", iters, threads);
    std::printf("| stage | p50 (ms) | mean (ms) |\n|---|---|---|\n");
    nlohmann::json stages;
    for (auto [name, v] : {std::pair{"read", &read}, {"decode", &decode}, {"resize", &resize}, {"normalize", &normalize}}) {
      const LatencySummary m = summarize(*v);
      std::printf("| %s | %.3f | %.3f |\n", name, m.p50, m.mean);
      stages[name] = {{"p50", m.p50}, {"mean", m.mean}, {"p90", m.p90}};
    }
    std::printf("| total | %.3f | %.3f |\n", s.p50, s.mean);
    if (!json_path.empty()) {
      const MachineInfo m = machine_info();
      write_json(json_path, {{"tool", "vinfer bench-preprocess"}, {"version", version()}, {"image", image},
                             {"preset", p.name}, {"size", size}, {"fast", fast}, {"threads", threads},
                             {"iters", iters}, {"stages", stages},
                             {"per_iter_ms", {{"p50", s.p50}, {"mean", s.mean}, {"p90", s.p90}, {"min", s.min}}},
                             {"machine", {{"cpu", m.cpu}, {"cpu_id", m.cpu_id}, {"logical_cores", m.logical_cores}, {"simd", m.simd}}}});
    }
    return kExitOk;
  }
};

}  // namespace

void add_bench_preprocess(CLI::App& app, Handler& run) {
  auto cmd = std::make_shared<BenchPreprocessCmd>();
  app.add_option("IMAGE", cmd->image, "Input image")->required();
  app.add_option("--preset", cmd->preset_name, "torchvision, torchvision-crop, keras-caffe, keras-torch, keras-tf")->required();
  app.add_option("--size", cmd->size, "Output size")->capture_default_str();
  app.add_flag("--fast", cmd->fast, "DCT-domain JPEG downscaling (inexact)");
  app.add_option("--iters", cmd->iters, "Timed iterations")->capture_default_str();
  app.add_option("--warmup", cmd->warmup, "Untimed iterations first")->capture_default_str();
  app.add_option("--threads", cmd->threads, "Resize threads")->capture_default_str()->check(CLI::Range(0, 256));
  app.add_option("--json", cmd->json_path, "Write the summary as JSON");
  run = [cmd] { return cmd->run(); };
}

void add_bench_resize(CLI::App& app, Handler& run) {
  auto cmd = std::make_shared<BenchResizeCmd>();
  app.add_option("IMAGE", cmd->image, "Input image")->required();
  app.add_option("--k", cmd->k, "Downscale factor: output is (int(h/k), int(w/k))")->capture_default_str();
  app.add_option("--size", cmd->size, "Output size WxH instead of the seed's 1/k");
  app.add_flag("--gray", cmd->gray, "Convert to gray first (PIL's rule, as the seed's T.Grayscale)");
  app.add_option("--gray-rule", cmd->gray_rule, "pil, tf or opencv")->capture_default_str();
  app.add_option("--iters", cmd->iters, "Timed iterations")->capture_default_str();
  app.add_option("--warmup", cmd->warmup, "Untimed iterations first")->capture_default_str();
  app.add_flag("--decode-in-loop", cmd->decode_in_loop, "Read and decode the file in every iteration");
  app.add_flag("--fast", cmd->fast, "Luma-only and DCT-scaled JPEG decoding (inexact)");
  app.add_option("--json", cmd->json_path, "Write the summary as JSON");
  cmd->r.add_to(app, "torch");
  run = [cmd] { return cmd->run(); };
}

}  // namespace vinfer::cli
