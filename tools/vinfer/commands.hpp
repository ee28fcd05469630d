// The vinfer CLI: each subcommand registers its options and a handler.
#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace vinfer::cli {

// Exit codes: 0 success, 2 bad input or usage (the user can fix it), 1 internal failure.
constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;

using Handler = std::function<int()>;

void add_resize(CLI::App& app, Handler& run);
void add_preprocess(CLI::App& app, Handler& run);
void add_bench_resize(CLI::App& app, Handler& run);
void add_bench_preprocess(CLI::App& app, Handler& run);
void add_classify(CLI::App& app, Handler& run);
void add_bench(CLI::App& app, Handler& run);
void add_info(CLI::App& app, Handler& run);
void add_devices(CLI::App& app, Handler& run);
void add_profile(CLI::App& app, Handler& run);
void add_check(CLI::App& app, Handler& run);
void add_calibrate(CLI::App& app, Handler& run);

// Latency histogram and per-stage p50 bars through gnuplot, written atomically.
void plot_benchmark(const std::string& out, const std::string& title, const std::vector<double>& latency_ms,
                    const std::vector<std::pair<std::string, double>>& stage_p50);

// Where the CLI keeps timed kernel choices between runs (EngineOptions::tune_cache):
// $VINFER_TUNE_CACHE, else $XDG_CACHE_HOME/vinfer/tune.txt or ~/.cache/vinfer/tune.txt.
std::string default_tune_cache();
// `vinfer serve ARGS`: runs vinfer-serve (beside this executable) with ARGS;
// returns only if that fails (throws Error).
void add_serve(CLI::App& app, Handler& run);
int exec_serve(const std::vector<std::string>& args);

// Parses "WxH" (e.g. 224x224). Throws vinfer::Error(InvalidArgument).
std::pair<int, int> parse_size(const std::string& s);
bool ends_with(const std::string& s, const std::string& suffix);

}  // namespace vinfer::cli

#include "vinfer/color.hpp"
#include "vinfer/resize.hpp"

namespace vinfer::cli {

// Options shared by `resize` and `bench-resize`.
struct ResizeArgs {
  std::string compat = "pil";
  std::string filter;  // empty: the framework's own default
  bool antialias = false;
  bool align_corners = false;
  int threads = 1;

  void add_to(CLI::App& app, const std::string& default_compat);
  // The spec; the default filter is each framework's default (torch: nearest,
  // tf: bilinear, pil: bicubic, opencv: bilinear).
  ResizeSpec spec() const;
};

}  // namespace vinfer::cli
