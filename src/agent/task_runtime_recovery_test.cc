// Agent restarts: kill -9 of the agent (a forked child running the runtime), destroyed runtime
// objects, exits that happen while no agent runs, kills in progress, and pid reuse.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/host/proc_stat.h"
#include "agent/recovery/checkpoint.h"
#include "agent/testing/runtime_test_fixture.h"

namespace paceline::agent::testing {
namespace {

// A task that runs until `go` exists, then exits with `code`.
std::string WaitThenExit(const std::string& go, int code) {
  return absl::StrCat("while [ ! -e ", go, " ]; do sleep 0.1; done; exit ", code);
}

class RecoveryTest : public RuntimeTest {
 protected:
  void Restart() {
    log_.Reset(nullptr);
    rt_.reset();
    Start();
  }
};

TEST_F(RecoveryTest, TwentyTasksSurviveAKilledAgentAndAreReportedOnce) {
  constexpr int kTasks = 20;
  std::string go = dir_.Sub("go");
  rt_.reset();  // the agent runs in a child process; this process runs the next one
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);  // orphaned wrappers come here
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t agent = ::fork();
  ASSERT_GE(agent, 0);
  if (agent == 0) {
    ::close(ready[0]);
    auto rt = TaskRuntime::Create(config_);
    if (!rt.ok() || !(*rt)->Recover().ok()) ::_exit(1);
    for (int i = 0; i < kTasks; ++i) {
      if (!(*rt)->Launch(Req(30, i, 1, WaitThenExit(go, i + 1))).ok()) ::_exit(2);
    }
    EventLog log(rt->get());
    if (!RunUntil(**rt, log, [&] { return log.all().size() == kTasks; })) ::_exit(3);
    if (::write(ready[1], "r", 1) != 1) ::_exit(4);
    for (;;) (*rt)->RunOnce(absl::Milliseconds(100));
  }
  ::close(ready[1]);
  struct pollfd p = {ready[0], POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 30000), 1) << "the agent child did not start its tasks";
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  ASSERT_EQ(::kill(agent, SIGKILL), 0);
  int ws = 0;
  ASSERT_EQ(::waitpid(agent, &ws, 0), agent);
  ASSERT_TRUE(WIFSIGNALED(ws));

  Start();  // a new agent on the same work dir
  std::vector<RunStatus> runs = rt_->ListRuns();
  ASSERT_EQ(runs.size(), static_cast<size_t>(kTasks));
  for (const RunStatus& s : runs) {
    EXPECT_EQ(s.state, RunState::kRunning);
    EXPECT_TRUE(PidAlive(s.pid)) << s.run.ToString();
  }
  EXPECT_TRUE(rt_->PendingEvents().empty());  // the old agent's events were acknowledged
  ASSERT_TRUE(WriteFile(go, "").ok());
  ASSERT_TRUE(Until([&] { return rt_->ListRuns().empty(); }, absl::Seconds(30)));
  for (int i = 0; i < kTasks; ++i) {
    std::vector<TaskEvent> ev = log_.For(MakeRun(30, i, 1));
    ASSERT_EQ(ev.size(), 1u) << i;  // exactly one report: the exit
    EXPECT_EQ(ev[0].type, TaskEventType::kExited);
    EXPECT_EQ(ev[0].exit_code, i + 1);
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
}

TEST_F(RecoveryTest, ExitsWhileNoAgentRunsAreReportedAfterRestart) {
  std::string go = dir_.Sub("go");
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(rt_->Launch(Req(31, i, 1, WaitThenExit(go, 10 + i))).ok());
  ASSERT_TRUE(Until([&] { return log_.all().size() == 5; }));
  log_.Reset(nullptr);
  rt_.reset();  // the agent goes away; its tasks keep running
  ASSERT_TRUE(WriteFile(go, "").ok());
  // Wait (without an agent) until every wrapper recorded its task's exit.
  absl::Time deadline = absl::Now() + absl::Seconds(20);
  auto all_exited = [&] {
    for (int i = 0; i < 5; ++i) {
      std::string st = ReadAll(absl::StrCat(config_.work_dir, "/runs/31_", i, "_1.status"));
      if (st.find("exit_code ") == std::string::npos) return false;
    }
    return true;
  };
  while (!all_exited() && absl::Now() < deadline) ::poll(nullptr, 0, 20);
  ASSERT_TRUE(all_exited());
  Start();
  ASSERT_TRUE(Until([&] { return rt_->ListRuns().empty(); }));
  log_.Drain();
  for (int i = 0; i < 5; ++i) {
    std::vector<TaskEvent> ev = log_.For(MakeRun(31, i, 1));
    ASSERT_EQ(ev.size(), 2u);  // RUNNING from the first agent, the exit from the second
    EXPECT_EQ(ev[0].type, TaskEventType::kRunning);
    EXPECT_EQ(ev[1].type, TaskEventType::kExited);
    EXPECT_EQ(ev[1].exit_code, 10 + i);
  }
}

TEST_F(RecoveryTest, EventsSurviveRestartsUntilAcknowledged) {
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(rt_->Launch(Req(32, i, 1, "exit 0")).ok());
  // Run without acknowledging anything.
  absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (rt_->PendingEvents().size() < 10 && absl::Now() < deadline) {
    rt_->RunOnce(absl::Milliseconds(20));
  }
  std::vector<TaskEvent> before = rt_->PendingEvents();
  ASSERT_EQ(before.size(), 10u);
  Restart();
  EXPECT_EQ(rt_->PendingEvents(), before);  // same events, same sequence numbers
  ASSERT_TRUE(rt_->Ack(before[3].seq).ok());
  Restart();
  std::vector<TaskEvent> rest = rt_->PendingEvents();
  ASSERT_EQ(rest.size(), 6u);
  EXPECT_EQ(rest.front().seq, before[4].seq);
  ASSERT_TRUE(rt_->Ack(rest.back().seq).ok());
  Restart();
  EXPECT_TRUE(rt_->PendingEvents().empty());
  ASSERT_TRUE(rt_->Launch(Req(32, 9, 1, "exit 0")).ok());
  ASSERT_TRUE(WaitTerminal(*rt_, log_, MakeRun(32, 9, 1)));
  for (const TaskEvent& e : log_.all()) EXPECT_GT(e.seq, before.back().seq);
}

TEST_F(RecoveryTest, AKillInProgressContinuesAfterRestart) {
  std::string ready = Shared("ready");
  LaunchRequest r =
      Req(33, 0, 1, "trap '' TERM; touch " + ready + "; while true; do sleep 0.05; done");
  ASSERT_TRUE(rt_->Launch(r).ok());
  ASSERT_TRUE(Until([&] { return PathExists(ready); }));
  ASSERT_TRUE(rt_->Kill(r.run, absl::Seconds(1)).ok());
  Restart();
  std::optional<TaskEvent> end = WaitTerminal(*rt_, log_, r.run);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->type, TaskEventType::kKilled);
  EXPECT_EQ(end->reason, TerminationReason::kKilledForcibly);
}

TEST_F(RecoveryTest, AKillWaitingForItsDeregistrationDelayKeepsItAfterRestart) {
  std::string ready = Shared("ready");
  std::string termed = Shared("termed");
  LaunchRequest r = Req(33, 1, 1,
                        "trap 'date +%s%N > " + termed + "; exit 0' TERM; touch " + ready +
                            "; while true; do sleep 0.05; done");
  ASSERT_TRUE(rt_->Launch(r).ok());
  ASSERT_TRUE(Until([&] { return PathExists(ready) && !log_.For(r.run).empty(); }));  // RUNNING
  const absl::Time killed = absl::Now();
  const absl::Duration delay = absl::Milliseconds(1500);
  ASSERT_TRUE(rt_->Kill(r.run, absl::Seconds(10), delay).ok());
  Restart();
  ASSERT_EQ(rt_->GetRun(r.run)->state, RunState::kStopping);
  std::optional<TaskEvent> end = WaitTerminal(*rt_, log_, r.run);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->type, TaskEventType::kKilled);
  EXPECT_EQ(end->reason, TerminationReason::kKilledGracefully) << end->ToString();
  int64_t ns = 0;
  ASSERT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(ReadAll(termed)), &ns))
      << ReadAll(termed);
  EXPECT_GE(absl::FromUnixNanos(ns) - killed, delay);
}

TEST_F(RecoveryTest, AReusedPidIsNeitherAdoptedNorKilled) {
  // An unrelated process that happens to hold the pid a checkpoint record names. (Forked with
  // no agent running: a child must not share the work dir's lock.)
  rt_.reset();
  pid_t stranger = ::fork();
  if (stranger == 0) {
    ::execl("/bin/sleep", "sleep", "30", nullptr);
    ::_exit(1);
  }
  {
    auto cp = Checkpoint::Open(config_.work_dir + "/checkpoint").value();
    RunContext c;
    c.request = Req(34, 0, 1, "sleep 30");
    c.key = RunKey(c.request.run);
    c.boot_id = BootId();
    c.run_state = config_.work_dir + "/runs/34_0_1";
    c.wrapper_pid = stranger;
    c.wrapper_start = 1;  // not the stranger's start time
    c.task_pid = stranger;
    c.task_start = 1;
    ASSERT_TRUE(cp->Put(c).ok());
  }
  Start();
  std::optional<TaskEvent> end = WaitTerminal(*rt_, log_, MakeRun(34, 0, 1));
  ASSERT_TRUE(end);
  EXPECT_EQ(end->type, TaskEventType::kLost);
  EXPECT_TRUE(PidAlive(stranger)) << "recovery killed a process that was not its task";
  ::kill(stranger, SIGKILL);
  ::waitpid(stranger, nullptr, 0);
}

TEST_F(RecoveryTest, ASecondAgentOnTheSameWorkDirIsRefused) {
  absl::StatusOr<std::unique_ptr<TaskRuntime>> other = TaskRuntime::Create(config_);
  EXPECT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(rt_->Launch(Req(35, 0, 1, "true")).code(), absl::StatusCode::kOk);
}

TEST_F(RecoveryTest, TwoAgentsOnOneMachineDoNotInterfere) {
  AgentConfig other_config = TestConfig(dir_.Sub("work-b"));
  other_config.port_min = static_cast<uint16_t>(config_.port_min + 10000);
  other_config.port_max = static_cast<uint16_t>(config_.port_max + 10000);
  auto other = TaskRuntime::Create(other_config).value();
  ASSERT_TRUE(other->Recover().ok());
  EventLog other_log(other.get());
  LaunchRequest r = Req(40, 0, 1, "sleep 30");  // the same run id on both agents
  ASSERT_TRUE(rt_->Launch(r).ok());
  ASSERT_TRUE(other->Launch(r).ok());
  ASSERT_TRUE(Until([&] { return !log_.For(r.run).empty(); }));
  ASSERT_TRUE(RunUntil(*other, other_log, [&] { return !other_log.For(r.run).empty(); }));
  int pid_a = rt_->GetRun(r.run)->pid;
  int pid_b = other->GetRun(r.run)->pid;
  EXPECT_NE(pid_a, pid_b);

  // Killing A's run leaves B's alone; restarting B (recovery, leftover cleanup) leaves A alone.
  ASSERT_TRUE(rt_->Kill(r.run, absl::ZeroDuration()).ok());
  ASSERT_TRUE(WaitTerminal(*rt_, log_, r.run));
  EXPECT_TRUE(PidAlive(pid_b));
  LaunchRequest r2 = Req(40, 1, 1, "sleep 30");
  ASSERT_TRUE(rt_->Launch(r2).ok());
  ASSERT_TRUE(Until([&] { return !log_.For(r2.run).empty(); }));
  other_log.Reset(nullptr);
  other.reset();
  other = TaskRuntime::Create(other_config).value();
  ASSERT_TRUE(other->Recover().ok());
  other_log.Reset(other.get());
  ASSERT_EQ(other->ListRuns().size(), 1u);
  EXPECT_EQ(other->ListRuns()[0].pid, pid_b);
  EXPECT_TRUE(PidAlive(rt_->GetRun(r2.run)->pid));
  KillAllAndWait(*other, other_log);
  other.reset();
  RemoveAgentCgroups(other_config);
}

TEST(RuntimeCreateTest, LaunchBeforeRecoverIsRefused) {
  TempDir dir;
  AgentConfig config = TestConfig(dir.Sub("work"));
  auto rt = TaskRuntime::Create(config).value();
  EXPECT_EQ(rt->Launch(Req(36, 0, 1, "true")).code(), absl::StatusCode::kFailedPrecondition);
  rt.reset();
  RemoveAgentCgroups(config);
}

}  // namespace
}  // namespace paceline::agent::testing
