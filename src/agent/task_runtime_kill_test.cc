// Kill: SIGTERM to the process group, SIGKILL at the grace deadline, reported as graceful or
// forcible.

#include "agent/testing/runtime_test_fixture.h"

namespace paceline::agent::testing {
namespace {

// Waits until the task runs and has had time to install its trap: the task writes `ready`.
bool WaitReady(RuntimeTest* t, TaskRuntime& rt, EventLog& log, const std::string& ready) {
  (void)t;
  return RunUntil(rt, log, [&] { return PathExists(ready); });
}

class KillTest : public RuntimeTest {};

TEST_F(KillTest, TaskThatExitsOnSigtermIsKilledGracefully) {
  std::string ready = Shared("ready");
  LaunchRequest r = Req(
      10, 0, 1,
      "trap 'echo got TERM; exit 0' TERM; touch " + ready + "; while true; do sleep 0.05; done");
  ASSERT_TRUE(rt_->Launch(r).ok());
  ASSERT_TRUE(WaitReady(this, *rt_, log_, ready));
  absl::Time start = absl::Now();
  ASSERT_TRUE(rt_->Kill(r.run, absl::Seconds(10)).ok());
  std::optional<TaskEvent> end = WaitTerminal(*rt_, log_, r.run);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->type, TaskEventType::kKilled);
  EXPECT_EQ(end->reason, TerminationReason::kKilledGracefully) << end->ToString();
  EXPECT_EQ(end->exit_code, 0);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(ReadAll(Sandbox(r.run) + "/stdout"), "got TERM\n");
}

TEST_F(KillTest, TaskThatIgnoresSigtermIsKilledAtTheGraceDeadline) {
  std::string ready = Shared("ready");
  LaunchRequest r =
      Req(10, 1, 1, "trap '' TERM; touch " + ready + "; while true; do sleep 0.05; done");
  ASSERT_TRUE(rt_->Launch(r).ok());
  ASSERT_TRUE(WaitReady(this, *rt_, log_, ready));
  const absl::Duration grace = absl::Milliseconds(800);
  absl::Time start = absl::Now();
  ASSERT_TRUE(rt_->Kill(r.run, grace).ok());
  std::optional<TaskEvent> end = WaitTerminal(*rt_, log_, r.run);
  absl::Duration took = absl::Now() - start;
  ASSERT_TRUE(end);
  EXPECT_EQ(end->type, TaskEventType::kKilled);
  EXPECT_EQ(end->reason, TerminationReason::kKilledForcibly) << end->ToString();
  EXPECT_EQ(end->signal, SIGKILL);
  EXPECT_GE(took, grace);
  EXPECT_LT(took, grace + absl::Milliseconds(750)) << took;  // loaded CI machines included
}

TEST_F(KillTest, ZeroGraceKillsAtOnceAndASecondKillOnlyShortens) {
  LaunchRequest r = Req(10, 2, 1, "trap '' TERM; while true; do sleep 0.05; done");
  ASSERT_TRUE(rt_->Launch(r).ok());
  ASSERT_TRUE(Until([&] { return !log_.For(r.run).empty(); }));
  ASSERT_TRUE(rt_->Kill(r.run, absl::Seconds(60)).ok());
  ASSERT_TRUE(rt_->Kill(r.run, absl::Seconds(120)).ok());  // ignored: later
  absl::Time start = absl::Now();
  ASSERT_TRUE(rt_->Kill(r.run, absl::ZeroDuration()).ok());
  std::optional<TaskEvent> end = WaitTerminal(*rt_, log_, r.run);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->reason, TerminationReason::kKilledForcibly);
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
}

TEST_F(KillTest, KillRightAfterLaunchStillEndsTheTask) {
  LaunchRequest r = Req(10, 3, 1, "sleep 30");
  ASSERT_TRUE(rt_->Launch(r).ok());
  ASSERT_TRUE(rt_->Kill(r.run, absl::Seconds(5)).ok());  // before the pid is known
  std::optional<TaskEvent> end = WaitTerminal(*rt_, log_, r.run, absl::Seconds(10));
  ASSERT_TRUE(end);
  EXPECT_EQ(end->type, TaskEventType::kKilled);
  EXPECT_EQ(end->reason, TerminationReason::kKilledGracefully);
  EXPECT_EQ(end->signal, SIGTERM);
}

TEST_F(KillTest, KillingManyTasksWithTheirProcessGroups) {
  for (uint32_t i = 0; i < 20; ++i) {
    ASSERT_TRUE(rt_->Launch(Req(11, i, 1, "sleep 30 & sleep 30 & wait")).ok());
  }
  ASSERT_TRUE(Until([&] { return log_.all().size() >= 20; }));
  for (uint32_t i = 0; i < 20; ++i) ASSERT_TRUE(rt_->Kill(MakeRun(11, i, 1)).ok());
  ASSERT_TRUE(Until([&] { return rt_->ListRuns().empty(); }, absl::Seconds(10)));
  for (uint32_t i = 0; i < 20; ++i) {
    std::optional<TaskEvent> end = log_.Terminal(MakeRun(11, i, 1));
    ASSERT_TRUE(end);
    EXPECT_EQ(end->type, TaskEventType::kKilled);
  }
}

}  // namespace
}  // namespace paceline::agent::testing
