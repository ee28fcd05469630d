// How many threads a run takes: the policy that chooses between the whole
// team and one thread by the times runs take, and the engine that applies it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include <omp.h>

#include "backend/team_policy.hpp"
#include "test_support.hpp"
#include "vinfer/engine.hpp"
#include "vinfer/zoo.hpp"

namespace vinfer {
namespace {

using detail::TeamPolicy;

// Runs the policy `runs` times on a machine where a run on the team takes
// team_ms and one on one thread single_ms; returns how many took one thread.
std::int64_t drive(TeamPolicy& p, int runs, double team_ms, double single_ms) {
  std::int64_t single = 0;
  for (int i = 0; i < runs; ++i) {
    const int t = p.next();
    single += t == 1;
    p.observe(t, t == 1 ? single_ms : team_ms);
  }
  return single;
}

TEST(TeamPolicy, AnIdleMachineKeepsTheTeam) {
  TeamPolicy p(2);
  // One thread is tried after a wait that doubles each time it loses: at
  // most a run in kLongestWait, after the first few.
  const std::int64_t single = drive(p, 2000, 20, 35);
  EXPECT_GT(single, 0);
  EXPECT_LE(single, 2000 / TeamPolicy::kLongestWait + 6);
  if (p.next() == 1) p.observe(1, 35);  // a try under way ends on its first run
  EXPECT_EQ(p.next(), 2);
}

TEST(TeamPolicy, ABusyMachineGoesToOneThread) {
  TeamPolicy p(2);
  drive(p, 5, 20, 35);  // idle first: the team's best is known
  // Another process now holds a CPU: the team's runs take 60 ms, one thread's 36.
  const std::int64_t single = drive(p, 2000, 60, 36);
  EXPECT_EQ(p.next(), 1);
  EXPECT_GE(single, 2000 - (2000 / TeamPolicy::kLongestWait + 2 * TeamPolicy::kFirstWait + 6));
}

TEST(TeamPolicy, BusyFromTheStart) {
  TeamPolicy p(4);
  // The team was never fast here: one thread is still tried, and kept.
  drive(p, TeamPolicy::kFirstWait + TeamPolicy::kProbeRuns + 1, 60, 36);
  EXPECT_EQ(p.next(), 1);
}

TEST(TeamPolicy, FollowsTheLoadAsItGoes) {
  TeamPolicy p(2);
  drive(p, 50, 20, 35);
  drive(p, 500, 60, 36);
  ASSERT_EQ(p.next(), 1);
  // The other process ends: the team is back within the longest wait and a try.
  int runs = 0;
  while (p.next() == 1 && runs < 1000) p.observe(1, 35), ++runs;
  EXPECT_LE(runs, TeamPolicy::kLongestWait + 1);
  drive(p, TeamPolicy::kProbeRuns, 20, 35);
  EXPECT_EQ(p.next(), 2);
}

TEST(TeamPolicy, ATryFarSlowerEndsAtOnce) {
  TeamPolicy p(2);
  drive(p, 20, 60, 36);
  ASSERT_EQ(p.next(), 1);
  int runs = 0;
  while (p.next() == 1) p.observe(1, 36), ++runs;
  p.observe(2, 200);  // the team's run waited on a preempted thread
  EXPECT_EQ(p.next(), 1) << "one slow run of the team ends its try";
}

TEST(TeamPolicy, NotFasterByEnoughKeepsTheSizeInUse) {
  TeamPolicy p(2);
  // One thread within 5 % of the team: no switch; each try runs whole.
  const std::int64_t single = drive(p, 1000, 30, 29);
  EXPECT_LE(single, (1000 / TeamPolicy::kLongestWait + 5) * TeamPolicy::kProbeRuns);
  EXPECT_EQ(p.next(), 2);
}

TEST(TeamPolicy, ShortRunsTryTheTeamNoMoreOftenInTime) {
  TeamPolicy p(2);
  // 3 ms on one thread, 30 on the busy team: 15 s of runs, a try at most
  // every kLongestWaitMs once the wait is long.
  const std::int64_t single = drive(p, 5000, 30, 3);
  const std::int64_t team = 5000 - single;
  EXPECT_LE(team, static_cast<std::int64_t>(5000 * 3 / TeamPolicy::kLongestWaitMs) + 2 * TeamPolicy::kFirstWait + 6);
}

TEST(TeamPolicy, ATryOfTheTeamMayBeSkipped) {
  TeamPolicy p(2);
  drive(p, 20, 60, 36);
  ASSERT_EQ(p.next(), 1);
  // The caller knows the CPUs are still busy: every try is skipped, and the
  // team never runs.
  std::int64_t team = 0, tries = 0;
  for (int i = 0; i < 2000; ++i) {
    const int t = p.next();
    team += t != 1;
    p.observe(t, t == 1 ? 36 : 60);
    if (p.trying_team()) ++tries, p.skip_try();
  }
  EXPECT_EQ(team, 0);
  EXPECT_GT(tries, 2000 / TeamPolicy::kLongestWait / 2) << "asked again at least every longest wait";
  // Skipping does not lengthen the wait: once a CPU is free, the team comes back within it.
  int runs = 0;
  while (p.next() == 1 && runs < 1000) p.observe(1, 36), ++runs;
  EXPECT_LE(runs, TeamPolicy::kLongestWait + 1);
}

TEST(TeamPolicy, OneThreadHasNothingToChoose) {
  TeamPolicy p(1);
  EXPECT_EQ(drive(p, 100, 10, 10), 100);
  EXPECT_EQ(p.runs()[0] + p.runs()[1], 0);
}

// A network built for two threads gives the same answer on one (every
// parallel region inactive, oneDNN's primitives included) as on both.
TEST(Threads, OneThreadOfATeamGivesTheTeamsAnswer) {
  auto run = [](const char* team) {
    if (team) setenv("VINFER_TEAM", team, 1);
    EngineOptions o;
    o.threads = 2;
    Model m = load_model("resnet18", "", o);
    unsetenv("VINFER_TEAM");
    std::vector<float> x(static_cast<std::size_t>(m.input_size())), y(static_cast<std::size_t>(m.output_size()));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 255) / 255.f - 0.5f;
    m.run(x.data(), y.data());
    return y;
  };
  // Bit for bit: kernels that split a sum split it by the team's size, not
  // by the threads that run it (the fully connected layer's rows here).
  EXPECT_EQ(run("one"), run("all"));
}

// oneDNN's brgemm matmul splits its work for the threads it was created
// with; where regions are inactive (one thread of the team; a caller's own
// parallel region) a twin made for one thread runs it, not a share of it.
TEST(Threads, AMatMulRunsWholeWhereRegionsAreInactive) {
  Graph g;
  const int x = g.add_input("x", {1, 50, 768});
  g.mark_output(g.add_node("MatMul", {x, g.add_constant("w", test::random_tensor({768, 3072}, 5))})[0]);
  EngineOptions o;
  o.threads = 2;
  const TensorData in = test::random_tensor({1, 50, 768}, 6);
  // Each model's first run where regions are as said (oneDNN prepares some
  // kernels on their first run).
  auto first_run = [&](int how) {
    Model m = Model::from_graph(g, "matmul", o);
    std::vector<float> y(static_cast<std::size_t>(m.output_size()));
    const int levels = omp_get_max_active_levels();
    if (how == 1) omp_set_max_active_levels(0);
    if (how == 2) {
#pragma omp parallel num_threads(2)
      if (omp_get_thread_num() == 0) m.run(in.f.data(), y.data());
    } else {
      m.run(in.f.data(), y.data());
    }
    omp_set_max_active_levels(levels);
    return y;
  };
  const std::vector<float> want = first_run(0), alone = first_run(1), nested = first_run(2);
  EXPECT_EQ(alone, want);
  EXPECT_EQ(nested, want);
}

// Every run is counted on the size it took; --fixed-threads (adapt_threads
// false) never leaves the team.
TEST(Threads, RunsAreCountedBySize) {
  EngineOptions o;
  o.threads = 2;
  o.adapt_threads = false;
  Model fixed = load_model("resnet18", "", o);
  std::vector<float> x(static_cast<std::size_t>(fixed.input_size()), 0.25f), y(static_cast<std::size_t>(fixed.output_size()));
  for (int i = 0; i < 12; ++i) fixed.run(x.data(), y.data());
  EXPECT_EQ(fixed.team_runs()[0] + fixed.team_runs()[1], 0) << "not adapting: nothing counted";
  o.adapt_threads = true;
  Model adapt = load_model("resnet18", "", o);
  for (int i = 0; i < 40; ++i) adapt.run(x.data(), y.data());
  EXPECT_EQ(adapt.team_runs()[0] + adapt.team_runs()[1], 40);
  EXPECT_GE(adapt.team_runs()[1], 1) << "one thread is tried at least once in 40 runs";
}

}  // namespace
}  // namespace vinfer
