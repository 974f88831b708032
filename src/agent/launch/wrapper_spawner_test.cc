// The wrapper and its protocol end to end, started through the zygote and directly.

#include "agent/launch/wrapper_spawner.h"

#include <fcntl.h>
#include <poll.h>
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

class WrapperSpawnerTest : public ::testing::TestWithParam<bool> {};

TEST_P(WrapperSpawnerTest, RunsATaskAndReportsItsExit) {
  const bool zygote = GetParam();
  testing::TempDir dir;
  WrapperSpawner spawner(testing::WrapperPath(), {}, zygote);
  std::vector<std::string> env = {"GREETING=hi", "PATH=/usr/bin:/bin"};
  WrapperArgs a;
  a.wrapper = testing::WrapperPath();
  a.cwd = dir.path();
  a.state = dir.Sub("run");
  a.stdout_path = dir.Sub("stdout");
  a.stderr_path = dir.Sub("stderr");
  a.log_max = 1 << 20;
  a.command = "echo $GREETING; exit 7";
  a.env = &env;
  for (int round = 0; round < 3; ++round) {  // the zygote serves many requests
    absl::StatusOr<SpawnedWrapper> w = spawner.Spawn(a);
    ASSERT_TRUE(w.ok()) << w.status();
    ASSERT_EQ(::write(w->control.get(), &wrapper::kGoByte, 1), 1);
    ::fcntl(w->control.get(), F_SETFL, 0);
    wrapper::ExitStatus s = ReadUntilExit(w->control.get());
    // The wrapper waits for the ack: look at it now.
    absl::StatusOr<PidStat> st = ReadPidStat(w->pid);
    ASSERT_TRUE(st.ok());
    EXPECT_EQ(st->ppid == ::getpid(), !zygote) << "who started the wrapper";
    EXPECT_EQ(st->session, w->pid);  // its own session, either way
    EXPECT_EQ(s.kind, wrapper::ExitStatus::Kind::kExited);
    EXPECT_EQ(s.value, 7);
    EXPECT_GT(s.task_pid, 0);
    ASSERT_EQ(::write(w->control.get(), &wrapper::kAckByte, 1), 1);
    struct pollfd p = {w->pidfd.get(), POLLIN, 0};
    EXPECT_EQ(::poll(&p, 1, 10000), 1);  // the wrapper exits once acknowledged
    EXPECT_EQ(testing::ReadAll(a.stdout_path), "hi\n");
    EXPECT_FALSE(PathExists(a.state + wrapper::kStatusSuffix));  // the agent was there
    if (!zygote) ::waitpid(w->pid, nullptr, 0);
  }
  EXPECT_EQ(spawner.spawned_by_zygote(), zygote ? 3u : 0u);
}

TEST_P(WrapperSpawnerTest, WithoutAnAgentTheWrapperWritesTheStatusFile) {
  const bool zygote = GetParam();
  testing::TempDir dir;
  WrapperSpawner spawner(testing::WrapperPath(), {}, zygote);
  std::vector<std::string> env;
  WrapperArgs a;
  a.wrapper = testing::WrapperPath();
  a.cwd = dir.path();
  a.state = dir.Sub("run");
  a.stdout_path = dir.Sub("stdout");
  a.stderr_path = dir.Sub("stderr");
  a.log_max = 1 << 20;
  a.command = "exit 3";
  a.env = &env;
  absl::StatusOr<SpawnedWrapper> w = spawner.Spawn(a);
  ASSERT_TRUE(w.ok());
  ASSERT_EQ(::write(w->control.get(), &wrapper::kGoByte, 1), 1);
  w->control.Reset();  // the agent "dies" right after the go
  struct pollfd p = {w->pidfd.get(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 10000), 1);
  wrapper::ExitStatus s = wrapper::ParseStatus(testing::ReadAll(a.state + ".status"));
  EXPECT_EQ(s.kind, wrapper::ExitStatus::Kind::kExited);
  EXPECT_EQ(s.value, 3);
  if (!zygote) ::waitpid(w->pid, nullptr, 0);
}

INSTANTIATE_TEST_SUITE_P(ZygoteAndDirect, WrapperSpawnerTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? "Zygote" : "Direct";
                         });

}  // namespace
}  // namespace paceline::agent
