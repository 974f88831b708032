// Fair share with memory after a restart: decayed usage from the store's hourly usage.
#include "scheduler/fair_share_seed.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "scheduler/scheduler_core.h"

namespace paceline::scheduler {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'700'006'400);  // an hour's start
constexpr int64_t kGi = int64_t{1} << 30;

class FairShareSeedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PoolSpec org;
    org.fair_share = FairShareSpec{absl::Hours(24)};
    ASSERT_TRUE(tree_.Create("/org", org).ok());
    a_ = *tree_.Create("/org/a", PoolSpec());
    ASSERT_TRUE(tree_.Create("/org/a/x", PoolSpec()).ok());
    b_ = *tree_.Create("/org/b", PoolSpec());
    ASSERT_TRUE(tree_.Create("/other", PoolSpec()).ok());
  }
  static records::UsageRecord Row(absl::Time hour, const char* pool, int64_t cores_seconds,
                                  int64_t gib_seconds = 0) {
    records::UsageRecord r;
    r.hour = hour;
    r.pool = pool;
    r.cpu_milli_seconds = cores_seconds * 1000;
    r.memory_byte_seconds = gib_seconds * kGi;
    return r;
  }
  resmgr::PoolTree tree_;
  PoolId a_, b_;
  const Resources capacity_ = Resources::Of(100'000, 100 * kGi);  // 100 cores, 100 GiB
};

TEST_F(FairShareSeedTest, SinceTenHalfLivesAndOnlyWithThePolicy) {
  EXPECT_EQ(UsageSeedSince(tree_, kNow), kNow - absl::Hours(240));
  resmgr::PoolTree plain;
  ASSERT_TRUE(plain.Create("/a", PoolSpec()).ok());
  EXPECT_EQ(UsageSeedSince(plain, kNow), std::nullopt);
}

TEST_F(FairShareSeedTest, HoursBecomeDecayedClusterSeconds) {
  const absl::Time yesterday = kNow - absl::Hours(24);
  const std::vector<records::UsageRecord> rows = {
      // The whole cluster's cpu for an hour, a day ago, in a leaf below /org/a.
      Row(yesterday, "/org/a/x", 100 * 3600),
      // Half the memory (dominant) for the last hour, in /org/b.
      Row(kNow - absl::Hours(1), "/org/b", 10 * 3600, 50 * 3600),
      // Not under a policy; a pool deleted since.
      Row(yesterday, "/other", 100 * 3600),
      Row(yesterday, "/gone", 100 * 3600),
  };
  const std::vector<UsageSeed> seeds = DecayedUsageFromHours(tree_, rows, capacity_, kNow);
  ASSERT_EQ(seeds.size(), 2u);
  EXPECT_EQ(seeds[0].pool, a_);
  EXPECT_NEAR(seeds[0].usage, 3600 * std::exp2(-23.5 / 24), 1e-6);  // from the hour's middle
  EXPECT_EQ(seeds[1].pool, b_);
  EXPECT_NEAR(seeds[1].usage, 1800 * std::exp2(-0.5 / 24), 1e-6);
}

TEST_F(FairShareSeedTest, SubtreeSumsPerHourAtMostTheWholeCluster) {
  // Two rows of one hour in /org/a's subtree add up before the dominant share is taken; more
  // than the cluster (a capacity that shrank since) counts as the whole cluster.
  const absl::Time hour = kNow - absl::Hours(1);
  std::vector<records::UsageRecord> rows = {Row(hour, "/org/a", 30 * 3600),
                                            Row(hour, "/org/a/x", 30 * 3600)};
  std::vector<UsageSeed> seeds = DecayedUsageFromHours(tree_, rows, capacity_, kNow);
  ASSERT_EQ(seeds.size(), 1u);
  EXPECT_NEAR(seeds[0].usage, 0.6 * 3600 * std::exp2(-0.5 / 24), 1e-6);
  rows.push_back(Row(hour, "/org/a/x", 500 * 3600));
  seeds = DecayedUsageFromHours(tree_, rows, capacity_, kNow);
  EXPECT_NEAR(seeds[0].usage, 3600 * std::exp2(-0.5 / 24), 1e-6);
  // No capacity at all: nothing counts.
  EXPECT_EQ(DecayedUsageFromHours(tree_, rows, Resources(), kNow)[0].usage, 0);
}

}  // namespace
}  // namespace paceline::scheduler

namespace paceline::scheduler {
namespace {

// Through the core, as the master does after a restart: seeded before the first cycle, the
// usage is there (decayed to that cycle) when the cycle has run.
TEST(PoolControlSeedTest, TheFirstCycleHasTheSeededUsage) {
  absl::StatusOr<std::unique_ptr<SchedulerCore>> core = SchedulerCore::Create(CoreConfig{});
  ASSERT_TRUE(core.ok()) << core.status();
  Actions out;
  PoolSpec org;
  org.fair_share = FairShareSpec{absl::Hours(24)};
  ASSERT_TRUE((*core)->pools().CreatePool("/org", org, out).ok());
  ASSERT_TRUE((*core)->pools().CreatePool("/org/a", PoolSpec(), out).ok());
  ASSERT_TRUE((*core)->pools().CreatePool("/org/b", PoolSpec(), out).ok());
  records::UsageRecord row;
  row.hour = kNow - absl::Hours(1);
  row.pool = "/org/a";
  row.cpu_milli_seconds = int64_t{50'000} * 3600;  // half of 100 cores for the hour
  const std::vector<records::UsageRecord> rows = {row};
  EXPECT_EQ((*core)->pools().SeedUsage(rows, Resources::Of(100'000, kGi), kNow), 1u);
  (*core)->RunCycle(kNow + absl::Hours(24), out);
  const resmgr::ResourceManager& rm = (*core)->resources();
  const std::optional<resmgr::FairShareView> a =
      rm.fair_share().View(rm.tree(), *rm.tree().Find("/org/a"));
  ASSERT_TRUE(a.has_value());
  EXPECT_NEAR(a->decayed_usage, 1800 * std::exp2(-24.5 / 24), 1e-6);
  EXPECT_NEAR(a->factor[0], 0.25, 1e-12);  // all of the siblings' usage
}

}  // namespace
}  // namespace paceline::scheduler
