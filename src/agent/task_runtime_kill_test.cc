// Kill: SIGTERM to the process group, SIGKILL at the grace deadline, reported as graceful or
// forcible; a deregistration delay before SIGTERM.

#include <signal.h>

#include <cstdint>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
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

// The nanosecond timestamps (`date +%s%N`) in `path`, one a line.
std::vector<int64_t> Stamps(const std::string& path) {
  std::vector<int64_t> out;
  for (absl::string_view line : absl::StrSplit(ReadAll(path), '\n', absl::SkipEmpty())) {
    int64_t ns = 0;
    if (absl::SimpleAtoi(line, &ns)) out.push_back(ns);
  }
  return out;
}

TEST_F(KillTest, ADeregistrationDelayLeavesTheTaskAloneThenTerminatesIt) {
  // The task writes when it gets SIGTERM; its health and readiness checks write when they run.
  std::string ready = Shared("ready");
  std::string termed = Shared("termed");
  std::string probes = Shared("probes");
  LaunchRequest r = Req(12, 0, 1,
                        "trap 'date +%s%N > " + termed + "; exit 0' TERM; touch " + ready +
                            "; while true; do sleep 0.05; done");
  HealthSpec check;
  check.check = CommandCheck{"date +%s%N >> " + probes};
  check.interval = absl::Milliseconds(50);
  r.spec.health = check;
  r.spec.readiness = check;
  ASSERT_TRUE(rt_->Launch(r).ok());
  ASSERT_TRUE(WaitReady(this, *rt_, log_, ready));
  ASSERT_TRUE(Until([&] { return log_.Last(r.run, TaskEventType::kReadiness).has_value(); }));
  const absl::Duration delay = absl::Seconds(1);
  const absl::Time killed = absl::Now();
  ASSERT_TRUE(rt_->Kill(r.run, absl::Seconds(10), delay).ok());
  EXPECT_EQ(rt_->GetRun(r.run)->state, RunState::kStopping);
  EXPECT_EQ(rt_->GetRun(r.run)->readiness, ReadinessState::kUnknown);  // no longer checked
  const size_t events = log_.For(r.run).size();
  // The master re-sends the kill (without a delay) after a failover: nothing changes.
  ASSERT_TRUE(Until([&] { return absl::Now() >= killed + absl::Milliseconds(300); }));
  ASSERT_TRUE(rt_->Kill(r.run, absl::Seconds(10)).ok());
  std::optional<TaskEvent> end = WaitTerminal(*rt_, log_, r.run);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->type, TaskEventType::kKilled);
  EXPECT_EQ(end->reason, TerminationReason::kKilledGracefully) << end->ToString();
  EXPECT_EQ(log_.For(r.run).size(), events + 1);  // no check's event after the kill

  std::vector<int64_t> term = Stamps(termed);
  ASSERT_EQ(term.size(), 1u) << ReadAll(termed);
  const absl::Time term_at = absl::FromUnixNanos(term[0]);
  EXPECT_GE(term_at - killed, delay);
  EXPECT_LT(term_at - killed, delay + absl::Milliseconds(750)) << term_at - killed;
  // The checks stopped with the kill (a probe already running may finish just after it).
  std::vector<int64_t> ran = Stamps(probes);
  ASSERT_FALSE(ran.empty());
  for (int64_t ns : ran) EXPECT_LT(absl::FromUnixNanos(ns), killed + absl::Milliseconds(200));
}

TEST_F(KillTest, ARunThatEndsDuringItsDeregistrationDelayEndsAsItWould) {
  std::string ready = Shared("ready");
  std::string go = Shared("go");
  LaunchRequest r =
      Req(12, 1, 1, "touch " + ready + "; while [ ! -e " + go + " ]; do sleep 0.05; done; exit 3");
  ASSERT_TRUE(rt_->Launch(r).ok());
  ASSERT_TRUE(WaitReady(this, *rt_, log_, ready));
  const absl::Time killed = absl::Now();
  ASSERT_TRUE(rt_->Kill(r.run, absl::Seconds(10), absl::Seconds(30)).ok());
  ASSERT_TRUE(WriteFile(go, "").ok());
  std::optional<TaskEvent> end = WaitTerminal(*rt_, log_, r.run);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->type, TaskEventType::kExited) << end->ToString();
  EXPECT_EQ(end->reason, TerminationReason::kExited);
  EXPECT_EQ(end->exit_code, 3);
  EXPECT_LT(absl::Now() - killed, absl::Seconds(10));
}

TEST_F(KillTest, AZeroGraceKillDuringTheDelayKillsAtItsEnd) {
  std::string ready = Shared("ready");
  LaunchRequest r =
      Req(12, 2, 1, "trap '' TERM; touch " + ready + "; while true; do sleep 0.05; done");
  ASSERT_TRUE(rt_->Launch(r).ok());
  ASSERT_TRUE(WaitReady(this, *rt_, log_, ready));
  ASSERT_TRUE(Until([&] { return !log_.For(r.run).empty(); }));  // RUNNING: its pid is known
  const int pid = rt_->GetRun(r.run)->pid;
  const absl::Time killed = absl::Now();
  ASSERT_TRUE(rt_->Kill(r.run, absl::Seconds(60), absl::Milliseconds(600)).ok());
  ASSERT_TRUE(rt_->Kill(r.run, absl::ZeroDuration()).ok());  // shortens the grace, not the delay
  EXPECT_TRUE(PidAlive(pid));
  std::optional<TaskEvent> end = WaitTerminal(*rt_, log_, r.run);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->reason, TerminationReason::kKilledForcibly) << end->ToString();
  EXPECT_EQ(end->signal, SIGKILL);
  const absl::Duration took = absl::Now() - killed;
  EXPECT_GE(took, absl::Milliseconds(600));
  EXPECT_LT(took, absl::Seconds(5));
}

}  // namespace
}  // namespace paceline::agent::testing
