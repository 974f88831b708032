#include "records/usage.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "records/batch_coalescer.h"
#include "records/records.h"

namespace paceline::records {
namespace {

using ::testing::ElementsAre;
using ::testing::SizeIs;

absl::Time At(int64_t seconds) { return absl::FromUnixSeconds(seconds); }

RunUsage MakeRun(absl::Time started, absl::Time ended, Resources held) {
  RunUsage r;
  r.pool = "/ads";
  r.job = JobId(7);
  r.job_name = "train";
  r.owner = "ads-team";
  r.user = "alice";
  r.held = held;
  r.started = started;
  r.ended = ended;
  return r;
}

TEST(UsageTest, HourOfRoundsDownToTheHour) {
  EXPECT_EQ(HourOf(At(7200)), At(7200));
  EXPECT_EQ(HourOf(At(7199)), At(3600));
  EXPECT_EQ(HourOf(At(10799) + absl::Milliseconds(999)), At(7200));
}

TEST(UsageTest, ARunWithinOneHourIsOneRecordWithItsTaskCount) {
  // 2 cores, 1 GiB and half a GPU for 90 s.
  auto rows = SplitByHour(
      MakeRun(At(3600 + 60), At(3600 + 150), Resources::Of(2000, int64_t{1} << 30, 0, 500)));
  ASSERT_THAT(rows, SizeIs(1));
  EXPECT_EQ(rows[0].hour, At(3600));
  EXPECT_EQ(rows[0].cpu_milli_seconds, 2000 * 90);
  EXPECT_EQ(rows[0].memory_byte_seconds, (int64_t{1} << 30) * 90);
  EXPECT_EQ(rows[0].gpu_milli_seconds, 500 * 90);
  EXPECT_EQ(rows[0].tasks, 1);
  EXPECT_EQ(rows[0].pool, "/ads");
  EXPECT_EQ(rows[0].user, "alice");
  EXPECT_EQ(rows[0].owner, "ads-team");
  EXPECT_EQ(rows[0].job_name, "train");
}

TEST(UsageTest, ARunAcrossHoursIsSplitAtTheBoundariesAndCountedInItsLastHour) {
  // From 00:59:30 to 03:00:30: 30 s, two whole hours, 30 s.
  auto rows = SplitByHour(MakeRun(At(3600 - 30), At(3 * 3600 + 30), Resources::Of(1000, 0)));
  ASSERT_THAT(rows, SizeIs(4));
  EXPECT_EQ(rows[0].hour, At(0));
  EXPECT_EQ(rows[0].cpu_milli_seconds, 30'000);
  EXPECT_EQ(rows[1].cpu_milli_seconds, 3'600'000);
  EXPECT_EQ(rows[2].cpu_milli_seconds, 3'600'000);
  EXPECT_EQ(rows[3].hour, At(3 * 3600));
  EXPECT_EQ(rows[3].cpu_milli_seconds, 30'000);
  EXPECT_EQ(rows[0].tasks + rows[1].tasks + rows[2].tasks, 0);
  EXPECT_EQ(rows[3].tasks, 1);
}

TEST(UsageTest, ARunEndingOnAnHourBoundaryHasNoEmptyLastHour) {
  auto rows = SplitByHour(MakeRun(At(1800), At(3600), Resources::Of(1000, 0)));
  ASSERT_THAT(rows, SizeIs(1));
  EXPECT_EQ(rows[0].hour, At(0));
  EXPECT_EQ(rows[0].tasks, 1);
}

TEST(UsageTest, ARunThatNeverStartedHasNoUsage) {
  EXPECT_TRUE(SplitByHour(MakeRun(absl::InfinitePast(), At(10), Resources::Of(1000, 0))).empty());
  EXPECT_TRUE(SplitByHour(MakeRun(At(20), At(10), Resources::Of(1000, 0))).empty());
  auto zero = SplitByHour(MakeRun(At(10), At(10), Resources::Of(1000, 0)));
  ASSERT_THAT(zero, SizeIs(1));
  EXPECT_EQ(zero[0].cpu_milli_seconds, 0);
  EXPECT_EQ(zero[0].tasks, 1);
}

// Property: whatever the run, its hourly shares add up to its whole usage, rounded down once.
TEST(UsageTest, SharesAddUpToTheWholeRun) {
  const uint32_t seed = 20261129;
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 2000; ++i) {
    const int64_t start_us = static_cast<int64_t>(rng() % (48 * 3600 * int64_t{1'000'000}));
    const int64_t len_us = static_cast<int64_t>(rng() % (30 * 3600 * int64_t{1'000'000}));
    const Resources held = Resources::Of(static_cast<int64_t>(rng() % 64'000),
                                         static_cast<int64_t>(rng() % (int64_t{1} << 40)), 0,
                                         static_cast<int64_t>(rng() % 8'000));
    RunUsage run =
        MakeRun(absl::FromUnixMicros(start_us), absl::FromUnixMicros(start_us + len_us), held);
    auto rows = SplitByHour(run);
    int64_t cpu = 0, mem = 0, gpu = 0, tasks = 0;
    for (const UsageRecord& r : rows) {
      cpu += r.cpu_milli_seconds;
      mem += r.memory_byte_seconds;
      gpu += r.gpu_milli_seconds;
      tasks += r.tasks;
      EXPECT_EQ(r.hour, HourOf(r.hour));
    }
    const __int128 us = len_us;
    EXPECT_EQ(cpu, static_cast<int64_t>(held.cpu_milli() * us / 1'000'000)) << "seed " << seed;
    EXPECT_EQ(mem, static_cast<int64_t>(held.memory_bytes() * us / 1'000'000)) << "seed " << seed;
    EXPECT_EQ(gpu, static_cast<int64_t>(held.gpu_milli() * us / 1'000'000)) << "seed " << seed;
    EXPECT_EQ(tasks, 1);
    EXPECT_EQ(rows.front().hour, HourOf(run.started));
    const bool on_boundary = len_us > 0 && HourOf(run.ended) == run.ended;
    EXPECT_EQ(rows.back().hour, on_boundary ? run.ended - absl::Hours(1) : HourOf(run.ended));
  }
}

TEST(UsageTest, QueryMatchesWholeHoursAndAPoolSubtree) {
  UsageRecord r;
  r.hour = At(7200);
  r.pool = "/ads/etl";
  EXPECT_TRUE(UsageMatches(r, {}));
  EXPECT_TRUE(UsageMatches(r, {At(7200 + 1800), absl::InfiniteFuture(), "/ads"}));
  EXPECT_FALSE(UsageMatches(r, {At(10800), absl::InfiniteFuture(), ""}));
  EXPECT_FALSE(UsageMatches(r, {absl::InfinitePast(), At(7200), ""}));
  EXPECT_TRUE(UsageMatches(r, {absl::InfinitePast(), At(7201), "/"}));
  EXPECT_FALSE(UsageMatches(r, {absl::InfinitePast(), absl::InfiniteFuture(), "/ad"}));
  EXPECT_FALSE(UsageMatches(r, {absl::InfinitePast(), absl::InfiniteFuture(), "/ads/etl2"}));
}

UsageRecord Row(int64_t hour, std::string pool, uint64_t job, std::string user, int64_t cpu,
                int64_t tasks) {
  UsageRecord r;
  r.hour = At(hour * 3600);
  r.pool = std::move(pool);
  r.job = JobId(job);
  r.job_name = "job-" + std::to_string(job);
  r.owner = "team";
  r.user = std::move(user);
  r.cpu_milli_seconds = cpu;
  r.memory_byte_seconds = cpu * 10;
  r.gpu_milli_seconds = cpu / 2;
  r.tasks = tasks;
  return r;
}

TEST(UsageTest, SumsGroupByPoolUserJobAndOwnerMostCpuFirst) {
  std::vector<UsageRecord> rows = {Row(0, "/a", 1, "alice", 1000, 1),
                                   Row(1, "/a", 1, "alice", 3000, 2),
                                   Row(1, "/b", 2, "bob", 5000, 1), Row(2, "/a", 3, "bob", 500, 4)};
  auto by_pool = SumUsage(rows, UsageGroup::kPool, false);
  ASSERT_THAT(by_pool, SizeIs(2));
  EXPECT_EQ(by_pool[0].key, "/b");
  EXPECT_DOUBLE_EQ(by_pool[0].cpu_seconds, 5.0);
  EXPECT_EQ(by_pool[1].key, "/a");
  EXPECT_DOUBLE_EQ(by_pool[1].cpu_seconds, 4.5);
  EXPECT_DOUBLE_EQ(by_pool[1].memory_byte_seconds, 45000);
  EXPECT_DOUBLE_EQ(by_pool[1].gpu_seconds, 2.25);
  EXPECT_EQ(by_pool[1].tasks, 7);
  EXPECT_EQ(by_pool[1].hour, absl::InfinitePast());

  auto by_user = SumUsage(rows, UsageGroup::kUser, false);
  ASSERT_THAT(by_user, SizeIs(2));
  EXPECT_EQ(by_user[0].key, "bob");
  EXPECT_DOUBLE_EQ(by_user[0].cpu_seconds, 5.5);
  EXPECT_EQ(by_user[1].key, "alice");

  auto by_job = SumUsage(rows, UsageGroup::kJob, false);
  ASSERT_THAT(by_job, SizeIs(3));
  EXPECT_EQ(by_job[0].key, "2");
  EXPECT_EQ(by_job[0].job_name, "job-2");
  EXPECT_EQ(by_job[0].pool, "/b");
  EXPECT_EQ(by_job[1].key, "1");
  EXPECT_DOUBLE_EQ(by_job[1].cpu_seconds, 4.0);

  auto by_owner = SumUsage(rows, UsageGroup::kOwner, false);
  ASSERT_THAT(by_owner, SizeIs(1));
  EXPECT_EQ(by_owner[0].tasks, 8);
}

TEST(UsageTest, HourlySumsComeByHour) {
  std::vector<UsageRecord> rows = {Row(1, "/a", 1, "alice", 3000, 2),
                                   Row(0, "/a", 1, "alice", 1000, 1),
                                   Row(1, "/a", 3, "bob", 500, 4)};
  auto hourly = SumUsage(rows, UsageGroup::kPool, true);
  ASSERT_THAT(hourly, SizeIs(2));
  EXPECT_EQ(hourly[0].hour, At(0));
  EXPECT_DOUBLE_EQ(hourly[0].cpu_seconds, 1.0);
  EXPECT_EQ(hourly[1].hour, At(3600));
  EXPECT_DOUBLE_EQ(hourly[1].cpu_seconds, 3.5);
  EXPECT_EQ(hourly[1].tasks, 6);
}

TEST(UsageTest, CoalescedBatchesKeepEveryUsageRecord) {
  BatchCoalescer c;
  WriteBatch a, b;
  a.add_usage = {Row(0, "/a", 1, "alice", 1000, 1)};
  b.add_usage = {Row(0, "/a", 1, "alice", 2000, 1)};
  c.Add(std::move(a));
  c.Add(std::move(b));
  WriteBatch out = c.Take();
  ASSERT_THAT(out.add_usage, SizeIs(2));
  EXPECT_EQ(out.add_usage[1].cpu_milli_seconds, 2000);
  EXPECT_EQ(out.size(), 2u);
  WriteBatch prune;
  prune.prune_usage_before = At(0);
  EXPECT_FALSE(BatchCoalescer::Mergeable(prune));
  EXPECT_FALSE(prune.empty());
}

}  // namespace
}  // namespace paceline::records
