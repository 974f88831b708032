// Readiness (task.readiness) and the deregistration delay in the job manager: which runs serve,
// what a stop of each sends, and what a restarted master knows.

#include "jobmgr/serving.h"

#include <gtest/gtest.h>

#include "jobmgr/job_manager.h"
#include "jobmgr/test_util.h"

namespace paceline::jobmgr {
namespace {

JobSpec Service(uint32_t instances) {
  JobSpec s;
  s.name = "web";
  s.type = JobType::kService;
  s.instances = instances;
  s.task.command = "./serve";
  s.task.resources = Resources::Of(100, int64_t{64} << 20);
  s.task.ports = {"http"};
  s.task.kill_grace = absl::Seconds(5);
  s.task.health = HealthSpec{TcpCheck{"http"}};
  s.task.readiness = HealthSpec{HttpCheck{"http", "/ready"}};
  s.task.deregistration_delay = absl::Seconds(4);
  return s;
}

class ServingTest : public JobManagerFixture {
 protected:
  Effects Check(TaskId t, TaskReason r) {
    return Do([&](Effects& fx) {
      jm_.OnStatus({RunId{t, Run(t)}, "h1", TaskState::kRunning, -1, 0, r}, now_, fx);
    });
  }
  const TaskRuntime& Task(TaskId t) { return jm_.GetJob(t.job)->task(t.instance); }
};

TEST_F(ServingTest, ARunServesOnlyOnceHealthyAndReadyAndReadinessNeverStopsIt) {
  JobId id = Create(Service(1));
  TaskId t{id, 0};
  Start(t);
  EXPECT_EQ(Task(t).readiness, TaskReadiness::kUnknown);
  EXPECT_EQ(ServingOf(Task(t)), NotServing::kHealthUnknown);
  Check(t, TaskReason::kHealthy);
  EXPECT_EQ(ServingOf(Task(t)), NotServing::kReadinessUnknown);
  EXPECT_EQ(NotServingText(ServingOf(Task(t))), "readiness check not passed yet");
  Effects ready = Check(t, TaskReason::kReady);
  EXPECT_TRUE(Serving(Task(t)));
  ASSERT_EQ(ready.batch.events.size(), 1u);
  EXPECT_EQ(ready.batch.events[0].reason, "READY");
  ASSERT_EQ(ready.batch.put_tasks.size(), 1u);
  EXPECT_EQ(ready.batch.put_tasks[0].readiness, "READY");
  EXPECT_EQ(ready.batch.put_tasks[0].health, "HEALTHY");
  EXPECT_TRUE(Check(t, TaskReason::kReady).batch.events.empty()) << "a repeat changes nothing";

  Effects not_ready = Check(t, TaskReason::kNotReady);
  EXPECT_EQ(ServingOf(Task(t)), NotServing::kNotReady);
  EXPECT_TRUE(not_ready.kills.empty()) << "readiness gates traffic; it never stops the run";
  EXPECT_EQ(Task(t).state, TaskState::kRunning);
  EXPECT_EQ(Run(t), 1u);
  Check(t, TaskReason::kReady);
  EXPECT_TRUE(Serving(Task(t)));
}

TEST_F(ServingTest, AStopOfAServingRunWaitsItsDeregistrationDelayAndOthersStopAtOnce) {
  JobId id = Create(Service(3));
  for (uint32_t i = 0; i < 3; ++i) Start(TaskId{id, i});
  Check(TaskId{id, 0}, TaskReason::kHealthy);
  Check(TaskId{id, 0}, TaskReason::kReady);    // serves
  Check(TaskId{id, 1}, TaskReason::kHealthy);  // healthy but not ready yet

  Effects preempt = Do([&](Effects& fx) {
    jm_.instances().Preempt(TaskId{id, 0}, "pool /b reclaimed cpu", now_, fx);
  });
  ASSERT_EQ(preempt.kills.size(), 1u);
  EXPECT_EQ(preempt.kills[0].deregistration_delay, absl::Seconds(4));
  EXPECT_EQ(Task(TaskId{id, 0}).state, TaskState::kPreempting);
  EXPECT_FALSE(Serving(Task(TaskId{id, 0}))) << "it leaves the endpoints at once";
  EXPECT_EQ(Task(TaskId{id, 0}).readiness, TaskReadiness::kNone);

  Effects kill = Do([&](Effects& fx) { ASSERT_TRUE(jm_.KillJob(id, now_, fx).ok()); });
  ASSERT_EQ(kill.kills.size(), 3u);
  for (const KillCommand& k : kill.kills) {
    // Instance 1 took no traffic and 2 never served: they stop at once. Instance 0 is already
    // out of the endpoints (the agent ignores a second kill of a run it is stopping).
    EXPECT_EQ(k.deregistration_delay, absl::ZeroDuration()) << "instance " << k.run.task.instance;
    EXPECT_EQ(k.grace, absl::Seconds(5));
  }
}

TEST_F(ServingTest, TheDefaultDelayIsAServicesAndABatchJobHasNone) {
  JobSpec spec = Service(1);
  spec.task.deregistration_delay.reset();
  spec.task.readiness.reset();
  spec.task.health.reset();
  JobId id = Create(spec);
  Start(TaskId{id, 0});
  EXPECT_TRUE(Serving(Task(TaskId{id, 0}))) << "without checks a running run serves";
  Effects kill = Do([&](Effects& fx) { ASSERT_TRUE(jm_.KillJob(id, now_, fx).ok()); });
  ASSERT_EQ(kill.kills.size(), 1u);
  EXPECT_EQ(kill.kills[0].deregistration_delay, kDefaultDeregistrationDelay);

  JobSpec batch = spec;
  batch.type = JobType::kBatch;
  JobId b = Create(batch);
  Start(TaskId{b, 0});
  Effects stop = Do([&](Effects& fx) { ASSERT_TRUE(jm_.KillJob(b, now_, fx).ok()); });
  ASSERT_EQ(stop.kills.size(), 1u);
  EXPECT_EQ(stop.kills[0].deregistration_delay, absl::ZeroDuration());
}

TEST_F(ServingTest, ARestartedMasterKnowsHealthAndReadinessFromTheStore) {
  JobId id = Create(Service(3));
  for (uint32_t i = 0; i < 3; ++i) Start(TaskId{id, i});
  Check(TaskId{id, 0}, TaskReason::kHealthy);
  Check(TaskId{id, 0}, TaskReason::kReady);
  Check(TaskId{id, 1}, TaskReason::kReady);  // its last reason says nothing of its health
  Check(TaskId{id, 1}, TaskReason::kUnhealthy);
  Check(TaskId{id, 2}, TaskReason::kHealthy);
  Check(TaskId{id, 2}, TaskReason::kReady);
  Check(TaskId{id, 2}, TaskReason::kNotReady);

  auto contents = store_.Load();
  ASSERT_TRUE(contents.ok());
  JobManager restored;
  Effects fx;
  ASSERT_TRUE(restored.Restore(*contents, now_, fx).ok());
  const Job* job = restored.GetJob(id);
  EXPECT_TRUE(Serving(job->task(0)));
  EXPECT_EQ(job->task(1).health, TaskHealth::kUnhealthy);
  EXPECT_EQ(job->task(1).readiness, TaskReadiness::kReady);
  EXPECT_EQ(job->task(2).health, TaskHealth::kHealthy);
  EXPECT_EQ(job->task(2).readiness, TaskReadiness::kNotReady);
}

TEST(TaskReadinessTest, NamesRoundTrip) {
  for (TaskReadiness r : {TaskReadiness::kNone, TaskReadiness::kUnknown, TaskReadiness::kReady,
                          TaskReadiness::kNotReady}) {
    EXPECT_EQ(TaskReadinessFromName(TaskReadinessName(r)), r);
  }
  EXPECT_EQ(TaskReadinessFromName("READY!"), std::nullopt);
  EXPECT_EQ(TaskHealthFromName("HEALTHY"), TaskHealth::kHealthy);
}

}  // namespace
}  // namespace paceline::jobmgr
