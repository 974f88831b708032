// The supervisor and its protocol end to end, started through the zygote and directly.

#include "agent/launch/wrapper_spawner.h"

#include "agent/launch/supervisor_pool.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "agent/host/proc_stat.h"
#include "agent/launch/wrapper_protocol.h"
#include "agent/testing/agent_test_util.h"
#include "gtest/gtest.h"

namespace paceline::agent {
namespace {

// Reads status lines from the control socket until an exit record arrives.
wrapper::ExitStatus ReadUntilExit(int fd) {
  std::string text;
  for (int i = 0; i < 1000; ++i) {
    wrapper::ExitStatus s = wrapper::ParseStatus(text);
    if (s.kind == wrapper::ExitStatus::Kind::kExited ||
        s.kind == wrapper::ExitStatus::Kind::kSignaled ||
        s.kind == wrapper::ExitStatus::Kind::kLaunchError) {
      return s;
    }
    struct pollfd p = {fd, POLLIN, 0};
    if (::poll(&p, 1, 10000) != 1) break;
    char buf[256];
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  return wrapper::ParseStatus(text);
}

class WrapperSpawnerTest : public ::testing::TestWithParam<bool> {
 protected:
  WrapperArgs Args(const testing::TempDir& dir, const std::string& command,
                   const std::vector<std::string>* env) {
    WrapperArgs a;
    a.wrapper = testing::WrapperPath();
    a.cwd = dir.path();
    a.state = dir.Sub("run");
    a.stdout_path = dir.Sub("stdout");
    a.stderr_path = dir.Sub("stderr");
    a.log_max = 1 << 20;
    a.command = command;
    a.env = env;
    return a;
  }
  // A new supervisor from `spawner` (pid 0, with the failure recorded, when none started).
  static Supervisor Start(WrapperSpawner& spawner) {
    absl::StatusOr<SpawnedWrapper> w = spawner.Spawn();
    if (!w.ok()) {
      ADD_FAILURE() << w.status();
      return Supervisor{};
    }
    return Supervisor{w->pid, 0, std::move(w->pidfd), std::move(w->control)};
  }
  // Lets `sup` go (EOF while free: it exits), and reaps it when it is this process's child.
  void LetGo(Supervisor& sup) {
    sup.control.Reset();
    if (!GetParam()) ::waitpid(sup.pid, nullptr, 0);
  }
};

TEST_P(WrapperSpawnerTest, ASupervisorRunsTasksInTurnUntilEof) {
  const bool zygote = GetParam();
  WrapperSpawner spawner(testing::WrapperPath(), {}, zygote);
  std::vector<std::string> env = {"GREETING=hi", "PATH=/usr/bin:/bin"};
  for (int round = 0; round < 2; ++round) {  // the zygote serves many requests
    Supervisor sup = Start(spawner);
    ASSERT_GT(sup.pid, 0);
    for (int run = 0; run < 3; ++run) {  // one supervisor, many runs
      testing::TempDir dir;
      WrapperArgs a = Args(dir, absl::StrCat("echo $GREETING ", run, "; exit ", 7 + run), &env);
      ASSERT_TRUE(SupervisorPool::Send(sup, a).ok());
      wrapper::ExitStatus s = ReadUntilExit(sup.control.get());
      absl::StatusOr<PidStat> st = ReadPidStat(sup.pid);
      ASSERT_TRUE(st.ok());
      EXPECT_EQ(st->ppid == ::getpid(), !zygote) << "who started the supervisor";
      EXPECT_EQ(st->session, sup.pid);  // its own session, either way
      EXPECT_EQ(s.kind, wrapper::ExitStatus::Kind::kExited);
      EXPECT_EQ(s.value, 7 + run);
      EXPECT_GT(s.task_pid, 0);
      EXPECT_NE(s.task_pid, sup.pid);
      EXPECT_FALSE(s.last_run);
      EXPECT_EQ(testing::ReadAll(a.stdout_path), absl::StrCat("hi ", run, "\n"));
      EXPECT_FALSE(PathExists(a.state + wrapper::kStatusSuffix));  // the agent was there
      ASSERT_EQ(::write(sup.control.get(), &wrapper::kAckByte, 1), 1);
      // Acknowledged: free for the next run, not gone.
      struct pollfd p = {sup.pidfd.get(), POLLIN, 0};
      EXPECT_EQ(::poll(&p, 1, 100), 0) << "the supervisor exited after its run";
    }
    sup.control.Reset();  // EOF while free: it exits
    struct pollfd p = {sup.pidfd.get(), POLLIN, 0};
    EXPECT_EQ(::poll(&p, 1, 10000), 1);
    if (!zygote) ::waitpid(sup.pid, nullptr, 0);
  }
  EXPECT_EQ(spawner.spawned_by_zygote(), zygote ? 2u : 0u);
}

TEST_P(WrapperSpawnerTest, WithoutAnAgentTheSupervisorWritesTheStatusFileAndExits) {
  const bool zygote = GetParam();
  testing::TempDir dir;
  WrapperSpawner spawner(testing::WrapperPath(), {}, zygote);
  std::vector<std::string> env;
  Supervisor sup = Start(spawner);
  ASSERT_GT(sup.pid, 0);
  ASSERT_TRUE(SupervisorPool::Send(sup, Args(dir, "sleep 0.2; exit 3", &env)).ok());
  sup.control.Reset();  // the agent "dies" right after the request
  struct pollfd p = {sup.pidfd.get(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 10000), 1);
  wrapper::ExitStatus s = wrapper::ParseStatus(testing::ReadAll(dir.Sub("run") + ".status"));
  EXPECT_EQ(s.kind, wrapper::ExitStatus::Kind::kExited);
  EXPECT_EQ(s.value, 3);
  if (!zygote) ::waitpid(sup.pid, nullptr, 0);
}

TEST_P(WrapperSpawnerTest, AMalformedRequestIsALaunchErrorAndTheSupervisorCarriesOn) {
  const bool zygote = GetParam();
  testing::TempDir dir;
  WrapperSpawner spawner(testing::WrapperPath(), {}, zygote);
  Supervisor sup = Start(spawner);
  ASSERT_GT(sup.pid, 0);
  ::fcntl(sup.control.get(), F_SETFL, 0);
  const std::string bad("5\n1\0x\0z", 7);  // one argument, then an environment count "z"
  ASSERT_TRUE(WriteAll(sup.control.get(), bad).ok());
  wrapper::ExitStatus s = ReadUntilExit(sup.control.get());
  EXPECT_EQ(s.kind, wrapper::ExitStatus::Kind::kLaunchError);
  EXPECT_EQ(s.error, "malformed run request");
  ASSERT_EQ(::write(sup.control.get(), &wrapper::kAckByte, 1), 1);
  std::vector<std::string> env;
  ASSERT_TRUE(SupervisorPool::Send(sup, Args(dir, "exit 4", &env)).ok());
  EXPECT_EQ(ReadUntilExit(sup.control.get()).value, 4);
  LetGo(sup);
}

TEST_P(WrapperSpawnerTest, TheRunningRecordNamesTheTaskByPidAndStartTime) {
  const bool zygote = GetParam();
  WrapperSpawner spawner(testing::WrapperPath(), {}, zygote);
  Supervisor sup = Start(spawner);
  ASSERT_GT(sup.pid, 0);
  std::vector<std::string> env;
  for (int run = 0; run < 5; ++run) {
    testing::TempDir dir;
    ASSERT_TRUE(SupervisorPool::Send(sup, Args(dir, "sleep 30", &env)).ok());
    std::string text;
    wrapper::ExitStatus s;
    while (s.task_pid <= 0) {
      struct pollfd p = {sup.control.get(), POLLIN, 0};
      ASSERT_EQ(::poll(&p, 1, 10000), 1);
      char buf[256];
      ssize_t n = ::read(sup.control.get(), buf, sizeof(buf));
      ASSERT_GT(n, 0);
      text.append(buf, static_cast<size_t>(n));
      s = wrapper::ParseStatus(text);
    }
    absl::StatusOr<PidStat> st = ReadPidStat(s.task_pid);
    ASSERT_TRUE(st.ok()) << st.status();
    EXPECT_EQ(s.task_start, st->start_ticks) << "the task's identity for a restarted agent";
    ::kill(-s.task_pid, SIGKILL);
    EXPECT_EQ(ReadUntilExit(sup.control.get()).kind, wrapper::ExitStatus::Kind::kSignaled);
    ASSERT_EQ(::write(sup.control.get(), &wrapper::kAckByte, 1), 1);
  }
  LetGo(sup);
}

TEST_P(WrapperSpawnerTest, ASetupFailureIsALaunchErrorNamingTheStep) {
  const bool zygote = GetParam();
  testing::TempDir dir;
  WrapperSpawner spawner(testing::WrapperPath(), {}, zygote);
  Supervisor sup = Start(spawner);
  ASSERT_GT(sup.pid, 0);
  std::vector<std::string> env;
  WrapperArgs a = Args(dir, "exit 0", &env);
  a.cgroup_procs = {dir.Sub("missing/cgroup.procs")};
  ASSERT_TRUE(SupervisorPool::Send(sup, a).ok());
  wrapper::ExitStatus s = ReadUntilExit(sup.control.get());
  EXPECT_EQ(s.kind, wrapper::ExitStatus::Kind::kLaunchError);
  EXPECT_EQ(s.error, absl::StrCat("join cgroup ", dir.Sub("missing/cgroup.procs"),
                                  ": No such file or directory"));
  ASSERT_EQ(::write(sup.control.get(), &wrapper::kAckByte, 1), 1);

  // A plain file stands in for a cgroup.procs file. The supervisor keeps the file of its last
  // run open, so two runs with the same one write "0" twice through one open file.
  ASSERT_TRUE(WriteFile(dir.Sub("procs"), "").ok());
  for (int run = 0; run < 2; ++run) {
    testing::TempDir sandbox;
    WrapperArgs b = Args(sandbox, "exit 5", &env);
    b.cgroup_procs = {dir.Sub("procs")};
    ASSERT_TRUE(SupervisorPool::Send(sup, b).ok());
    EXPECT_EQ(ReadUntilExit(sup.control.get()).value, 5);
    ASSERT_EQ(::write(sup.control.get(), &wrapper::kAckByte, 1), 1);
  }
  EXPECT_EQ(testing::ReadAll(dir.Sub("procs")), "00");
  LetGo(sup);
}

INSTANTIATE_TEST_SUITE_P(ZygoteAndDirect, WrapperSpawnerTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? "Zygote" : "Direct";
                         });

}  // namespace
}  // namespace paceline::agent
