// Usage accounting through the core (accounting.h): every run that ends is counted once, in the
// batch of its end, for its allocation and its running time; runs that never ran are not.

#include "scheduler/accounting.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/test_util.h"

namespace paceline::scheduler {
namespace {

using testing::Batch;
using testing::CoreTest;
using testing::Host;
using testing::kGi;
using testing::Pool;
using ::testing::SizeIs;

class AccountingTest : public CoreTest {
 protected:
  JobId Start(JobSpec spec) {
    Actions a;
    EXPECT_TRUE(core_->pools().CreatePool("/a", Pool(10'000), a).ok());
    EXPECT_TRUE(core_->agents().RegisterHost(Host("h1", 8), {}, now_, a).ok());
    auto id = core_->job_control().CreateJob(std::move(spec), "/a", now_, a,
                                             jobmgr::JobOwner{"alice", "ads"});
    EXPECT_TRUE(id.ok()) << id.status();
    Commit(std::move(a));
    return id.ok() ? *id : JobId(0);
  }
  std::vector<records::UsageRecord> Stored() { return *store_.ListUsage({}); }
};

TEST_F(AccountingTest, ARunThatEndsIsCountedOnceForItsRunningTime) {
  JobSpec spec = Batch(2, 1500);
  spec.owner = "ads-team";
  spec.name = "etl";
  spec.task.resources = Resources::Of(1500, 2 * kGi, 0, 0);
  JobId id = Start(spec);
  Actions c = Cycle();
  ASSERT_THAT(c.launches, SizeIs(2));
  now_ += absl::Seconds(5);  // launching is not counted
  for (const Launch& l : c.launches) Report(l, TaskState::kRunning);
  now_ += absl::Seconds(40);
  Actions ended = Report(c.launches[0], TaskState::kSucceeded, 0);
  ASSERT_THAT(ended.batch.add_usage, SizeIs(1));
  const records::UsageRecord& u = ended.batch.add_usage[0];
  EXPECT_EQ(u.pool, "/a");
  EXPECT_EQ(u.job, id);
  EXPECT_EQ(u.job_name, "etl");
  EXPECT_EQ(u.owner, "ads-team");
  EXPECT_EQ(u.user, "alice");
  EXPECT_EQ(u.cpu_milli_seconds, 1500 * 40);
  EXPECT_EQ(u.memory_byte_seconds, 2 * kGi * 40);
  EXPECT_EQ(u.tasks, 1);
  // A repeated report of the same end changes nothing and counts nothing.
  EXPECT_THAT(Report(c.launches[0], TaskState::kSucceeded, 0).batch.add_usage, SizeIs(0));
  // The other run is killed 20 s later: killed runs count up to their end.
  now_ += absl::Seconds(20);
  Actions kill;
  ASSERT_TRUE(core_->job_control().KillJob(id, now_, kill).ok());
  Commit(std::move(kill));
  EXPECT_THAT(Stored(), SizeIs(1));  // still running until its agent reports the kill
  now_ += absl::Seconds(2);
  Report(c.launches[1], TaskState::kKilled);
  auto rows = Stored();
  ASSERT_THAT(rows, SizeIs(1));  // the same hour, pool, job, owner and user
  EXPECT_EQ(rows[0].cpu_milli_seconds, 1500 * 40 + 1500 * 62);
  EXPECT_EQ(rows[0].tasks, 2);
}

TEST_F(AccountingTest, ARunThatFailsAndRestartsCountsEachRun) {
  JobSpec spec = Batch(1, 1000);
  spec.task.resources = Resources::Of(1000, 3 * kGi);
  spec.task.restart.policy = RestartPolicy::kOnFailure;
  spec.task.restart.max_failures = 3;
  JobId id = Start(spec);
  (void)id;
  Actions c = Cycle();
  ASSERT_THAT(c.launches, SizeIs(1));
  Report(c.launches[0], TaskState::kRunning);
  now_ += absl::Seconds(10);
  Actions failed = Report(c.launches[0], TaskState::kFailed, 3);
  ASSERT_THAT(failed.batch.add_usage, SizeIs(1));
  EXPECT_EQ(failed.batch.add_usage[0].memory_byte_seconds, 3 * kGi * 10);
  now_ += absl::Seconds(5);  // past the backoff
  Actions again = Cycle();
  ASSERT_THAT(again.launches, SizeIs(1));
  EXPECT_EQ(again.launches[0].run.run, 2u);
  Report(again.launches[0], TaskState::kRunning);
  now_ += absl::Seconds(30);
  Report(again.launches[0], TaskState::kSucceeded, 0);
  auto rows = Stored();
  ASSERT_THAT(rows, SizeIs(1));
  EXPECT_EQ(rows[0].cpu_milli_seconds, 1000 * 40);
  EXPECT_EQ(rows[0].memory_byte_seconds, 3 * kGi * 40);
  EXPECT_EQ(rows[0].tasks, 2);
}

TEST_F(AccountingTest, RunsKilledBeforeTheyRanAreNotCounted) {
  JobId id = Start(Batch(20, 1000));  // 8 fit: 12 stay pending
  Actions c = Cycle();
  ASSERT_THAT(c.launches, SizeIs(8));
  now_ += absl::Seconds(3);
  Actions kill;
  ASSERT_TRUE(core_->job_control().KillJob(id, now_, kill).ok());
  EXPECT_THAT(kill.batch.add_usage, SizeIs(0));  // pending runs end without usage
  Commit(std::move(kill));
  for (const Launch& l : c.launches) Report(l, TaskState::kKilled);  // never started RUNNING
  EXPECT_THAT(Stored(), SizeIs(0));
}

TEST_F(AccountingTest, ARunAcrossAnHourIsSplitAtTheHour) {
  now_ = absl::FromUnixSeconds(1'700'000'000 / 3600 * 3600 + 3600 - 100);
  Start(Batch(1, 2000));
  Actions c = Cycle();
  ASSERT_THAT(c.launches, SizeIs(1));
  Report(c.launches[0], TaskState::kRunning);
  now_ += absl::Seconds(300);
  Report(c.launches[0], TaskState::kLost);
  auto rows = Stored();
  ASSERT_THAT(rows, SizeIs(2));
  EXPECT_EQ(rows[0].cpu_milli_seconds, 2000 * 100);
  EXPECT_EQ(rows[0].tasks, 0);
  EXPECT_EQ(rows[1].cpu_milli_seconds, 2000 * 200);
  EXPECT_EQ(rows[1].tasks, 1);
  EXPECT_EQ(rows[1].hour - rows[0].hour, absl::Hours(1));
}

}  // namespace
}  // namespace paceline::scheduler
