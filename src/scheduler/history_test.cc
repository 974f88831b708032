#include "scheduler/history.h"

#include <gtest/gtest.h>

#include "scheduler/scheduler_core.h"
#include "scheduler/test_util.h"

namespace paceline::scheduler {
namespace {

using testing::Batch;
using testing::CoreTest;
using testing::Host;
using testing::kT0;
using testing::Pool;

ClusterPoint At(absl::Time t, uint32_t placed = 0) {
  ClusterPoint c;
  c.at = t;
  c.placed = placed;
  return c;
}

PoolPoint PoolAt(absl::Time t, int64_t cpu) {
  PoolPoint p;
  p.at = t;
  p.allocation = Resources::Of(cpu, 0);
  return p;
}

TEST(HistoryTest, WithoutAPeriodNothingIsEverDueOrKept) {
  History h(HistoryConfig{});
  EXPECT_FALSE(h.enabled());
  EXPECT_FALSE(h.Due(kT0));
  h.Add(At(kT0), {{"/a", PoolAt(kT0, 1)}});
  EXPECT_TRUE(h.cluster().empty());
  EXPECT_TRUE(h.pool("/a").empty());
}

TEST(HistoryTest, TheFirstPointIsDueAtOnceThenOnePerPeriod) {
  History h(HistoryConfig{absl::Seconds(10), 3});
  ASSERT_TRUE(h.Due(kT0));
  h.Add(At(kT0), {});
  EXPECT_FALSE(h.Due(kT0 + absl::Seconds(9)));
  EXPECT_TRUE(h.Due(kT0 + absl::Seconds(10)));
}

TEST(HistoryTest, KeepsTheNewestPointsAndDropsPoolPointsThatLeftTheWindow) {
  History h(HistoryConfig{absl::Seconds(10), 3});
  for (int i = 0; i < 5; ++i) {
    absl::Time t = kT0 + absl::Seconds(10 * i);
    std::vector<std::pair<std::string, PoolPoint>> pools = {{"/kept", PoolAt(t, i)}};
    if (i < 2) pools.push_back({"/deleted", PoolAt(t, 100)});  // gone after the second point
    h.Add(At(t, i), pools);
  }
  ASSERT_EQ(h.cluster().size(), 3u);
  EXPECT_EQ(h.cluster().front().placed, 2u);
  EXPECT_EQ(h.cluster().back().placed, 4u);
  std::vector<PoolPoint> kept = h.pool("/kept");
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept.front().at, kT0 + absl::Seconds(20));
  EXPECT_EQ(kept.back().allocation[Dim::kCpu], 4);
  EXPECT_TRUE(h.pool("/deleted").empty()) << "its last point is older than the window";
  EXPECT_TRUE(h.pool("/never").empty());
}

class HistoryCoreTest : public CoreTest {
 protected:
  void SetUp() override {
    CoreConfig config;
    config.history = {absl::Seconds(10), 360};
    auto core = SchedulerCore::Create(config);
    ASSERT_TRUE(core.ok()) << core.status();
    core_ = std::move(*core);
  }
};

TEST_F(HistoryCoreTest, EachPointCountsPlacementsPendingRunningAndThePoolsAllocation) {
  Actions a;
  ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(100'000), a).ok());
  ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 4), {}, now_, a).ok());
  ASSERT_TRUE(core_->job_control().CreateJob(Batch(6), "/a", now_, a).ok());
  Commit(std::move(a));

  Actions first = Cycle();  // places 4 of the 6 (4 cores), and records the first point
  ASSERT_EQ(first.launches.size(), 4u);
  ASSERT_EQ(core_->history().cluster().size(), 1u);
  const ClusterPoint& p = core_->history().cluster().back();
  EXPECT_EQ(p.at, now_);
  EXPECT_EQ(p.placed, 4u);
  EXPECT_EQ(p.pending, 2u);
  EXPECT_EQ(p.running, 4u) << "LAUNCHING counts as running";
  EXPECT_EQ(p.capacity[Dim::kCpu], 4000);
  EXPECT_EQ(p.allocated[Dim::kCpu], 4000);
  std::vector<PoolPoint> pool = core_->history().pool("/a");
  ASSERT_EQ(pool.size(), 1u);
  EXPECT_EQ(pool[0].allocation[Dim::kCpu], 4000);
  EXPECT_EQ(pool[0].demand[Dim::kCpu], 6000);

  now_ += absl::Seconds(5);
  Cycle();
  EXPECT_EQ(core_->history().cluster().size(), 1u) << "not due before the period";

  for (const Launch& l : first.launches) Report(l, TaskState::kRunning);
  for (const Launch& l : first.launches) Report(l, TaskState::kSucceeded, 0);
  now_ += absl::Seconds(5);
  Actions second = Cycle();
  ASSERT_EQ(second.launches.size(), 2u);
  ASSERT_EQ(core_->history().cluster().size(), 2u);
  const ClusterPoint& q = core_->history().cluster().back();
  EXPECT_EQ(q.placed, 2u) << "placed since the previous point";
  EXPECT_EQ(q.pending, 0u);
  EXPECT_EQ(q.running, 2u);
}

}  // namespace
}  // namespace paceline::scheduler
