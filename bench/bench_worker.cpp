// vinfer's side of an interleaved comparison (bench/peers/bench_engine.py):
// loads the network once, prints "ready VERSION", then for each line "N" read
// from stdin runs N forward passes on the input and prints their times in
// milliseconds on one line; exits at the end of its input. The peers'
// workers answer the same way, so that the engines take turns a few passes
// at a time and a shared host's slow and fast phases hit them alike.
//
//   bench_worker MODEL.onnx INPUT.npy [--threads N] [--tune-cache FILE] [--batch B] [--micro-batch M]
//                [--precision f32|bf16|int8] [--calibration FILE]
//
// The model is loaded as `vinfer bench --forward-only` loads it with the
// same options (timed 3x3 choices kept in the tune cache FILE; "" for none);
// INPUT.npy holds the whole batch.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "vinfer/calibration.hpp"
#include "vinfer/engine.hpp"
#include "vinfer/error.hpp"
#include "vinfer/io.hpp"
#include "vinfer/version.hpp"

int main(int argc, char** argv) try {
  std::vector<std::string> paths;
  vinfer::EngineOptions opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) opt.threads = std::atoi(argv[++i]);
    else if (a == "--tune-cache" && i + 1 < argc) opt.tune_cache = argv[++i];
    else if (a == "--batch" && i + 1 < argc) opt.batch = std::atoi(argv[++i]);
    else if (a == "--micro-batch" && i + 1 < argc) opt.micro_batch = std::atoi(argv[++i]);
    else if (a == "--precision" && i + 1 < argc) opt.precision = vinfer::parse_precision(argv[++i]);
    else if (a == "--calibration" && i + 1 < argc)
      opt.calibration = std::make_shared<const vinfer::Calibration>(vinfer::Calibration::load(argv[++i]));
    else paths.push_back(a);
  }
  if (paths.size() != 2) throw std::runtime_error("usage: bench_worker MODEL.onnx INPUT.npy [OPTIONS] (see the source)");
  vinfer::Model model = vinfer::Model::load_onnx(paths[0], opt);
  std::vector<float> x;
  vinfer::read_npy(paths[1], x);
  if (x.size() != model.input_size())
    throw std::runtime_error(paths[1] + " holds " + std::to_string(x.size()) + " values; the model takes " +
                             std::to_string(model.input_size()));
  std::vector<float> y(model.output_size());
  std::cout << "ready " << vinfer::version() << std::endl;
  for (std::string line; std::getline(std::cin, line);) {
    const int n = std::atoi(line.c_str());
    if (n < 1) throw std::runtime_error("expected a number of passes, got '" + line + "'");
    std::string out;
    for (int i = 0; i < n; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      model.run(x.data(), y.data());
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%.4f", i ? " " : "", ms);
      out += buf;
    }
    std::cout << out << std::endl;
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_worker: %s\n", e.what());
  return 2;
}
