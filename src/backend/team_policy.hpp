// Internal: how many of a compiled graph's threads the next run takes.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

namespace vinfer::detail {

// Chooses, run by run, between the whole team a graph was compiled for and
// one thread, by the times the runs take. Kernels split their work evenly and
// meet at a barrier after each layer, so on a machine where another process
// holds a CPU every layer waits for the member it preempted: there one thread
// is faster than the team. The policy tries the other size for a few runs
// (a run well slower than the size in use ends the try at once) and keeps
// whichever was faster on average; it tries again after a wait that doubles
// each time the try lost, soon when the team's runs slowed down, so that it
// follows the load as it comes and goes. On an idle machine that costs one
// single-thread run in kLongestWait, and in kLongestWaitMs.
// Pure bookkeeping: no clocks, no threads (the caller times each run).
class TeamPolicy {
 public:
  explicit TeamPolicy(int threads) : threads_(threads) {}

  int next() const { return probing_ > 0 ? other(mode_) : mode_; }  // threads for the next run
  void observe(int team, double ms);                                // how long a run on `team` threads took
  // Whether the last observe() began a try of the team after runs on one
  // thread. The caller may then call skip_try() where it knows that no CPU
  // sat idle meanwhile (the team would wait for one at every barrier):
  // a try on a machine still busy costs the runs it takes.
  bool trying_team() const { return mode_ == 1 && probing_ == kProbeRuns; }
  void skip_try();

  // Runs on each team size so far: {whole team, one thread}.
  std::array<std::int64_t, 2> runs() const { return {runs_[0], runs_[1]}; }

  static constexpr int kProbeRuns = 3;    // runs of the other team size per try
  static constexpr int kFirstWait = 3;    // runs before the next try after a switch
  static constexpr int kLongestWait = 128;  // ... and at most after tries that lost
  static constexpr double kLongestWaitMs = 2000;  // ... and in time
  static constexpr double kSlower = 1.25;  // the team "slowed down": its recent runs this much above its best

 private:
  int other(int team) const { return team == 1 ? threads_ : 1; }
  int slot(int team) const { return team == 1 ? 1 : 0; }
  double recent(int team) const;  // mean of the team size's last runs (a run that waited long counts)

  int threads_;
  int mode_ = threads_;   // the team size in use
  int probing_ = 0;       // runs of the other size still to try
  int wait_ = kFirstWait;  // runs between tries
  int since_ = 0;         // runs since the last try
  double since_ms_ = 0;   // and their time
  double best_team_ = 0;  // the whole team's fastest run
  std::array<std::vector<double>, 2> last_;  // each size's latest runs, newest last
  std::array<std::int64_t, 2> runs_{0, 0};
};

}  // namespace vinfer::detail
