// A/B of build-time choices in one process: the same network loaded once per
// configuration (each a list of environment settings read while the model is
// built, e.g. VINFER_WINOGRAD_SPLIT=positions, and --no-tune for
// EngineOptions::tune = false), then forward passes
// alternating between the configurations in short blocks, so that a shared
// host's slow and fast phases hit every configuration alike (separate
// processes minutes apart differed by 20 % on the same binary).
//
//   bench_ab MODEL.onnx [--threads N] [--rounds R] [--block B] -- "" "VAR=V VAR2=W" ...
//
// Prints each configuration's p50 and its ratio to the first one's, the
// median of the per-round ratios (each round runs every configuration), and
// that median over the slowest third of the rounds (by the first
// configuration's time): how a choice fares while the host is busy.
// Timed 3x3 choices: the process keeps the first choice made for each layer
// shape (tune.hpp), so every configuration runs the first one's, which come
// from the file $VINFER_TUNE_CACHE if set (a configuration may set it; ""
// for none; kept there for the next run) or are timed while it loads. A
// later configuration's cache file adds only shapes not yet chosen:
// comparing different timed choices takes separate processes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "vinfer/engine.hpp"
#include "vinfer/stats.hpp"

namespace {
std::vector<std::pair<std::string, std::string>> settings(const std::string& config) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(config);
  for (std::string kv; in >> kv;) {
    if (kv == "--no-tune") continue;
    const auto eq = kv.find('=');
    if (eq == std::string::npos) throw std::runtime_error("not VAR=VALUE: " + kv);
    out.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v[(v.size() - 1) / 2] + v[v.size() / 2]) / 2;
}
}  // namespace

int main(int argc, char** argv) try {
  std::string path;
  int threads = 0, rounds = 30, block = 4;
  std::vector<std::string> configs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (a == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (a == "--block" && i + 1 < argc) block = std::atoi(argv[++i]);
    else if (a == "--") configs.assign(argv + i + 1, argv + argc), i = argc;
    else if (path.empty()) path = a;
    else throw std::runtime_error("unexpected argument " + a);
  }
  if (path.empty() || configs.size() < 2 || rounds < 1 || block < 2)
    throw std::runtime_error("usage: bench_ab MODEL.onnx [--threads N] [--rounds R] [--block B] -- CONFIG CONFIG...");

  vinfer::EngineOptions opt;
  opt.threads = threads;
  std::vector<vinfer::Model> models;
  for (const std::string& c : configs) {
    const auto kv = settings(c);
    opt.tune = c.find("--no-tune") == std::string::npos;
    for (const auto& [k, v] : kv) setenv(k.c_str(), v.c_str(), 1);
    const char* cache = std::getenv("VINFER_TUNE_CACHE");
    opt.tune_cache = cache ? cache : "";
    models.push_back(vinfer::Model::load_onnx(path, opt));
    for (const auto& [k, v] : kv) unsetenv(k.c_str());
  }
  std::vector<float> x(models[0].input_size(), 0.5f), y(models[0].output_size());
  for (auto& m : models)
    for (int i = 0; i < 3; ++i) m.run(x.data(), y.data());

  const std::size_t n = models.size();
  std::vector<std::vector<double>> ms(n), ratios(n);
  std::vector<double> base_round;  // the first configuration's p50 per round
  for (int r = 0; r < rounds; ++r) {
    std::vector<double> round_p50(n);
    for (std::size_t k = 0; k < n; ++k) {
      std::vector<double> t;
      // The first pass of a block pays for the other configuration's
      // weights in the caches: not counted.
      for (int i = 0; i < block; ++i) {
        const auto a = std::chrono::steady_clock::now();
        models[k].run(x.data(), y.data());
        const double d = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
        if (i > 0) t.push_back(d), ms[k].push_back(d);
      }
      round_p50[k] = median(t);
    }
    for (std::size_t k = 0; k < n; ++k) ratios[k].push_back(round_p50[k] / round_p50[0]);
    base_round.push_back(round_p50[0]);
  }
  std::vector<std::size_t> slow(base_round.size());
  for (std::size_t r = 0; r < slow.size(); ++r) slow[r] = r;
  std::sort(slow.begin(), slow.end(), [&](std::size_t a, std::size_t b) { return base_round[a] > base_round[b]; });
  slow.resize(std::max<std::size_t>(1, slow.size() / 3));
  std::printf("%s, %d threads, %d rounds of %d passes per configuration (first of each block not counted)\n",
              path.c_str(), models[0].threads(), rounds, block);
  const double base = vinfer::summarize(ms[0]).p50;
  for (std::size_t k = 0; k < n; ++k) {
    const auto s = vinfer::summarize(ms[k]);
    const auto q = std::minmax_element(ratios[k].begin(), ratios[k].end());
    std::vector<double> slow_ratios;
    for (std::size_t r : slow) slow_ratios.push_back(ratios[k][r]);
    std::printf("  p50 %8.3f ms  min %8.3f  ratio %.3f  per-round ratio median %.3f [%.3f-%.3f], slowest third %.3f  %s\n",
                s.p50, s.min, s.p50 / base, median(ratios[k]), *q.first, *q.second, median(slow_ratios),
                configs[k].empty() ? "(default)" : configs[k].c_str());
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_ab: %s\n", e.what());
  return 1;
}
