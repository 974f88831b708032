// Fair share with memory over simulated days (examples/sim/fair-share.yaml): the team that had
// the cluster yesterday gets less of today's contended capacity, and the effect fades as its
// usage decays and the other team's grows; without the policy the split is even from the start.

#include <gtest/gtest.h>

#include "common/check.h"
#include "sim/sim_driver.h"

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

// /org/a's cpu entitlement in cores in the interval that ends at `hours`.
double ACores(const SimResult& r, int hours) {
  for (const IntervalSample& s : r.intervals) {
    if (s.t == absl::Hours(hours)) return s.pools.at("/org/a").entitlement[Dim::kCpu] / 1000.0;
  }
  PL_CHECK(false) << "no interval ends at " << hours << "h";
  return 0;
}

double AllocationCores(const SimResult& r, const char* pool, int hours) {
  for (const IntervalSample& s : r.intervals) {
    if (s.t == absl::Hours(hours)) return s.pools.at(pool).allocation[Dim::kCpu] / 1000.0;
  }
  return 0;
}

TEST(FairShareSimTest, YesterdaysHeavyUserYieldsTodayAndRecovers) {
  Scenario sc = Load("fair-share.yaml");
  ASSERT_TRUE(sc.pools.at("/org").fair_share.has_value());
  const SimResult with = Simulate(sc);
  Scenario plain = sc;
  plain.pools.at("/org").fair_share.reset();
  const SimResult without = Simulate(plain);

  // Day 0: /org/a alone holds the cluster whatever the policy.
  EXPECT_EQ(ACores(with, 4), 100);
  EXPECT_EQ(AllocationCores(with, "/org/a", 4), 100);

  // Day 1, first hour: a's factor is 0.25 against b's 1: about 20 / 80 (a little more for a
  // by the end of the hour, as b's usage grows). Without the policy: 50 / 50.
  const double first = ACores(with, 25);
  EXPECT_GT(first, 20);
  EXPECT_LT(first, 30);
  EXPECT_EQ(ACores(without, 25), 50);
  EXPECT_GT(AllocationCores(with, "/org/b", 25), 65) << "b's tasks take its larger part";
  EXPECT_LE(with.preemptions, 60u) << "entitlements move slowly: mostly tasks that end make room";

  // The effect fades: a's part grows hour by hour towards half.
  const double later = ACores(with, 30), day = ACores(with, 48), end = ACores(with, 60);
  EXPECT_GT(later, first);
  EXPECT_GT(day, later);
  EXPECT_GE(end, day);
  EXPECT_NEAR(end, 50, 2);
  for (int h : {30, 48, 60}) EXPECT_EQ(ACores(without, h), 50) << h;
}

}  // namespace
}  // namespace paceline::sim
