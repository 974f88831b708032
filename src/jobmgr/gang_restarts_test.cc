// The gang failure policy (job.gang.restart: gang) and the completion policy (completion:
// instance-0), driven through the JobManager by hand, its store kept in step (test_util.h).

#include "jobmgr/gang_restarts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "jobmgr/job_manager.h"
#include "jobmgr/test_util.h"

namespace paceline::jobmgr {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

JobSpec Gang(uint32_t instances, uint32_t gang_size, uint32_t max_restarts) {
  JobSpec s;
  s.name = "train";
  s.instances = instances;
  s.task.command = "python3 train.py";
  s.task.resources = Resources::Of(100, int64_t{64} << 20);
  s.task.kill_grace = absl::Seconds(5);
  s.sla.min_running_instances = gang_size;
  s.gang.restart = GangRestart::kGang;
  s.gang.max_restarts = max_restarts;
  return s;
}

class GangRestartsTest : public JobManagerFixture {
 protected:
  // Starts every instance of `id`, instance i on host "h<i>".
  void StartAll(JobId id) {
    for (uint32_t i = 0; i < jm_.GetJob(id)->instances(); ++i) Start({id, i}, Host(i));
  }
  static std::string Host(uint32_t i) { return "h" + std::to_string(i); }
  void Exit(TaskId t, int code) {
    Report(t, code == 0 ? TaskState::kSucceeded : TaskState::kFailed, code, Host(t.instance));
  }
  // The agent confirms the kill of `t`'s run.
  Effects Killed(TaskId t) {
    return Do([&](Effects& fx) {
      jm_.OnStatus({RunId{t, Run(t)}, Host(t.instance), TaskState::kKilled, -1, 15}, now_, fx);
    });
  }
  std::vector<records::TaskEvent> Events(TaskId t) {
    auto events = store_.ListEvents(t, 100);
    EXPECT_TRUE(events.ok());
    return events.ok() ? *events : std::vector<records::TaskEvent>{};
  }
  // The messages of `t`'s events of run `run`, in order.
  std::vector<std::string> Messages(TaskId t, uint32_t run) {
    std::vector<std::string> out;
    for (const records::TaskEvent& e : Events(t)) {
      if (e.run.run == run) out.push_back(e.message);
    }
    return out;
  }
  const Job& J(JobId id) { return *jm_.GetJob(id); }
};

TEST_F(GangRestartsTest, AFailedMemberStopsTheOthersAndTheGangStartsAgainTogether) {
  JobId id = Create(Gang(4, 4, 3));
  StartAll(id);
  Effects failed = Do([&](Effects& fx) {
    jm_.OnStatus({RunId{{id, 2}, 1}, "h2", TaskState::kFailed, 137}, now_, fx);
  });
  const std::string cause = "gang restart 1/3: instance 2 failed: exit 137";
  EXPECT_EQ(T(id, 2).state, TaskState::kFailed);
  EXPECT_EQ(T(id, 2).reason, TaskReason::kExitNonzero);
  ASSERT_EQ(failed.kills.size(), 3u);
  for (uint32_t i : {0u, 1u, 3u}) {
    EXPECT_EQ(T(id, i).state, TaskState::kKilling) << i;
    EXPECT_EQ(T(id, i).reason, TaskReason::kGangRestart) << i;
  }
  EXPECT_EQ(failed.kills[0].reason, TaskReason::kGangRestart);
  EXPECT_TRUE(failed.enqueue.empty()) << "nobody restarts before the whole gang stopped";
  EXPECT_EQ(J(id).state(), JobState::kRunning);

  EXPECT_TRUE(Killed({id, 0}).enqueue.empty());
  EXPECT_TRUE(Killed({id, 1}).enqueue.empty());
  Effects last = Killed({id, 3});
  EXPECT_THAT(last.enqueue, ElementsAre(TaskId{id, 0}, TaskId{id, 1}, TaskId{id, 2}, TaskId{id, 3}))
      << "one Effects, members in order: enqueued as one gang";
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(T(id, i).state, TaskState::kPending) << i;
    EXPECT_EQ(T(id, i).run, 2u) << i;
    EXPECT_EQ(T(id, i).gang_attempt, 1u) << i;
    // Every member's events say why: its run's end, and its new run's start.
    EXPECT_THAT(Messages({id, i}, 1).back(), HasSubstr(cause)) << i;
    EXPECT_THAT(Messages({id, i}, 2), ElementsAre(cause)) << i;
  }
  EXPECT_THAT(Messages({id, 0}, 1), ElementsAre("", "", "", "", cause, cause))
      << "READY, PLACED, LAUNCHING, RUNNING; then KILLING and KILLED for the gang";

  // The second attempt runs and succeeds: the job succeeds.
  StartAll(id);
  for (uint32_t i = 0; i < 4; ++i) Exit({id, i}, 0);
  EXPECT_EQ(J(id).state(), JobState::kSucceeded);
}

TEST_F(GangRestartsTest, EveryNewRunsRecordKeepsItsAttempt) {
  JobId id = Create(Gang(2, 2, 3));
  StartAll(id);
  Exit({id, 0}, 1);
  Killed({id, 1});
  auto contents = store_.Load();
  ASSERT_TRUE(contents.ok());
  for (const records::TaskRecord& r : contents->tasks) EXPECT_EQ(r.gang_attempt, 1u);
}

TEST_F(GangRestartsTest, AfterMaxRestartsTheNextFailureFailsTheJobAndEveryMemberSaysWhy) {
  JobId id = Create(Gang(3, 3, 1));
  StartAll(id);
  Exit({id, 1}, 1);
  Killed({id, 0});
  Killed({id, 2});
  ASSERT_EQ(T(id, 0).gang_attempt, 1u);
  StartAll(id);
  Effects spent = Do([&](Effects& fx) {
    jm_.OnStatus({RunId{{id, 0}, 2}, "h0", TaskState::kFailed, 3}, now_, fx);
  });
  const std::string cause = "no gang restarts left (1 of 1 used): instance 0 failed: exit 3";
  EXPECT_EQ(T(id, 0).state, TaskState::kFailed);
  EXPECT_EQ(spent.kills.size(), 2u);
  EXPECT_EQ(T(id, 1).reason, TaskReason::kGangFailed);
  Killed({id, 1});
  Effects last = Killed({id, 2});
  EXPECT_TRUE(last.enqueue.empty());
  EXPECT_EQ(J(id).state(), JobState::kFailed);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(IsTerminal(T(id, i).state)) << i;
    EXPECT_EQ(T(id, i).run, 2u) << i;
    EXPECT_THAT(Messages({id, i}, 2).back(), HasSubstr(cause)) << i;
  }
  EXPECT_EQ(T(id, 2).state, TaskState::kKilled);
  EXPECT_EQ(T(id, 2).reason, TaskReason::kGangFailed);
}

TEST_F(GangRestartsTest, NoRestartsAtAllFailsOnTheFirstFailure) {
  JobId id = Create(Gang(2, 2, 0));
  StartAll(id);
  Exit({id, 1}, 2);
  EXPECT_EQ(T(id, 0).reason, TaskReason::kGangFailed);
  Killed({id, 0});
  EXPECT_EQ(J(id).state(), JobState::kFailed);
}

TEST_F(GangRestartsTest, AMemberThatSucceedsIsNotAFailure) {
  JobId id = Create(Gang(3, 3, 3));
  StartAll(id);
  Effects done = Do([&](Effects& fx) {
    jm_.OnStatus({RunId{{id, 1}, 1}, "h1", TaskState::kSucceeded, 0}, now_, fx);
  });
  EXPECT_TRUE(done.kills.empty());
  EXPECT_EQ(T(id, 0).state, TaskState::kRunning);
  EXPECT_EQ(T(id, 1).state, TaskState::kSucceeded);
  // A later failure restarts every member, the one that had succeeded included.
  Exit({id, 2}, 1);
  Effects last = Killed({id, 0});
  EXPECT_EQ(last.enqueue.size(), 3u);
  EXPECT_EQ(T(id, 1).run, 2u);
}

TEST_F(GangRestartsTest, APreemptedMemberRestartsTheGang) {
  JobId id = Create(Gang(2, 2, 3));
  StartAll(id);
  Do([&](Effects& fx) { jm_.instances().Preempt({id, 1}, "pool /a over its share", now_, fx); });
  Effects ended = Killed({id, 1});
  EXPECT_EQ(T(id, 1).state, TaskState::kKilled);
  EXPECT_EQ(T(id, 1).reason, TaskReason::kPreempted);
  EXPECT_EQ(T(id, 0).reason, TaskReason::kGangRestart);
  ASSERT_EQ(ended.kills.size(), 1u);
  Killed({id, 0});
  EXPECT_THAT(Messages({id, 0}, 2),
              ElementsAre("gang restart (not counted): instance 1 was preempted"));
  EXPECT_THAT(Messages({id, 1}, 1).back(),
              AllOf(HasSubstr("pool /a over its share"), HasSubstr("instance 1 was preempted")));
}

TEST_F(GangRestartsTest, AMemberThatLosesItsHostRestartsTheGang) {
  JobId id = Create(Gang(3, 3, 3));
  StartAll(id);
  Effects lost = Do([&](Effects& fx) { jm_.OnHostLost("h1", now_, fx); });
  EXPECT_EQ(T(id, 1).state, TaskState::kLost);
  EXPECT_EQ(lost.kills.size(), 2u);
  Killed({id, 0});
  Killed({id, 2});
  EXPECT_EQ(T(id, 1).state, TaskState::kPending);
  EXPECT_THAT(Messages({id, 2}, 2),
              ElementsAre("gang restart (not counted): instance 1 lost its host h1"));
}

// Preemption and host loss are not the job's doing: they restart the gang without using its
// restarts, even with none left; a failure after them still has the whole budget.
TEST_F(GangRestartsTest, PreemptionAndHostLossDoNotUseTheRestartBudget) {
  JobId id = Create(Gang(2, 2, 1));
  for (int round = 0; round < 3; ++round) {
    StartAll(id);
    Do([&](Effects& fx) { jm_.instances().Preempt({id, 0}, "urgent work", now_, fx); });
    Killed({id, 0});
    Killed({id, 1});
    EXPECT_EQ(T(id, 0).state, TaskState::kPending) << round;
    EXPECT_EQ(T(id, 1).gang_attempt, static_cast<uint32_t>(round + 1));
  }
  StartAll(id);
  Do([&](Effects& fx) { jm_.OnHostLost("h1", now_, fx); });
  Killed({id, 0});
  EXPECT_EQ(T(id, 1).state, TaskState::kPending);
  EXPECT_EQ(T(id, 1).gang_attempt, 4u);
  // The one restart the budget has is still there for a failure...
  StartAll(id);
  Exit({id, 1}, 2);
  Killed({id, 0});
  EXPECT_THAT(Messages({id, 0}, 6), ElementsAre("gang restart 1/1: instance 1 failed: exit 2"));
  EXPECT_EQ(T(id, 0).state, TaskState::kPending);
  // ...and the next failure fails the gang.
  StartAll(id);
  Exit({id, 0}, 3);
  Killed({id, 1});
  EXPECT_EQ(T(id, 0).state, TaskState::kFailed);
  EXPECT_EQ(T(id, 1).reason, TaskReason::kGangFailed);
  EXPECT_THAT(Messages({id, 1}, 6).back(), HasSubstr("no gang restarts left (1 of 1 used)"));
}

TEST_F(GangRestartsTest, AMemberThatFailsToStartRestartsTheGang) {
  JobId id = Create(Gang(2, 2, 3));
  Do([&](Effects& fx) { jm_.OnAdmitted({id, 0}, now_, fx); });
  Do([&](Effects& fx) { jm_.OnAdmitted({id, 1}, now_, fx); });
  Do([&](Effects& fx) { jm_.OnPlaced({id, 0}, {.host = "h0"}, now_, fx); });
  Do([&](Effects& fx) { jm_.OnPlaced({id, 1}, {.host = "h1"}, now_, fx); });
  Do([&](Effects& fx) {
    jm_.OnStatus({RunId{{id, 1}, 1}, "h1", TaskState::kFailed, -1, 0, TaskReason::kLaunchFailed,
                  "image not found"},
                 now_, fx);
  });
  EXPECT_EQ(T(id, 0).state, TaskState::kKilling);
  Killed({id, 0});
  EXPECT_THAT(Messages({id, 0}, 2),
              ElementsAre("gang restart 1/3: instance 1 failed to start: image not found"));
}

TEST_F(GangRestartsTest, OnlyTheGangOfTheFailedMemberRestarts) {
  JobId id = Create(Gang(6, 3, 3));  // gangs 0-2 and 3-5
  StartAll(id);
  Effects failed = Do([&](Effects& fx) {
    jm_.OnStatus({RunId{{id, 4}, 1}, "h4", TaskState::kFailed, 1}, now_, fx);
  });
  EXPECT_EQ(failed.kills.size(), 2u);
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(T(id, i).state, TaskState::kRunning) << i;
  Killed({id, 3});
  Effects last = Killed({id, 5});
  EXPECT_THAT(last.enqueue, ElementsAre(TaskId{id, 3}, TaskId{id, 4}, TaskId{id, 5}));
  EXPECT_EQ(T(id, 0).gang_attempt, 0u);
  EXPECT_EQ(T(id, 3).gang_attempt, 1u);
}

TEST_F(GangRestartsTest, KillsOnPurposeAndAUsersRestartAreNotFailures) {
  JobId id = Create(Gang(3, 3, 3));
  StartAll(id);
  // One member killed by the user: the others run on.
  Do([&](Effects& fx) { ASSERT_TRUE(jm_.instances().Kill({id, 2}, now_, fx).ok()); });
  EXPECT_TRUE(Killed({id, 2}).kills.empty());
  EXPECT_EQ(T(id, 0).state, TaskState::kRunning);
  // One restarted by the user runs again alone, in the same attempt.
  Do([&](Effects& fx) { ASSERT_TRUE(jm_.instances().Restart(id, {1}, now_, fx).ok()); });
  Effects again = Killed({id, 1});
  EXPECT_THAT(again.enqueue, ElementsAre(TaskId{id, 1}));
  EXPECT_EQ(T(id, 1).gang_attempt, 0u);
  EXPECT_EQ(T(id, 0).state, TaskState::kRunning);
  // The job's kill stops everyone for good.
  Do([&](Effects& fx) { ASSERT_TRUE(jm_.KillJob(id, now_, fx).ok()); });
  EXPECT_TRUE(Killed({id, 0}).enqueue.empty());
  EXPECT_EQ(J(id).state(), JobState::kKilled);
}

TEST_F(GangRestartsTest, RestartInstanceKeepsRestartingOnlyTheFailedMember) {
  JobSpec spec = Gang(3, 3, 3);
  spec.gang.restart = GangRestart::kInstance;
  spec.task.restart = {RestartPolicy::kOnFailure, 2, absl::ZeroDuration(), absl::ZeroDuration()};
  JobId id = Create(spec);
  StartAll(id);
  Effects failed = Do([&](Effects& fx) {
    jm_.OnStatus({RunId{{id, 1}, 1}, "h1", TaskState::kFailed, 1}, now_, fx);
  });
  EXPECT_TRUE(failed.kills.empty());
  EXPECT_THAT(failed.enqueue, ElementsAre(TaskId{id, 1}));
  EXPECT_EQ(T(id, 0).state, TaskState::kRunning);
  EXPECT_EQ(T(id, 1).gang_attempt, 0u);
}

TEST_F(GangRestartsTest, ARestartInProgressAndTheAttemptSurviveARestartOfTheMaster) {
  JobId id = Create(Gang(3, 3, 3));
  StartAll(id);
  Exit({id, 0}, 9);
  Killed({id, 1});  // instance 2 is still being stopped when the master goes down
  auto contents = store_.Load();
  ASSERT_TRUE(contents.ok());
  JobManager restored;
  Effects fx;
  ASSERT_TRUE(restored.Restore(*contents, now_, fx).ok());
  EXPECT_TRUE(fx.enqueue.empty()) << "instance 2 has not stopped yet";
  const Job& job = *restored.GetJob(id);
  EXPECT_EQ(job.task(2).state, TaskState::kKilling);
  EXPECT_EQ(job.task(2).reason, TaskReason::kGangRestart);
  // The agent comes back and reports the run it was told to stop.
  Effects ended;
  restored.OnStatus({RunId{{id, 2}, 1}, "h2", TaskState::kKilled, -1, 15}, now_, ended);
  ASSERT_TRUE(store_.Commit(ended.batch).ok());
  EXPECT_THAT(ended.enqueue, ElementsAre(TaskId{id, 0}, TaskId{id, 1}, TaskId{id, 2}));
  const std::string cause = "gang restart 1/3: instance 0 failed: exit 9";
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(job.task(i).gang_attempt, 1u) << i;
    EXPECT_THAT(Messages({id, i}, 2), ElementsAre(cause)) << i;
  }
  EXPECT_THAT(Messages({id, 2}, 1).back(), cause) << "its end says why, after the restart too";
  // And the attempt, once more.
  auto again = store_.Load();
  ASSERT_TRUE(again.ok());
  JobManager third;
  Effects fx3;
  ASSERT_TRUE(third.Restore(*again, now_, fx3).ok());
  EXPECT_EQ(third.GetJob(id)->task(1).gang_attempt, 1u);
  EXPECT_EQ(fx3.enqueue.size(), 3u);
}

TEST_F(GangRestartsTest, ARestoredGangWhoseMembersAllStoppedIsRelaunched) {
  JobId id = Create(Gang(2, 2, 3));
  StartAll(id);
  Exit({id, 1}, 1);
  auto contents = store_.Load();
  ASSERT_TRUE(contents.ok());
  // As if the member's end had been stored without what follows it (an older master).
  for (records::TaskRecord& r : contents->tasks) {
    if (r.id.instance == 0) r.state = TaskState::kKilled;
  }
  JobManager restored;
  Effects fx;
  ASSERT_TRUE(restored.Restore(*contents, now_, fx).ok());
  EXPECT_THAT(fx.enqueue, ElementsAre(TaskId{id, 0}, TaskId{id, 1}));
  EXPECT_EQ(restored.GetJob(id)->task(0).gang_attempt, 1u);
}

// --- completion: instance-0 ---

JobSpec Launcher(uint32_t instances) {
  JobSpec s = Gang(instances, 1, 0);
  s.gang.restart = GangRestart::kInstance;
  s.completion = Completion::kInstanceZero;
  return s;
}

TEST_F(GangRestartsTest, TheJobCompletesWithInstanceZeroAndTheOthersAreKilled) {
  JobId id = Create(Launcher(3));
  StartAll(id);
  Effects done = Do([&](Effects& fx) {
    jm_.OnStatus({RunId{{id, 0}, 1}, "h0", TaskState::kSucceeded, 0}, now_, fx);
  });
  ASSERT_EQ(done.kills.size(), 2u);
  EXPECT_EQ(done.kills[0].reason, TaskReason::kJobCompleted);
  EXPECT_EQ(T(id, 1).state, TaskState::kKilling);
  EXPECT_EQ(J(id).state(), JobState::kRunning);
  Killed({id, 1});
  Killed({id, 2});
  EXPECT_EQ(J(id).state(), JobState::kSucceeded) << "the others' ends do not fail the job";
  EXPECT_THAT(Messages({id, 2}, 1).back(), "the job completes with instance 0");
  EXPECT_EQ(T(id, 2).reason, TaskReason::kJobCompleted);
}

TEST_F(GangRestartsTest, InstanceZerosFailureIsTheJobsAndOthersFailuresAreNot) {
  JobId id = Create(Launcher(3));
  StartAll(id);
  Exit({id, 2}, 1);  // a worker fails first (restart: never): the job runs on
  EXPECT_EQ(J(id).state(), JobState::kRunning);
  Exit({id, 0}, 0);
  Killed({id, 1});
  EXPECT_EQ(J(id).state(), JobState::kSucceeded);

  JobId second = Create(Launcher(2));
  StartAll(second);
  Exit({second, 0}, 4);
  Killed({second, 1});
  EXPECT_EQ(J(second).state(), JobState::kFailed);
}

TEST_F(GangRestartsTest, AnInstanceZeroThatRestartsDoesNotCompleteTheJob) {
  JobSpec spec = Launcher(2);
  spec.task.restart = {RestartPolicy::kOnFailure, 1, absl::ZeroDuration(), absl::ZeroDuration()};
  JobId id = Create(spec);
  StartAll(id);
  Effects failed = Do([&](Effects& fx) {
    jm_.OnStatus({RunId{{id, 0}, 1}, "h0", TaskState::kFailed, 1}, now_, fx);
  });
  EXPECT_TRUE(failed.kills.empty());
  EXPECT_EQ(T(id, 1).state, TaskState::kRunning);
}

TEST_F(GangRestartsTest, AGangThatCompletesWithInstanceZeroIsNotRestarted) {
  JobSpec spec = Gang(3, 3, 3);
  spec.completion = Completion::kInstanceZero;
  JobId id = Create(spec);
  StartAll(id);
  Exit({id, 0}, 0);
  EXPECT_EQ(T(id, 1).reason, TaskReason::kJobCompleted);
  // A member lost while it stops neither restarts nor restarts the gang.
  Effects lost = Do([&](Effects& fx) { jm_.OnHostLost("h1", now_, fx); });
  EXPECT_TRUE(lost.enqueue.empty());
  EXPECT_EQ(T(id, 1).state, TaskState::kLost);
  Killed({id, 2});
  EXPECT_EQ(J(id).state(), JobState::kSucceeded);
}

}  // namespace
}  // namespace paceline::jobmgr
