#include "backend/team_policy.hpp"

#include <algorithm>
#include <numeric>

namespace vinfer::detail {

namespace {
constexpr std::size_t kKept = 5;  // runs kept per team size
}

double TeamPolicy::recent(int team) const {
  const std::vector<double>& v = last_[static_cast<std::size_t>(slot(team))];
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

void TeamPolicy::observe(int team, double ms) {
  if (threads_ <= 1 || (team != 1 && team != threads_)) return;
  auto& last = last_[static_cast<std::size_t>(slot(team))];
  last.push_back(ms);
  if (last.size() > kKept) last.erase(last.begin());
  ++runs_[static_cast<std::size_t>(slot(team))];
  if (team != 1) best_team_ = best_team_ > 0 ? std::min(best_team_, ms) : ms;

  if (probing_ > 0) {
    if (team != other(mode_)) return;
    // A run of the try well slower than ours ends it at once: on a busy
    // machine a team's run can take several times one thread's.
    const bool lost = ms > kSlower * recent(mode_);
    if (!lost && --probing_ > 0) return;
    probing_ = 0;
    // The try is over: keep the faster, judged on the runs just made.
    const std::vector<double>& tried = last_[static_cast<std::size_t>(slot(team))];
    const auto n = std::min<std::ptrdiff_t>(kProbeRuns, static_cast<std::ptrdiff_t>(tried.size()));
    const double theirs = std::accumulate(tried.end() - n, tried.end(), 0.0) / static_cast<double>(n), ours = recent(mode_);
    if (!lost && theirs < 0.95 * ours) {
      mode_ = team;
      wait_ = kFirstWait;
    } else {
      wait_ = std::min(2 * wait_, kLongestWait);
    }
    since_ = 0;
    since_ms_ = 0;
    return;
  }
  if (team != mode_) return;
  ++since_;
  since_ms_ += ms;
  // Try the other size after a wait that doubles each time it lost; soon
  // when the team's runs have slowed down.
  const bool slowed = mode_ != 1 && last.size() >= 3 && recent(mode_) > kSlower * best_team_;
  // The wait is in runs and in time (kLongestWaitMs at the longest), so that
  // short runs do not try a slow team more often in time than long ones.
  if (slowed ? since_ >= kFirstWait : since_ >= wait_ && since_ms_ >= kLongestWaitMs * wait_ / kLongestWait)
    probing_ = kProbeRuns;
}

void TeamPolicy::skip_try() {
  if (!trying_team()) return;
  probing_ = 0;  // the wait stays as it was: asking again is cheap
  since_ = 0;
  since_ms_ = 0;
}

}  // namespace vinfer::detail
