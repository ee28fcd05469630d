// Internal: choosing between kernels for one layer by timing them at load.
// Which 3x3 kernel is fastest differs between CPUs more than any rule of
// thumb covers (oneDNN's AVX-512 Winograd beat vinfer's on VGG19's wide
// layers on a Sapphire Rapids Xeon and lost by 20-30 % on an AMD Zen 5), so
// where several run a layer they are timed once, on the layer's own shape,
// and the fastest is kept.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace vinfer::cpu {

// Times one call of `run`, in ms.
using TuneMeasure = std::function<double(const std::function<void()>& run)>;
double steady_measure(const std::function<void()>& run);

// One way to run the layer; `prepare` (optional, not timed) runs before each
// timed run: it puts the caches in the state the layer meets in the network.
struct TuneCandidate {
  std::function<void()> run;
  std::function<void()> prepare;
};

struct TuneResult {
  int choice = 0;
  std::vector<double> best_ms;  // per candidate, the fastest of its runs
  double spent_ms = 0;          // time measured in all
};

// The fastest of the candidates: each runs once to warm up, then all run in
// turn (so that a shared machine's slow phases hit all alike) for at least 5
// and at most 15 rounds or until about budget_ms has been spent; each keeps
// its fastest run. Candidate 0 is the default and is kept unless another is
// faster by more than `margin` (a fraction), so that noise does not flip it.
TuneResult fastest(const std::vector<TuneCandidate>& candidates, double budget_ms, double margin,
                   const TuneMeasure& measure = steady_measure);

// Writes the bytes back to memory and drops them from every cache level: in
// a network a layer's weights were last read a whole forward pass ago and
// come from memory (DenseNet121's 32 MB of weights do not stay in a 32 MB
// L3), while timed alone they would be warm, which favours kernels with
// larger weights (F(4,3)'s are 2.25x F(2,3)'s).
void evict(const void* p, std::size_t bytes);
// Reads the bytes (the layer's input, just written by the layer before).
void touch(const void* p, std::size_t bytes);

// Process-wide memo of choices by key (a layer's shape and thread count):
// DenseNet121's 58 3x3 layers come in 4 shapes, timed once each; a second
// model in the process makes the same choices. `decide` runs on a miss.
// Returns the choice and whether it was timed now.
std::pair<int, bool> tuned_choice(const std::string& key, const std::function<int()>& decide);

// A file that keeps the choices between processes, so that a network loads
// with the same kernels every time and without timing them again (a timing
// on a busy machine can pick a kernel a few per cent slower). Lines of
// "cpu<TAB>key<TAB>choice" after a header line; only lines of this CPU
// (tune_cache_cpu()) are used; a file that is missing, unreadable or not in this
// format is ignored (and rewritten when there is something to keep).
// load_tune_cache adds its choices to the process memo; save_tune_cache
// writes the memo's choices of this CPU, with the file's other lines, to a
// temporary file renamed over it (a failure to write is ignored: the cache
// only saves time). Both return how many choices of this CPU they read or
// wrote.
int load_tune_cache(const std::string& path);
int save_tune_cache(const std::string& path);
// The CPU a cache line belongs to: model name, family / model / stepping
// (a bare "AMD EPYC" named Zen 4 and Zen 5 hosts alike, whose fastest
// kernels differ) and logical cores.
const std::string& tune_cache_cpu();

}  // namespace vinfer::cpu
