#include "jobmgr/job_manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "jobmgr/restart_policy.h"
#include "jobmgr/test_util.h"

namespace paceline::jobmgr {
namespace {

using ::testing::HasSubstr;

JobSpec Batch(uint32_t instances) {
  JobSpec s;
  s.name = "batch";
  s.instances = instances;
  s.task.command = "true";
  s.task.resources = Resources::Of(100, int64_t{64} << 20);
  s.task.kill_grace = absl::Seconds(5);
  return s;
}

// Drives tasks through the happy path and keeps a MemoryStore in step with every Effects, as
// the master does (jobmgr/test_util.h).
class JobManagerTest : public JobManagerFixture {
 protected:
  void Exit(TaskId t, int code, const std::string& host = "h1") {
    Report(t, code == 0 ? TaskState::kSucceeded : TaskState::kFailed, code, host);
  }
};

TEST_F(JobManagerTest, CreateEnqueuesEveryInstanceAndPersistsTheJob) {
  Effects fx;
  auto id = jm_.CreateJob(Batch(3), "/pool", now_, fx);
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(fx.enqueue.size(), 3u);
  ASSERT_EQ(fx.batch.put_jobs.size(), 1u);
  EXPECT_EQ(fx.batch.put_jobs[0].id, *id);
  EXPECT_EQ(fx.batch.next_job_id, id->value() + 1);
  EXPECT_TRUE(fx.batch.put_tasks.empty()) << "no per-instance rows until tasks start";
  EXPECT_EQ(jm_.GetJob(*id)->state(), JobState::kPending);
}

TEST_F(JobManagerTest, JobsAreListedAndPagedInIdOrderWithoutDeletedOnes) {
  std::vector<JobId> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(Create(Batch(1)));
  Do([&](Effects& fx) { ASSERT_TRUE(jm_.KillJob(ids[2], now_, fx).ok()); });
  Do([&](Effects& fx) { ASSERT_TRUE(jm_.DeleteJob(ids[2], fx).ok()); });
  std::vector<JobId> listed;
  jm_.ForEachJobAfter(JobId(0), [&](const Job& j) {
    listed.push_back(j.id());
    return true;
  });
  EXPECT_EQ(listed, (std::vector<JobId>{ids[0], ids[1], ids[3], ids[4]}));
  // A page of two after the first job, stopped by the callback.
  std::vector<JobId> page;
  jm_.ForEachJobAfter(ids[0], [&](const Job& j) {
    page.push_back(j.id());
    return page.size() < 2;
  });
  EXPECT_EQ(page, (std::vector<JobId>{ids[1], ids[3]}));
  int after_last = 0;
  jm_.ForEachJobAfter(ids[4], [&](const Job&) { return ++after_last > 0; });
  EXPECT_EQ(after_last, 0);
}

TEST_F(JobManagerTest, HappyPathSucceedsWithEventsAndRelease) {
  JobId id = Create(Batch(2));
  for (uint32_t i = 0; i < 2; ++i) Start(TaskId{id, i});
  EXPECT_EQ(jm_.GetJob(id)->state(), JobState::kRunning);
  EXPECT_EQ(jm_.GetJob(id)->count(TaskState::kRunning), 2u);
  Exit(TaskId{id, 0}, 0);
  Effects fx = Do([&](Effects& fx) {
    jm_.OnStatus({RunId{TaskId{id, 1}, 1}, "h1", TaskState::kSucceeded, 0}, now_, fx);
  });
  EXPECT_EQ(fx.release.size(), 1u);
  EXPECT_EQ(jm_.GetJob(id)->state(), JobState::kSucceeded);
  auto events = store_.ListEvents(TaskId{id, 0}, 0);
  ASSERT_TRUE(events.ok());
  std::vector<TaskState> states;
  for (const auto& e : *events) states.push_back(e.state);
  EXPECT_EQ(states,
            (std::vector<TaskState>{TaskState::kReady, TaskState::kPlaced, TaskState::kLaunching,
                                    TaskState::kRunning, TaskState::kSucceeded}));
  EXPECT_EQ(events->back().host, "h1");
  EXPECT_EQ(events->back().reason, "EXITED_ZERO");
}

TEST_F(JobManagerTest, OnFailureRetriesWithBackoffThenFailsForGood) {
  JobSpec spec = Batch(1);
  spec.task.restart = {RestartPolicy::kOnFailure, 3, absl::Seconds(1), absl::Seconds(10)};
  JobId id = Create(spec);
  TaskId t{id, 0};
  for (int run = 1; run <= 4; ++run) {
    ASSERT_EQ(Run(t), static_cast<uint32_t>(run));
    Start(t);
    Exit(t, 1);
    if (run < 4) {
      EXPECT_EQ(State(t), TaskState::kPending);
      // Not enqueued before its backoff: 1s, 2s, 4s.
      Effects early = Do([&](Effects& fx) { jm_.Tick(now_, fx); });
      EXPECT_TRUE(early.enqueue.empty());
      now_ += Backoff(spec.task.restart, run);
      Effects due = Do([&](Effects& fx) { jm_.Tick(now_, fx); });
      ASSERT_EQ(due.enqueue.size(), 1u) << "run " << run;
    }
  }
  EXPECT_EQ(State(t), TaskState::kFailed);
  EXPECT_EQ(jm_.GetJob(id)->state(), JobState::kFailed);
  const TaskRuntime& rt = jm_.GetJob(id)->task(0);
  EXPECT_EQ(rt.exit_code, 1);
  EXPECT_EQ(rt.reason, TaskReason::kExitNonzero);
  EXPECT_EQ(rt.failures, 4u);
  auto events = store_.ListEvents(t, 1);
  ASSERT_EQ(events->size(), 1u);
  EXPECT_THAT(events->back().message,
              HasSubstr("no more restarts: 4 failed runs (max_failures 3)"));
}

TEST_F(JobManagerTest, EachRoleAndOverrideRestartsByItsOwnPolicy) {
  JobSpec spec = Batch(4);
  spec.roles = {RoleSpec{"launcher", 1, spec.task}, RoleSpec{"worker", 3, spec.task}};
  spec.roles[1].task.restart = {RestartPolicy::kOnFailure, 1, absl::Seconds(1), absl::Seconds(1)};
  spec.OverrideTask(3).restart = RestartSpec{};
  JobId id = Create(spec);
  TaskId launcher{id, 0}, worker{id, 1}, odd{id, 3};
  for (TaskId t : {launcher, worker, odd}) {
    Start(t);
    Exit(t, 1);
  }
  EXPECT_EQ(State(worker), TaskState::kPending) << "a worker restarts on failure";
  EXPECT_EQ(State(launcher), TaskState::kFailed) << "the launcher's policy is never";
  EXPECT_EQ(State(odd), TaskState::kFailed) << "instance 3's override: never";
}

TEST_F(JobManagerTest, KillJobKillsPendingAtOnceAndRunningWithGrace) {
  JobId id = Create(Batch(3));
  Start(TaskId{id, 0});
  Do([&](Effects& fx) { jm_.OnAdmitted(TaskId{id, 1}, now_, fx); });
  Effects fx = Do([&](Effects& fx) { ASSERT_TRUE(jm_.KillJob(id, now_, fx).ok()); });
  ASSERT_EQ(fx.kills.size(), 1u);
  EXPECT_EQ(fx.kills[0].run, (RunId{TaskId{id, 0}, 1}));
  EXPECT_EQ(fx.kills[0].grace, absl::Seconds(5));
  EXPECT_EQ(fx.kills[0].host, "h1");
  EXPECT_EQ(fx.withdraw.size(), 2u);
  EXPECT_EQ(fx.release.size(), 1u) << "the admitted-but-unplaced task gives back its admission";
  EXPECT_EQ(jm_.GetJob(id)->state(), JobState::kKilling);
  Do([&](Effects& fx) {
    jm_.OnStatus({RunId{TaskId{id, 0}, 1}, "h1", TaskState::kKilled, -1, 15}, now_, fx);
  });
  EXPECT_EQ(jm_.GetJob(id)->state(), JobState::kKilled);
  EXPECT_EQ(jm_.GetJob(id)->task(0).reason, TaskReason::kKilledByUser);
  EXPECT_EQ(jm_.KillJob(JobId(999), now_, fx).code(), absl::StatusCode::kNotFound);
}

// A kill sent while the agent was away is lost; when the agent reports the run as still
// running (it registers again with its runs), the kill is sent again.
TEST_F(JobManagerTest, ARunStillRunningAfterItsKillIsKilledAgain) {
  JobId id = Create(Batch(1));
  Start(TaskId{id, 0});
  Do([&](Effects& fx) { ASSERT_TRUE(jm_.KillJob(id, now_, fx).ok()); });
  Effects again = Do([&](Effects& fx) {
    jm_.OnStatus({RunId{TaskId{id, 0}, 1}, "h1", TaskState::kRunning}, now_, fx);
  });
  ASSERT_EQ(again.kills.size(), 1u);
  EXPECT_EQ(again.kills[0].run, (RunId{TaskId{id, 0}, 1}));
  EXPECT_EQ(again.kills[0].host, "h1");
  EXPECT_EQ(again.kills[0].grace, absl::Seconds(5));
  EXPECT_EQ(again.kills[0].reason, TaskReason::kKilledByUser);
  EXPECT_EQ(jm_.GetJob(id)->task(0).state, TaskState::kKilling);
}

TEST_F(JobManagerTest, MaxRunningTimeKillsWithDeadlineExceeded) {
  JobSpec spec = Batch(1);
  spec.sla.max_running_time = absl::Minutes(1);
  JobId id = Create(spec);
  Start(TaskId{id, 0});
  now_ += absl::Seconds(59);
  EXPECT_TRUE(Do([&](Effects& fx) { jm_.Tick(now_, fx); }).kills.empty());
  now_ += absl::Seconds(1);
  Effects fx = Do([&](Effects& fx) { jm_.Tick(now_, fx); });
  ASSERT_EQ(fx.kills.size(), 1u);
  EXPECT_EQ(fx.kills[0].reason, TaskReason::kDeadlineExceeded);
  Do([&](Effects& fx) {
    jm_.OnStatus({RunId{TaskId{id, 0}, 1}, "h1", TaskState::kKilled, -1, 9}, now_, fx);
  });
  EXPECT_EQ(State(TaskId{id, 0}), TaskState::kKilled);
  EXPECT_EQ(jm_.GetJob(id)->task(0).reason, TaskReason::kDeadlineExceeded);
}

TEST_F(JobManagerTest, HostLostMarksLostAndReruns) {
  JobId id = Create(Batch(2));
  Start(TaskId{id, 0}, "h1");
  Start(TaskId{id, 1}, "h2");
  Effects fx = Do([&](Effects& fx) { jm_.OnHostLost("h1", now_, fx); });
  EXPECT_EQ(fx.release, (std::vector<TaskId>{TaskId{id, 0}}));
  EXPECT_EQ(fx.enqueue, (std::vector<TaskId>{TaskId{id, 0}}));
  EXPECT_EQ(Run(TaskId{id, 0}), 2u);
  EXPECT_EQ(State(TaskId{id, 1}), TaskState::kRunning);
  auto events = store_.ListEvents(TaskId{id, 0}, 2);
  EXPECT_EQ((*events)[0].state, TaskState::kLost);
  EXPECT_EQ((*events)[0].reason, "HOST_LOST");
}

TEST_F(JobManagerTest, AReportFromAnOldRunIsKilledNotAdopted) {
  JobId id = Create(Batch(1));
  Start(TaskId{id, 0}, "h1");
  Do([&](Effects& fx) { jm_.OnHostLost("h1", now_, fx); });
  // h1 comes back and says run 1 still runs: the master owns run 2 now.
  Effects fx = Do([&](Effects& fx) {
    jm_.OnStatus({RunId{TaskId{id, 0}, 1}, "h1", TaskState::kRunning}, now_, fx);
  });
  ASSERT_EQ(fx.kills.size(), 1u);
  EXPECT_EQ(fx.kills[0].reason, TaskReason::kOrphaned);
  EXPECT_EQ(fx.kills[0].host, "h1");
  EXPECT_EQ(State(TaskId{id, 0}), TaskState::kPending);
}

TEST_F(JobManagerTest, AHostVouchesOnlyForItsOwnRuns) {
  JobId id = Create(Batch(1));
  const TaskId t{id, 0};
  Start(t, "h1");
  // h2 says h1's run ended, or that it runs it: neither is believed; h2's process is stopped.
  Effects ended = Do([&](Effects& fx) {
    jm_.OnStatus({RunId{t, Run(t)}, "h2", TaskState::kSucceeded, 0}, now_, fx);
  });
  EXPECT_TRUE(ended.kills.empty());
  EXPECT_EQ(State(t), TaskState::kRunning);
  Effects running = Do([&](Effects& fx) {
    jm_.OnStatus({RunId{t, Run(t)}, "h2", TaskState::kRunning}, now_, fx);
  });
  ASSERT_EQ(running.kills.size(), 1u);
  EXPECT_EQ(running.kills[0].host, "h2");
  EXPECT_EQ(running.kills[0].reason, TaskReason::kOrphaned);
  // h1's own report counts.
  Exit(t, 0, "h1");
  EXPECT_EQ(State(t), TaskState::kSucceeded);
}

TEST_F(JobManagerTest, PreemptedTaskComesBackAsANewRun) {
  JobId id = Create(Batch(1));
  TaskId t{id, 0};
  Start(t);
  Effects fx =
      Do([&](Effects& fx) { jm_.instances().Preempt(t, "pool /b reclaimed cpu", now_, fx); });
  ASSERT_EQ(fx.kills.size(), 1u);
  EXPECT_EQ(State(t), TaskState::kPreempting);
  Effects end = Do([&](Effects& fx) {
    jm_.OnStatus({RunId{t, 1}, "h1", TaskState::kKilled, -1, 15}, now_, fx);
  });
  EXPECT_EQ(end.enqueue, (std::vector<TaskId>{t}));
  EXPECT_EQ(Run(t), 2u);
  EXPECT_EQ(jm_.GetJob(id)->task(0).failures, 0u) << "preemption is not a failure";
}

TEST_F(JobManagerTest, RestoreRebuildsStateFromTheStore) {
  JobSpec spec = Batch(4);
  spec.task.restart = {RestartPolicy::kOnFailure, 2, absl::Seconds(30), absl::Minutes(5)};
  JobId id = Create(spec);
  Start(TaskId{id, 0});
  Start(TaskId{id, 1});
  Exit(TaskId{id, 1}, 0);
  Start(TaskId{id, 2});
  Exit(TaskId{id, 2}, 7);  // in backoff for 30 s
  auto contents = store_.Load();
  ASSERT_TRUE(contents.ok());
  JobManager restored;
  Effects fx;
  ASSERT_TRUE(restored.Restore(*contents, now_ + absl::Seconds(1), fx).ok());
  const Job* job = restored.GetJob(id);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->task(0).state, TaskState::kRunning);
  EXPECT_EQ(job->task(1).state, TaskState::kSucceeded);
  EXPECT_EQ(job->task(2).state, TaskState::kPending);
  EXPECT_EQ(job->task(2).run, 2u);
  EXPECT_EQ(job->task(3).state, TaskState::kPending);
  EXPECT_EQ(fx.enqueue, (std::vector<TaskId>{TaskId{id, 3}})) << "instance 2 is in backoff";
  Effects later;
  restored.Tick(now_ + absl::Seconds(30), later);
  EXPECT_EQ(later.enqueue, (std::vector<TaskId>{TaskId{id, 2}}));
  // New jobs never reuse an id.
  Effects create;
  auto next = restored.CreateJob(Batch(1), "/pool", now_, create);
  EXPECT_GT(next->value(), id.value());
}

// A streaming load hands the tasks over in batches, in any order: the same state comes back.
TEST_F(JobManagerTest, RestoreFromBatchesInAnyOrderEqualsRestoreFromTheWholeStore) {
  JobSpec spec = Batch(4);
  spec.task.restart = {RestartPolicy::kOnFailure, 2, absl::Seconds(30), absl::Minutes(5)};
  JobId a = Create(spec);
  JobId b = Create(Batch(3));
  Start(TaskId{a, 0});
  Start(TaskId{a, 2});
  Exit(TaskId{a, 2}, 7);  // in backoff
  Start(TaskId{b, 1});
  auto contents = store_.Load();
  ASSERT_TRUE(contents.ok());
  JobManager whole;
  Effects whole_fx;
  ASSERT_TRUE(whole.Restore(*contents, now_, whole_fx).ok());

  records::StoreContents head = *contents;
  head.tasks.clear();
  std::vector<std::vector<records::TaskRecord>> batches;  // one per task, the last job first
  for (auto it = contents->tasks.rbegin(); it != contents->tasks.rend(); ++it) {
    batches.push_back({*it});
  }
  JobManager streamed;
  Effects streamed_fx;
  ASSERT_TRUE(streamed
                  .Restore(head, now_, streamed_fx,
                           [&](const records::TaskBatchFn& take) -> absl::Status {
                             for (const auto& batch : batches) {
                               if (absl::Status s = take(batch); !s.ok()) return s;
                             }
                             return absl::OkStatus();
                           })
                  .ok());
  for (JobId id : {a, b}) {
    for (uint32_t i = 0; i < whole.GetJob(id)->instances(); ++i) {
      EXPECT_EQ(streamed.GetJob(id)->task(i).state, whole.GetJob(id)->task(i).state);
      EXPECT_EQ(streamed.GetJob(id)->task(i).run, whole.GetJob(id)->task(i).run);
      EXPECT_EQ(streamed.GetJob(id)->task(i).host, whole.GetJob(id)->task(i).host);
    }
  }
  EXPECT_EQ(streamed_fx.enqueue, whole_fx.enqueue);
  EXPECT_EQ(streamed.LiveRunsOnHost("h1"), whole.LiveRunsOnHost("h1"));

  // A batch's task of no stored job is lost data, and the source's error is the restore's.
  JobManager orphan;
  Effects orphan_fx;
  records::TaskRecord stray = contents->tasks.front();
  stray.id.job = JobId(999);
  absl::Status lost = orphan.Restore(
      head, now_, orphan_fx, [&](const records::TaskBatchFn& take) { return take({stray}); });
  EXPECT_EQ(lost.code(), absl::StatusCode::kDataLoss) << lost;
  JobManager failed;
  Effects failed_fx;
  absl::Status source = failed.Restore(head, now_, failed_fx, [](const records::TaskBatchFn&) {
    return absl::UnavailableError("the store went away");
  });
  EXPECT_EQ(source.code(), absl::StatusCode::kUnavailable) << source;
}

TEST_F(JobManagerTest, RestartKillsLiveRunsThenStartsNewOnesAndDeleteNeedsAnEndedJob) {
  JobId id = Create(Batch(3));
  Start(TaskId{id, 0});
  Start(TaskId{id, 1});
  Exit(TaskId{id, 1}, 0);
  Effects fx = Do([&](Effects& fx) {
    ASSERT_TRUE(jm_.instances().Restart(id, {0, 1}, now_, fx).ok());
  });
  ASSERT_EQ(fx.kills.size(), 1u) << "the live run is killed first";
  EXPECT_EQ(fx.enqueue, (std::vector<TaskId>{TaskId{id, 1}})) << "the ended run starts again";
  Effects ended = Do([&](Effects& fx) {
    jm_.OnStatus({RunId{TaskId{id, 0}, 1}, "h1", TaskState::kKilled, -1, 15}, now_, fx);
  });
  EXPECT_EQ(ended.enqueue, (std::vector<TaskId>{TaskId{id, 0}}));
  EXPECT_EQ(Run(TaskId{id, 0}), 2u);
  EXPECT_EQ(Run(TaskId{id, 1}), 2u);
  Effects bad;
  EXPECT_EQ(jm_.instances().Restart(id, {7}, now_, bad).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(bad.batch.empty()) << "a refused restart changes nothing";

  EXPECT_EQ(jm_.DeleteJob(id, bad).code(), absl::StatusCode::kFailedPrecondition);
  Do([&](Effects& fx) { ASSERT_TRUE(jm_.KillJob(id, now_, fx).ok()); });
  Effects del = Do([&](Effects& fx) { ASSERT_TRUE(jm_.DeleteJob(id, fx).ok()); });
  EXPECT_EQ(del.batch.delete_jobs, (std::vector<JobId>{id}));
  EXPECT_EQ(jm_.GetJob(id), nullptr);
  EXPECT_TRUE(store_.Load()->jobs.empty());
}

TEST_F(JobManagerTest, ARestartInFlightSurvivesAMasterRestart) {
  JobId id = Create(Batch(1));
  TaskId t{id, 0};
  Start(t);
  Do([&](Effects& fx) { ASSERT_TRUE(jm_.instances().Restart(id, {0}, now_, fx).ok()); });
  ASSERT_EQ(State(t), TaskState::kKilling);
  // The master dies now; a new one restores from the store, and the old run's end arrives.
  auto contents = store_.Load();
  ASSERT_TRUE(contents.ok());
  JobManager restored;
  Effects fx;
  ASSERT_TRUE(restored.Restore(*contents, now_, fx).ok());
  Effects ended;
  restored.OnStatus({RunId{t, 1}, "h1", TaskState::kKilled, -1, 15}, now_, ended);
  EXPECT_EQ(ended.enqueue, (std::vector<TaskId>{t})) << "the restart goes on";
  EXPECT_EQ(restored.GetJob(id)->task(0).run, 2u);
}

TEST_F(JobManagerTest, HealthChangesAreEventsCountsAndSurviveAMasterRestart) {
  JobSpec spec = Batch(2);
  spec.task.health = HealthSpec{CommandCheck{"true"}};
  JobId id = Create(spec);
  TaskId t{id, 0};
  Start(t);
  Start(TaskId{id, 1});
  const Job* job = jm_.GetJob(id);
  EXPECT_EQ(job->task(0).health, TaskHealth::kUnknown);
  EXPECT_EQ(job->health_count(TaskHealth::kUnknown), 2u);

  auto report = [&](TaskReason r) {
    return Do([&](Effects& fx) {
      jm_.OnStatus({RunId{t, 1}, "h1", TaskState::kRunning, -1, 0, r}, now_, fx);
    });
  };
  Effects healthy = report(TaskReason::kHealthy);
  EXPECT_EQ(State(t), TaskState::kRunning);
  EXPECT_EQ(job->task(0).health, TaskHealth::kHealthy);
  ASSERT_EQ(healthy.batch.events.size(), 1u);
  EXPECT_EQ(healthy.batch.events[0].state, TaskState::kRunning);
  EXPECT_EQ(healthy.batch.events[0].reason, "HEALTHY");
  EXPECT_TRUE(report(TaskReason::kHealthy).batch.events.empty()) << "a repeat changes nothing";
  Effects unhealthy = report(TaskReason::kUnhealthy);
  ASSERT_EQ(unhealthy.batch.events.size(), 1u);
  EXPECT_EQ(unhealthy.batch.events[0].reason, "UNHEALTHY");
  EXPECT_EQ(job->health_count(TaskHealth::kUnhealthy), 1u);
  EXPECT_EQ(job->health_count(TaskHealth::kUnknown), 1u);

  // A new master knows the health from the store.
  auto contents = store_.Load();
  ASSERT_TRUE(contents.ok());
  JobManager restored;
  Effects fx;
  ASSERT_TRUE(restored.Restore(*contents, now_, fx).ok());
  EXPECT_EQ(restored.GetJob(id)->task(0).health, TaskHealth::kUnhealthy);
  EXPECT_EQ(restored.GetJob(id)->task(1).health, TaskHealth::kUnknown);

  // A run that ended has no health.
  Exit(t, 0);
  EXPECT_EQ(job->task(0).health, TaskHealth::kNone);
  EXPECT_EQ(job->health_count(TaskHealth::kUnhealthy), 0u);
}

TEST_F(JobManagerTest, ATaskWithoutHealthCheckHasNoHealth) {
  JobId id = Create(Batch(1));
  Start(TaskId{id, 0});
  EXPECT_EQ(jm_.GetJob(id)->task(0).health, TaskHealth::kNone);
  EXPECT_EQ(TaskHealthName(TaskHealth::kNone), "");
}

TEST(RestartPolicy, BackoffDoublesAndCaps) {
  RestartSpec s{RestartPolicy::kAlways, 0, absl::Seconds(1), absl::Seconds(10)};
  EXPECT_EQ(Backoff(s, 0), absl::ZeroDuration());
  EXPECT_EQ(Backoff(s, 1), absl::Seconds(1));
  EXPECT_EQ(Backoff(s, 2), absl::Seconds(2));
  EXPECT_EQ(Backoff(s, 4), absl::Seconds(8));
  EXPECT_EQ(Backoff(s, 5), absl::Seconds(10));
  EXPECT_EQ(Backoff(s, 1000), absl::Seconds(10));
}

TEST(RestartPolicy, Decisions) {
  RestartSpec never;
  RestartSpec on_failure{RestartPolicy::kOnFailure, 1, absl::Seconds(1), absl::Seconds(10)};
  RestartSpec always{RestartPolicy::kAlways, 0, absl::Seconds(1), absl::Seconds(10)};
  EXPECT_FALSE(DecideRestart(never, TaskState::kFailed, 1, kT0).restart);
  EXPECT_TRUE(DecideRestart(never, TaskState::kLost, 0, kT0).restart);
  EXPECT_TRUE(DecideRestart(on_failure, TaskState::kFailed, 1, kT0).restart);
  EXPECT_FALSE(DecideRestart(on_failure, TaskState::kFailed, 2, kT0).restart);
  EXPECT_FALSE(DecideRestart(on_failure, TaskState::kSucceeded, 0, kT0).restart);
  EXPECT_TRUE(DecideRestart(always, TaskState::kSucceeded, 0, kT0).restart);
  EXPECT_EQ(DecideRestart(always, TaskState::kFailed, 3, kT0).not_before, kT0 + absl::Seconds(4));
}

}  // namespace
}  // namespace paceline::jobmgr
