// The simulator end to end in-process: determinism, the fairness and preemption examples
// against numbers computed by hand from the resource manager's rules
// (docs/resource-manager.md), and latency / makespan on a scenario small enough to follow.

#include "sim/sim_driver.h"

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/check.h"
#include "sim/sim_report.h"

namespace paceline::sim {
namespace {

Scenario Load(const std::string& name) {
  absl::StatusOr<Scenario> sc = LoadScenarioFile(std::string(PACELINE_EXAMPLES "/") + name);
  PL_CHECK(sc.ok()) << sc.status();
  return *sc;
}

SimResult Simulate(const Scenario& sc) {
  absl::StatusOr<SimResult> r = RunScenario(sc);
  PL_CHECK(r.ok()) << r.status();
  return *r;
}

// The interval that ends at `t`.
const IntervalSample& At(const SimResult& r, absl::Duration t) {
  for (const IntervalSample& s : r.intervals) {
    if (s.t == t) return s;
  }
  PL_CHECK(false) << "no interval ends at " << t;
  return r.intervals.front();
}

int64_t Cores(int64_t n) { return n * 1000; }

TEST(SimDriverTest, SameScenarioSameReport) {
  for (const char* name : {"fairness.yaml", "preemption.yaml"}) {
    Scenario sc = Load(name);
    Json a = BuildReport(sc, Simulate(sc), name);
    Json b = BuildReport(sc, Simulate(sc), name);
    ASSERT_TRUE(a.contains("timing"));
    a.erase("timing");
    b.erase("timing");
    EXPECT_EQ(a.dump(), b.dump()) << name;
  }
}

// The issue's example: /a (10 tasks) alone, then /b (80 tasks) at 30s. Capacity 100 cores;
// both pools reserve 20 cores, no effective limit, share 1.
TEST(SimDriverTest, FairnessExampleFollowsTheRules) {
  SimResult r = Simulate(Load("fairness.yaml"));
  ASSERT_EQ(r.capacity[Dim::kCpu], Cores(100));
  ASSERT_EQ(r.intervals.size(), 60u);  // 10m / 10s

  // t=20s, before b1: /a demands 10 and gets min(10, 20) = 10 by reservation; nobody else wants
  // anything, so the spare 90 is split by share up to the limits: /a 10 + 45, /b 45.
  const IntervalSample& before = At(r, absl::Seconds(20));
  EXPECT_EQ(before.pools.at("/a").demand[Dim::kCpu], Cores(10));
  EXPECT_EQ(before.pools.at("/a").entitlement[Dim::kCpu], Cores(55));
  EXPECT_EQ(before.pools.at("/a").allocation[Dim::kCpu], Cores(10));
  EXPECT_EQ(before.pools.at("/b").entitlement[Dim::kCpu], Cores(45));
  EXPECT_EQ(before.pools.at("/b").allocation[Dim::kCpu], 0);
  EXPECT_EQ(before.tasks[static_cast<int>(TaskState::kRunning)], 10u);

  // t=40s, after b1 (80 tasks): reservations first (a 10, b 20), then b's unmet 60 from the 70
  // left, then the spare 10 split 5/5: a 15, b 85. /b's allocation meets its demand (80), which
  // is below its entitlement; /a keeps its 10; nothing is preempted.
  const IntervalSample& after = At(r, absl::Seconds(40));
  EXPECT_EQ(after.pools.at("/a").entitlement[Dim::kCpu], Cores(15));
  EXPECT_EQ(after.pools.at("/b").entitlement[Dim::kCpu], Cores(85));
  EXPECT_EQ(after.pools.at("/a").allocation[Dim::kCpu], Cores(10));
  EXPECT_EQ(after.pools.at("/b").allocation[Dim::kCpu], Cores(80));
  EXPECT_EQ(after.pools.at("/b").demand[Dim::kCpu], Cores(80));
  EXPECT_EQ(after.tasks[static_cast<int>(TaskState::kRunning)], 90u);
  EXPECT_EQ(r.preemptions, 0u);
  EXPECT_EQ(r.placements, 90u);
}

// Contention: /a holds all 100 cores when /b's 80 tasks arrive at 30s.
TEST(SimDriverTest, PreemptionExampleConvergesToTheEntitlements) {
  SimResult r = Simulate(Load("preemption.yaml"));

  // Before /b: /a demands 100 and is entitled to all of it (20 reserved + the 80 nobody wants).
  const IntervalSample& before = At(r, absl::Seconds(20));
  EXPECT_EQ(before.pools.at("/a").entitlement[Dim::kCpu], Cores(100));
  EXPECT_EQ(before.pools.at("/a").allocation[Dim::kCpu], Cores(100));

  // After /b: both demand more than half. Reservations 20 + 20, then the 60 left split by
  // share, 30 each: 50 / 50. /a is preempted down to 50 and /b gets the 50 freed cores.
  const IntervalSample& settled = At(r, absl::Minutes(1));
  for (const char* pool : {"/a", "/b"}) {
    EXPECT_EQ(settled.pools.at(pool).entitlement[Dim::kCpu], Cores(50)) << pool;
    EXPECT_EQ(settled.pools.at(pool).allocation[Dim::kCpu], Cores(50)) << pool;
  }
  EXPECT_EQ(settled.pools.at("/a").demand[Dim::kCpu], Cores(100));  // preempted tasks requeued
  EXPECT_EQ(settled.pools.at("/b").demand[Dim::kCpu], Cores(80));
  EXPECT_EQ(r.preemptions, 50u);  // exactly the excess, once

  // /b's first 50 tasks end after 5m; /b then demands only its last 30: 20 + 10 of the 60 left,
  // and /a gets the other 50 on top of its 20: 70 / 30.
  const IntervalSample& later = At(r, absl::Minutes(7));
  EXPECT_EQ(later.pools.at("/a").entitlement[Dim::kCpu], Cores(70));
  EXPECT_EQ(later.pools.at("/b").entitlement[Dim::kCpu], Cores(30));
  EXPECT_EQ(later.pools.at("/a").allocation[Dim::kCpu], Cores(70));
  EXPECT_EQ(later.pools.at("/b").allocation[Dim::kCpu], Cores(30));
}

// One 4-core host, 8 one-core tasks of 10 minutes, a start delay of 2s: two waves.
TEST(SimDriverTest, LatencyAndMakespan) {
  absl::StatusOr<Scenario> sc = ParseScenario(R"(
start_delay: 2s
hosts:
  - {resources: {cpu: 4, memory: 16Gi}}
pools:
  /p: {}
jobs:
  - {pool: /p, spec: {name: waves, instances: 8, task: {resources: {cpu: 1, memory: 1Gi}, duration: 10m}}}
)",
                                              "waves.yaml");
  ASSERT_TRUE(sc.ok()) << sc.status();
  SimResult r = Simulate(*sc);
  ASSERT_EQ(r.jobs.size(), 1u);
  const JobOutcome& j = r.jobs[0];
  ASSERT_EQ(j.latencies.size(), 8u);
  // Wave 1: placed by the first cycle (t=0), RUNNING 2s later, ends at 10m2s. Wave 2: placed by
  // the cycle of that same instant (the ends are reported first), RUNNING at 10m4s, ends at
  // 20m4s.
  EXPECT_EQ(std::count(j.latencies.begin(), j.latencies.end(), absl::Seconds(2)), 4);
  EXPECT_EQ(std::count(j.latencies.begin(), j.latencies.end(), absl::Seconds(604)), 4);
  ASSERT_TRUE(j.finished.has_value());
  EXPECT_EQ(*j.finished, absl::Seconds(1204));
  EXPECT_FALSE(r.stalled);
  EXPECT_EQ(r.end, absl::Seconds(1204));  // no run_for: stops when every job has ended

  Json report = BuildReport(*sc, r, "waves.yaml");
  EXPECT_EQ(report["summary"]["makespan_s"].get<double>(), 1204.0);
  EXPECT_EQ(report["jobs"][0]["latency_s"]["p50"].get<double>(), 2.0);
  EXPECT_EQ(report["jobs"][0]["latency_s"]["max"].get<double>(), 604.0);
  EXPECT_EQ(report["summary"]["placements"].get<int64_t>(), 8);
}

TEST(SimDriverTest, RefusedJobAndStall) {
  absl::StatusOr<Scenario> sc = ParseScenario(R"(
hosts:
  - {resources: {cpu: 4, memory: 16Gi}}
pools:
  /p: {resources: {cpu: {limit: 2}}}
jobs:
  - {pool: /p, spec: {name: too-big, instances: 1, task: {resources: {cpu: 3, memory: 1Gi}, duration: 1m}}}
  - {pool: /p, spec: {name: no-host, instances: 1, task: {resources: {cpu: 1, memory: 32Gi}, duration: 1m}}}
)",
                                              "refused.yaml");
  ASSERT_TRUE(sc.ok()) << sc.status();
  SimResult r = Simulate(*sc);
  ASSERT_EQ(r.jobs.size(), 2u);
  EXPECT_THAT(r.jobs[0].refused, ::testing::HasSubstr("limit"));
  EXPECT_TRUE(r.jobs[1].refused.empty());
  EXPECT_FALSE(r.jobs[1].finished.has_value());
  EXPECT_TRUE(r.stalled);  // the second job fits no host: nothing can progress
}

const JobOutcome& JobNamed(const SimResult& r, absl::string_view name) {
  for (const JobOutcome& j : r.jobs) {
    if (j.name == name) return j;
  }
  PL_CHECK(false) << "no job " << name;
  return r.jobs.front();
}

// The mean share of the cluster's cores allocated over the intervals that end by `until`.
double CpuUtilisation(const SimResult& r, absl::Duration until) {
  double sum = 0;
  int n = 0;
  for (const IntervalSample& s : r.intervals) {
    if (s.t > until) break;
    sum += static_cast<double>(s.allocated[Dim::kCpu]) / static_cast<double>(r.capacity[Dim::kCpu]);
    ++n;
  }
  return n == 0 ? 0 : sum / n;
}

TEST(SimDriverTest, BackfillUsesTheIdleCoresWithoutDelayingTheWideGang) {
  Scenario on = Load("backfill.yaml");
  ASSERT_TRUE(on.backfill);
  Scenario off = on;
  off.backfill = false;
  const SimResult with = Simulate(on);
  const SimResult without = Simulate(off);

  // The wide gang starts when `running` reaches its limit, either way.
  const JobOutcome& wide_on = JobNamed(with, "wide");
  const JobOutcome& wide_off = JobNamed(without, "wide");
  ASSERT_EQ(wide_on.latencies.size(), 8u);
  ASSERT_EQ(wide_off.latencies.size(), 8u);
  EXPECT_LE(*std::max_element(wide_on.latencies.begin(), wide_on.latencies.end()),
            *std::max_element(wide_off.latencies.begin(), wide_off.latencies.end()));
  EXPECT_GE(wide_off.latencies.front(), absl::Minutes(58));

  // The small tasks ran in the 40 idle cores during the first hour, not after the wide gang.
  const JobOutcome& small_on = JobNamed(with, "small");
  const JobOutcome& small_off = JobNamed(without, "small");
  ASSERT_TRUE(small_on.finished.has_value() && small_off.finished.has_value());
  EXPECT_LT(*small_on.finished, absl::Minutes(30));
  EXPECT_GT(*small_off.finished, absl::Hours(1));
  const double util_on = CpuUtilisation(with, absl::Hours(1));
  const double util_off = CpuUtilisation(without, absl::Hours(1));
  EXPECT_GT(util_on, util_off + 0.1) << util_on << " vs " << util_off;
  EXPECT_LT(with.end, without.end);  // everything is done sooner
}

}  // namespace
}  // namespace paceline::sim
