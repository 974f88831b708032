// Rolling updates in the job manager, stepped by hand: instances are started and stopped as
// agents would report, and time moves only when the test says so.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "jobmgr/job_manager.h"
#include "jobmgr/test_util.h"
#include "jobmgr/update_plan.h"

namespace paceline::jobmgr {
namespace {

using records::UpdateState;

JobSpec Service(uint32_t instances, const std::string& command) {
  JobSpec s;
  s.name = "web";
  s.type = JobType::kService;
  s.instances = instances;
  s.task.command = command;
  s.task.resources = Resources::Of(100, int64_t{64} << 20);
  s.task.kill_grace = absl::Seconds(5);
  return s;
}

UpdateSpec Options(uint32_t batch, uint32_t max_failures = 0, bool rollback = false) {
  UpdateSpec o;
  o.batch_size = batch;
  o.max_failures = max_failures;
  o.rollback_on_failure = rollback;
  o.min_healthy_time = absl::Seconds(10);
  return o;
}

class UpdateTest : public JobManagerFixture {
 protected:
  JobId CreateRunning(const JobSpec& spec) {
    JobId id = Create(spec);
    for (uint32_t i = 0; i < spec.instances; ++i) Start(TaskId{id, i});
    return id;
  }
  void End(TaskId t, TaskState state, int code = 0) { Report(t, state, code); }
  // Every instance that was asked to stop for the update stops, and every new run starts.
  void Cycle(JobId id) {
    const Job* job = jm_.GetJob(id);
    for (uint32_t i = 0; i < job->instances(); ++i) {
      if (T(id, i).state == TaskState::kKilling) End(TaskId{id, i}, TaskState::kKilled);
    }
    for (uint32_t i = 0; i < job->instances(); ++i) {
      if (T(id, i).state == TaskState::kPending && T(id, i).not_before <= now_) {
        Start(TaskId{id, i});
      }
    }
  }
  void Tick(absl::Duration d) {
    now_ += d;
    Do([&](Effects& fx) { jm_.Tick(now_, fx); });
  }
  const records::UpdateRecord& Last(JobId id) { return jm_.GetJob(id)->updates().back(); }
  uint32_t Unavailable(JobId id) {
    uint32_t n = 0;
    const Job* job = jm_.GetJob(id);
    for (uint32_t i = 0; i < job->instances(); ++i) n += T(id, i).state != TaskState::kRunning;
    return n;
  }
  absl::StatusOr<uint64_t> Update(JobId id, JobSpec spec, UpdateSpec options, uint64_t version = 0,
                                  bool override_active = false) {
    absl::StatusOr<uint64_t> r;
    uint64_t v = version != 0 ? version : jm_.GetJob(id)->version();
    Do([&](Effects& fx) {
      r = jm_.updates().Start(id, {std::move(spec), v, options, false, override_active}, now_, fx);
    });
    return r;
  }
};

TEST_F(UpdateTest, RollsInBatchesAndNeverTakesDownMoreThanTheBatch) {
  JobId id = CreateRunning(Service(5, "v1"));
  ASSERT_TRUE(Update(id, Service(5, "v2"), Options(2)).ok());
  EXPECT_EQ(jm_.GetJob(id)->version(), 2u);
  for (int step = 0; step < 20 && records::IsActive(Last(id).state); ++step) {
    EXPECT_LE(Unavailable(id), 2u)
        << "step " << step << ": " << records::ProgressCodes(Last(id).progress);
    Cycle(id);
    Tick(absl::Seconds(11));
  }
  EXPECT_EQ(Last(id).state, UpdateState::kSucceeded) << records::ProgressCodes(Last(id).progress);
  for (uint32_t i = 0; i < 5; ++i) {
    EXPECT_EQ(T(id, i).spec_version, 2u);
    EXPECT_EQ(jm_.GetJob(id)->TaskFor(i)->command, "v2");
    EXPECT_EQ(T(id, i).run, 2u);
  }
}

TEST_F(UpdateTest, TooManyFailuresRollBackToTheOldSpec) {
  JobId id = CreateRunning(Service(4, "good"));
  ASSERT_TRUE(Update(id, Service(4, "bad"), Options(2, /*max_failures=*/1, true)).ok());
  Cycle(id);                                  // the first two stop, and their new runs start ...
  End(TaskId{id, 0}, TaskState::kFailed, 1);  // ... and exit at once
  End(TaskId{id, 1}, TaskState::kFailed, 1);
  Tick(absl::Seconds(1));
  EXPECT_EQ(Last(id).state, UpdateState::kRollingBack);
  EXPECT_THAT(Last(id).message, ::testing::HasSubstr("2 instances failed on version 2"));
  EXPECT_EQ(jm_.GetJob(id)->version(), 3u);
  for (int step = 0; step < 20 && records::IsActive(Last(id).state); ++step) {
    Cycle(id);
    Tick(absl::Seconds(11));
  }
  EXPECT_EQ(Last(id).state, UpdateState::kRolledBack) << records::ProgressCodes(Last(id).progress);
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(jm_.GetJob(id)->TaskFor(i)->command, "good") << i;
    EXPECT_EQ(T(id, i).state, TaskState::kRunning) << i;
  }
  EXPECT_EQ(T(id, 3).run, 1u) << "instances the update never touched keep running";
}

TEST_F(UpdateTest, StaleVersionsAndConcurrentUpdatesAreRefused) {
  JobId id = CreateRunning(Service(2, "v1"));
  auto stale = Update(id, Service(2, "v2"), Options(1), /*version=*/7);
  EXPECT_EQ(stale.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(stale.status().message(), ::testing::HasSubstr("is at version 1"));
  ASSERT_TRUE(Update(id, Service(2, "v2"), Options(1)).ok());
  auto second = Update(id, Service(2, "v3"), Options(1));
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  JobSpec batch = Service(2, "v3");
  batch.type = JobType::kBatch;
  EXPECT_EQ(Update(id, batch, Options(1), 0, true).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto over = Update(id, Service(2, "v3"), Options(1), 0, /*override_active=*/true);
  ASSERT_TRUE(over.ok());
  EXPECT_EQ(jm_.GetJob(id)->updates()[0].state, UpdateState::kAborted);
  EXPECT_EQ(Last(id).to_version, 3u);
}

TEST_F(UpdateTest, PauseStopsProgressAndResumeFinishes) {
  JobId id = CreateRunning(Service(3, "v1"));
  ASSERT_TRUE(Update(id, Service(3, "v2"), Options(1)).ok());
  Do([&](Effects& fx) { ASSERT_TRUE(jm_.updates().Pause(id, true, now_, fx).ok()); });
  for (int step = 0; step < 5; ++step) {
    Cycle(id);
    Tick(absl::Seconds(11));
  }
  EXPECT_EQ(records::ProgressCodes(Last(id).progress), "D..")
      << "the one in flight finished; nothing new started";
  Do([&](Effects& fx) { ASSERT_TRUE(jm_.updates().Pause(id, false, now_, fx).ok()); });
  for (int step = 0; step < 10 && records::IsActive(Last(id).state); ++step) {
    Cycle(id);
    Tick(absl::Seconds(11));
  }
  EXPECT_EQ(Last(id).state, UpdateState::kSucceeded);
}

TEST_F(UpdateTest, ScalingUpAndDownAndTheDryRunPlan) {
  JobId id = CreateRunning(Service(4, "v1"));
  JobSpec bigger = Service(6, "v1");
  bigger.OverrideTask(1).command = "special";
  UpdatePlan plan = PlanUpdate(*jm_.GetJob(id), bigger);
  EXPECT_EQ(plan.updated, (std::vector<uint32_t>{1}));
  EXPECT_EQ(plan.added, (std::vector<uint32_t>{4, 5}));
  EXPECT_EQ(plan.unchanged, (std::vector<uint32_t>{0, 2, 3}));
  EXPECT_TRUE(plan.removed.empty());
  ASSERT_TRUE(Update(id, bigger, Options(3)).ok());
  for (int step = 0; step < 10 && records::IsActive(Last(id).state); ++step) {
    Cycle(id);
    Tick(absl::Seconds(11));
  }
  ASSERT_EQ(Last(id).state, UpdateState::kSucceeded);
  EXPECT_EQ(jm_.GetJob(id)->instances(), 6u);
  EXPECT_EQ(T(id, 0).run, 1u) << "unchanged instances are not restarted";

  ASSERT_TRUE(Update(id, Service(2, "v1"), Options(2)).ok());
  for (int step = 0; step < 10 && records::IsActive(Last(id).state); ++step) {
    Cycle(id);
    Tick(absl::Seconds(11));
  }
  ASSERT_EQ(Last(id).state, UpdateState::kSucceeded) << records::ProgressCodes(Last(id).progress);
  EXPECT_EQ(jm_.GetJob(id)->instances(), 2u) << "the highest ids were removed";
  // The removed instances' records stay in the store, ended, with their last runs.
  auto stored = store_.Load();
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->tasks.size(), 6u);
  for (const auto& t : stored->tasks) {
    if (t.id.instance >= 2) {
      EXPECT_TRUE(IsTerminal(t.state)) << t.id.ToString();
    }
  }
}

// An instance removed by a scale-down and added back by a scale-up continues its run numbers,
// also across a restart of the master: a run's number never names two runs (an agent that kept
// the earlier run's sandbox would refuse the launch, and the audit and logs would mix them).
TEST_F(UpdateTest, AnInstanceAddedBackContinuesItsRunNumbers) {
  JobId id = CreateRunning(Service(3, "v1"));
  auto scale = [&](JobManager& jm, uint32_t n) {
    absl::StatusOr<uint64_t> r;
    Do([&](Effects& fx) {
      r = jm.updates().Start(
          id, {Service(n, "v1"), jm.GetJob(id)->version(), Options(3), false, false}, now_, fx);
    });
    ASSERT_TRUE(r.ok()) << r.status();
    for (int step = 0; step < 10 && records::IsActive(jm.GetJob(id)->updates().back().state);
         ++step) {
      Cycle(id);
      Tick(absl::Seconds(11));
    }
  };
  Report(TaskId{id, 2}, TaskState::kFailed, 1);  // instance 2's second run
  Cycle(id);
  ASSERT_EQ(T(id, 2).run, 2u);
  scale(jm_, 1);
  ASSERT_EQ(jm_.GetJob(id)->instances(), 1u);
  scale(jm_, 3);
  ASSERT_EQ(jm_.GetJob(id)->instances(), 3u);
  EXPECT_EQ(T(id, 1).run, 2u);
  EXPECT_EQ(T(id, 2).run, 3u);

  // Down again, then a new master from the store, then up: the numbers go on.
  scale(jm_, 1);
  auto contents = store_.Load();
  ASSERT_TRUE(contents.ok());
  JobManager restored;
  Effects fx;
  ASSERT_TRUE(restored.Restore(*contents, now_, fx).ok());
  EXPECT_EQ(restored.GetJob(id)->instances(), 1u);
  Effects grow;
  auto r = restored.updates().Start(
      id, {Service(3, "v1"), restored.GetJob(id)->version(), Options(3), false, false}, now_, grow);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(restored.GetJob(id)->instances(), 3u);
  EXPECT_EQ(restored.GetJob(id)->task(1).run, 3u);
  EXPECT_EQ(restored.GetJob(id)->task(2).run, 4u);
}

TEST_F(UpdateTest, AnUpdateInFlightSurvivesAMasterRestart) {
  JobId id = CreateRunning(Service(3, "v1"));
  ASSERT_TRUE(Update(id, Service(3, "v2"), Options(1)).ok());
  auto contents = store_.Load();
  ASSERT_TRUE(contents.ok());
  JobManager restored;
  Effects fx;
  ASSERT_TRUE(restored.Restore(*contents, now_, fx).ok());
  const Job* job = restored.GetJob(id);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->version(), 2u);
  EXPECT_EQ(records::ProgressCodes(job->updates().back().progress), ">..");
  EXPECT_EQ(job->task(0).next_spec_version, 2u);
  EXPECT_EQ(job->task(0).state, TaskState::kKilling);
  EXPECT_EQ(job->TaskFor(1)->command, "v1") << "not updated yet: still the old version";
}

TEST_F(UpdateTest, RollbackToAnEarlierVersion) {
  JobId id = CreateRunning(Service(2, "v1"));
  ASSERT_TRUE(Update(id, Service(2, "v2"), Options(2)).ok());
  for (int step = 0; step < 10 && records::IsActive(Last(id).state); ++step) {
    Cycle(id);
    Tick(absl::Seconds(11));
  }
  absl::StatusOr<uint64_t> r;
  Do([&](Effects& fx) { r = jm_.updates().Rollback(id, 0, Options(2), now_, fx); });
  ASSERT_TRUE(r.ok()) << r.status();
  for (int step = 0; step < 10 && records::IsActive(Last(id).state); ++step) {
    Cycle(id);
    Tick(absl::Seconds(11));
  }
  EXPECT_EQ(jm_.GetJob(id)->version(), 3u);
  EXPECT_EQ(jm_.GetJob(id)->TaskFor(0)->command, "v1");
  Effects bad;
  EXPECT_EQ(jm_.updates().Rollback(id, 42, Options(1), now_, bad).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace paceline::jobmgr
