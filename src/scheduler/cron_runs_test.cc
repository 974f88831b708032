// CronRuns in the scheduler core under a simulated clock: the template never runs, runs are
// made at the ticks with their names and labels, forbid and replace, the keep limits, the newest
// run kept, a master restarted exactly at a tick (the tick runs once, whether or not the run
// was committed), the clock going back, suspend and schedule changes by update, deletion.

#include "scheduler/cron_runs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/scheduler_core.h"
#include "scheduler/test_util.h"
#include "spec/schedule_spec.h"

namespace paceline::scheduler {
namespace {

using testing::Batch;
using ::testing::HasSubstr;
using testing::Host;
using ::testing::IsEmpty;
using testing::Pool;

// 2023-11-14 22:13:20 UTC; the test moves to the next whole minute first.
class CronRunsTest : public testing::CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    now_ = absl::FromUnixSeconds(absl::ToUnixSeconds(now_) / 60 * 60 + 60);  // hh:mm:00
    Actions a;
    ASSERT_TRUE(core_->pools().CreatePool("/batch", Pool(64'000), a).ok());
    ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 32), {}, now_, a).ok());
    Commit(std::move(a));
  }

  JobSpec Cron(const std::string& expr, ConcurrencyPolicy p = ConcurrencyPolicy::kAllow) {
    JobSpec s = Batch(1);
    s.name = "report";
    s.schedule = ScheduleSpec{.cron = expr, .concurrency = p};
    return s;
  }

  JobId Create(const JobSpec& spec) {
    Actions a;
    absl::StatusOr<JobId> id = core_->job_control().CreateJob(spec, "/batch", now_, a);
    EXPECT_TRUE(id.ok()) << id.status();
    Commit(std::move(a));
    return id.value_or(JobId(0));
  }

  // Moves the clock by `d` and runs a cycle, keeping the host alive.
  Actions Advance(absl::Duration d) {
    now_ += d;
    core_->agents().Heartbeat("h1", now_);
    return Cycle();
  }

  // The runs of cron job `id`, by id.
  std::vector<const jobmgr::Job*> Runs(JobId id) {
    std::vector<const jobmgr::Job*> out;
    core_->jobs().ForEachJobAfter(JobId(0), [&](const jobmgr::Job& job) {
      auto l = job.spec().labels.find(std::string(kCronJobLabel));
      if (l != job.spec().labels.end() && l->second == absl::StrCat(id.value())) {
        out.push_back(&job);
      }
      return true;
    });
    return out;
  }

  void Finish(const Launch& l, TaskState end = TaskState::kSucceeded) {
    Report(l, TaskState::kRunning);
    Report(l, end, end == TaskState::kSucceeded ? 0 : 1);
  }
};

TEST_F(CronRunsTest, TheTemplateNeverRunsAndEachTickMakesARun) {
  JobId cron = Create(Cron("*/2 * * * * *"));
  EXPECT_THAT(Advance(absl::Seconds(1)).launches, IsEmpty());
  EXPECT_EQ(core_->jobs().GetJob(cron)->state(), JobState::kPending);
  EXPECT_THAT(core_->WhyPending(TaskId{cron, 0}), HasSubstr("a cron job: its runs are jobs"));
  Actions a = Advance(absl::Seconds(1));  // hh:mm:02
  ASSERT_EQ(a.launches.size(), 1u);
  std::vector<const jobmgr::Job*> runs = Runs(cron);
  ASSERT_EQ(runs.size(), 1u);
  const jobmgr::Job& run = *runs[0];
  EXPECT_EQ(a.launches[0].run.task.job, run.id());
  EXPECT_EQ(run.spec().name, RunName("report", now_, absl::UTCTimeZone(), /*with_seconds=*/true));
  EXPECT_FALSE(run.spec().schedule.has_value());
  EXPECT_EQ(run.spec().labels.at(std::string(kCronTickLabel)),
            absl::StrCat(absl::ToUnixSeconds(now_)));
  EXPECT_EQ(run.pool(), "/batch");
  EXPECT_THAT(core_->WhyPending(TaskId{cron, 0}), HasSubstr("created run"));
  // Durable: the run's record is in the batch the master commits before launching.
  EXPECT_TRUE(store_.Load()->jobs.size() == 2);
  // Allow: the next ticks make more runs while the first still runs.
  Advance(absl::Seconds(2));
  Advance(absl::Seconds(2));
  EXPECT_EQ(Runs(cron).size(), 3u);
  EXPECT_EQ(core_->jobs().GetJob(cron)->state(), JobState::kPending);
}

TEST_F(CronRunsTest, ForbidSkipsTicksWhileARunIsLive) {
  JobId cron = Create(Cron("*/2 * * * * *", ConcurrencyPolicy::kForbid));
  Actions a = Advance(absl::Seconds(2));
  ASSERT_EQ(a.launches.size(), 1u);
  Report(a.launches[0], TaskState::kRunning);
  for (int i = 0; i < 3; ++i) EXPECT_THAT(Advance(absl::Seconds(2)).launches, IsEmpty());
  EXPECT_EQ(Runs(cron).size(), 1u);
  EXPECT_THAT(core_->WhyPending(TaskId{cron, 0}), HasSubstr("is still live (concurrency: forbid)"));
  Report(a.launches[0], TaskState::kSucceeded, 0);
  EXPECT_EQ(Advance(absl::Seconds(2)).launches.size(), 1u);
  EXPECT_EQ(Runs(cron).size(), 2u);
}

TEST_F(CronRunsTest, ReplaceKillsTheLiveRun) {
  JobId cron = Create(Cron("*/2 * * * * *", ConcurrencyPolicy::kReplace));
  Actions a = Advance(absl::Seconds(2));
  ASSERT_EQ(a.launches.size(), 1u);
  Report(a.launches[0], TaskState::kRunning);
  Actions b = Advance(absl::Seconds(2));
  ASSERT_EQ(b.kills.size(), 1u);
  EXPECT_EQ(b.kills[0].run, a.launches[0].run);
  ASSERT_EQ(b.launches.size(), 1u);
  EXPECT_NE(b.launches[0].run.task.job, a.launches[0].run.task.job);
  EXPECT_EQ(core_->jobs().GetJob(a.launches[0].run.task.job)->goal(), records::JobGoal::kKill);
  EXPECT_EQ(Runs(cron).size(), 2u);
}

TEST_F(CronRunsTest, KeepLimitsPurgeFinishedRunsButNeverTheNewest) {
  JobSpec spec = Cron("*/2 * * * * *");
  spec.schedule->keep_succeeded = 1;
  spec.schedule->keep_failed = 0;
  JobId cron = Create(spec);
  for (int i = 0; i < 4; ++i) {
    Actions a = Advance(absl::Seconds(2));
    ASSERT_EQ(a.launches.size(), 1u);
    Finish(a.launches[0], i == 3 ? TaskState::kFailed : TaskState::kSucceeded);
  }
  Advance(absl::Milliseconds(500));  // the purge of the cycle after the ends
  std::vector<const jobmgr::Job*> runs = Runs(cron);
  // Kept: the newest succeeded one, and the newest run (failed, though keep_failed is 0).
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0]->state(), JobState::kSucceeded);
  EXPECT_EQ(runs[1]->state(), JobState::kFailed);
  EXPECT_EQ(store_.Load()->jobs.size(), 3u);
  // The newest run may not be deleted by hand; the older one may.
  Actions a;
  absl::Status s = core_->job_control().DeleteJob(runs[1]->id(), a);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("newest run of its cron job"));
  EXPECT_TRUE(core_->job_control().DeleteJob(runs[0]->id(), a).ok());
}

TEST_F(CronRunsTest, AMasterKilledAtATickRunsItOnce) {
  JobId cron = Create(Cron("*/2 * * * * *"));
  // The run of the first tick was committed, then the master died: its successor sees it.
  Advance(absl::Seconds(2));
  ASSERT_EQ(Runs(cron).size(), 1u);
  Restart();
  Actions refused;
  EXPECT_EQ(core_->job_control().DeleteJob(Runs(cron)[0]->id(), refused).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Advance(absl::Milliseconds(100)).launches, IsEmpty());
  EXPECT_EQ(Runs(cron).size(), 1u);
  // The next tick's run was decided but never committed (the master died first): the
  // successor creates it, once.
  now_ += absl::Seconds(2);
  core_->agents().Heartbeat("h1", now_);
  Actions lost;
  core_->RunCycle(now_, lost);  // not committed
  ASSERT_EQ(Runs(cron).size(), 2u);
  Restart();
  EXPECT_EQ(Runs(cron).size(), 1u);
  Advance(absl::Milliseconds(100));
  Advance(absl::Milliseconds(100));
  std::vector<const jobmgr::Job*> runs = Runs(cron);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_NE(runs[0]->spec().name, runs[1]->spec().name);
  EXPECT_EQ(runs[1]->spec().labels.at(std::string(kCronTickLabel)),
            absl::StrCat(absl::ToUnixSeconds(now_ - absl::Milliseconds(200))));
}

TEST_F(CronRunsTest, TheClockGoingBackRunsNothingTwice) {
  JobId cron = Create(Cron("*/2 * * * * *"));
  Advance(absl::Seconds(2));
  Advance(absl::Seconds(2));
  ASSERT_EQ(Runs(cron).size(), 2u);
  absl::Time latest = now_;
  // Back by a minute, then forward again, on this master and on a restarted one.
  Advance(-absl::Minutes(1));
  EXPECT_EQ(Runs(cron).size(), 2u);
  Restart();
  for (; now_ <= latest; now_ += absl::Seconds(1)) {
    core_->agents().Heartbeat("h1", now_);
    Cycle();
  }
  EXPECT_EQ(Runs(cron).size(), 2u);
  now_ = latest + absl::Seconds(2);
  core_->agents().Heartbeat("h1", now_);
  Cycle();
  EXPECT_EQ(Runs(cron).size(), 3u);
}

TEST_F(CronRunsTest, AForwardJumpGivesOneLateRunWithinTheDeadline) {
  JobSpec spec = Cron("*/2 * * * * *");
  JobId cron = Create(spec);
  Advance(absl::Minutes(10) + absl::Seconds(1));  // 300 ticks missed: one run, the latest
  ASSERT_EQ(Runs(cron).size(), 1u);
  EXPECT_EQ(Runs(cron)[0]->spec().labels.at(std::string(kCronTickLabel)),
            absl::StrCat(absl::ToUnixSeconds(now_ - absl::Seconds(1))));
  spec.name = "deadline";
  spec.schedule->starting_deadline = absl::Seconds(1);
  JobId late = Create(spec);
  Advance(absl::Minutes(10) + absl::Seconds(2.5));  // the latest tick is 1.5 s late: skipped
  EXPECT_THAT(Runs(late), IsEmpty());
  EXPECT_THAT(core_->WhyPending(TaskId{late, 0}), HasSubstr("past the starting deadline of 1s"));
  EXPECT_EQ(Runs(cron).size(), 2u);  // no deadline: one more late run
}

TEST_F(CronRunsTest, SuspendAndScheduleChangesByUpdate) {
  JobSpec spec = Cron("*/2 * * * * *");
  JobId cron = Create(spec);
  auto update = [&](const JobSpec& s) {
    Actions a;
    jobmgr::UpdateRequest req{s, core_->jobs().GetJob(cron)->version(), UpdateSpec{}};
    absl::StatusOr<uint64_t> r = core_->job_control().UpdateJob(cron, std::move(req), now_, a);
    Commit(std::move(a));
    return r.status();
  };
  spec.schedule->suspend = true;
  ASSERT_TRUE(update(spec).ok());
  Advance(absl::Seconds(2));
  Advance(absl::Seconds(2));
  EXPECT_THAT(Runs(cron), IsEmpty());
  EXPECT_THAT(core_->WhyPending(TaskId{cron, 0}), HasSubstr("suspended"));
  spec.schedule->suspend = false;
  ASSERT_TRUE(update(spec).ok());
  EXPECT_THAT(Advance(absl::Milliseconds(100)).launches, IsEmpty());  // no late run for those
  EXPECT_EQ(Advance(absl::Seconds(2)).launches.size(), 1u);
  EXPECT_EQ(core_->jobs().GetJob(cron)->state(), JobState::kPending);
  // A job does not become, or stop being, a cron job by an update.
  JobSpec plain = spec;
  plain.schedule.reset();
  absl::Status s = update(plain);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("schedule: a job is a cron job or not from its creation"));
}

TEST_F(CronRunsTest, DeletingTheCronJobDeletesItsFinishedRuns) {
  JobId cron = Create(Cron("*/2 * * * * *"));
  Actions first = Advance(absl::Seconds(2));
  Actions second = Advance(absl::Seconds(2));
  ASSERT_EQ(first.launches.size(), 1u);
  ASSERT_EQ(second.launches.size(), 1u);
  Finish(first.launches[0]);
  Report(second.launches[0], TaskState::kRunning);
  Actions a;
  ASSERT_TRUE(core_->job_control().KillJob(cron, now_, a).ok());
  Commit(std::move(a));
  EXPECT_EQ(Advance(absl::Seconds(2)).launches.size(), 0u);  // killed: no more runs
  Actions d;
  ASSERT_TRUE(core_->job_control().DeleteJob(cron, d).ok());
  Commit(std::move(d));
  Advance(absl::Milliseconds(100));
  EXPECT_EQ(core_->jobs().GetJob(first.launches[0].run.task.job), nullptr);
  ASSERT_NE(core_->jobs().GetJob(second.launches[0].run.task.job), nullptr);  // still live
  Report(second.launches[0], TaskState::kSucceeded, 0);
  Advance(absl::Milliseconds(100));
  EXPECT_EQ(core_->jobs().GetJob(second.launches[0].run.task.job), nullptr);
  EXPECT_EQ(store_.Load()->jobs.size(), 0u);
}

}  // namespace
}  // namespace paceline::scheduler
