// The pool of free supervisors, with real supervisors started through the zygote.

#include "agent/launch/supervisor_pool.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <vector>

#include "agent/launch/wrapper_protocol.h"
#include "agent/testing/agent_test_util.h"
#include "gtest/gtest.h"

namespace paceline::agent {
namespace {

bool Exits(const UniqueFd& pidfd) {
  struct pollfd p = {pidfd.get(), POLLIN, 0};
  return ::poll(&p, 1, 10000) == 1;
}

class SupervisorPoolTest : public ::testing::Test {
 protected:
  WrapperSpawner spawner_{testing::WrapperPath(), {}, /*use_zygote=*/true};
  std::vector<UniqueFd> reaped_;
  SupervisorPool pool_{spawner_, [this](UniqueFd pidfd) { reaped_.push_back(std::move(pidfd)); },
                       /*max_free=*/2};
};

TEST_F(SupervisorPoolTest, AGivenSupervisorIsTakenAgain) {
  absl::StatusOr<Supervisor> a = pool_.Take();
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_GT(a->start_ticks, 0u);
  pid_t pid = a->pid;
  pool_.Give(*std::move(a));
  EXPECT_EQ(pool_.free_count(), 1u);
  absl::StatusOr<Supervisor> b = pool_.Take();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->pid, pid);
  EXPECT_EQ(pool_.started(), 1u);
  EXPECT_EQ(pool_.reused(), 1u);
  pool_.LetGo(*std::move(b));
  ASSERT_EQ(reaped_.size(), 1u);
  EXPECT_TRUE(Exits(reaped_[0])) << "a supervisor let go exits";
}

TEST_F(SupervisorPoolTest, TakePrefersTheSupervisorWhoseLastRunHadTheCgroup) {
  Supervisor a = pool_.Take().value();
  Supervisor b = pool_.Take().value();
  pid_t in_a = a.pid;
  pid_t in_b = b.pid;
  a.cgroup = "task.1";
  b.cgroup = "task.2";
  pool_.Give(std::move(a));
  pool_.Give(std::move(b));  // the most recently freed
  Supervisor c = pool_.Take("task.1").value();
  EXPECT_EQ(c.pid, in_a) << "the one that ran in task.1, though not the most recently freed";
  Supervisor d = pool_.Take("task.7").value();
  EXPECT_EQ(d.pid, in_b) << "no match: the most recently freed";
  EXPECT_EQ(pool_.started(), 2u);
  pool_.LetGo(std::move(c));
  pool_.LetGo(std::move(d));
}

TEST_F(SupervisorPoolTest, ASupervisorThatDiedWhileFreeIsNotHandedOut) {
  absl::StatusOr<Supervisor> a = pool_.Take();
  ASSERT_TRUE(a.ok());
  pid_t dead = a->pid;
  ::kill(dead, SIGKILL);
  ASSERT_TRUE(Exits(a->pidfd));
  pool_.Give(*std::move(a));
  absl::StatusOr<Supervisor> b = pool_.Take();
  ASSERT_TRUE(b.ok());
  EXPECT_NE(b->pid, dead);
  EXPECT_EQ(pool_.started(), 2u);
  EXPECT_EQ(reaped_.size(), 1u) << "the dead one is left to the reaper";
}

TEST_F(SupervisorPoolTest, KeepsAtMostMaxFreeAndTrimsTheUnused) {
  std::vector<Supervisor> taken;
  for (int i = 0; i < 3; ++i) taken.push_back(pool_.Take().value());
  for (Supervisor& s : taken) pool_.Give(std::move(s));
  EXPECT_EQ(pool_.free_count(), 2u);
  EXPECT_EQ(reaped_.size(), 1u);  // the third was let go
  pool_.Trim();                   // three taken since the start: all kept
  EXPECT_EQ(pool_.free_count(), 2u);
  Supervisor one = pool_.Take().value();
  pool_.Give(std::move(one));
  pool_.Trim();  // one taken since the last trim: one kept
  EXPECT_EQ(pool_.free_count(), 1u);
  pool_.Trim();  // none taken: none kept
  EXPECT_EQ(pool_.free_count(), 0u);
  EXPECT_EQ(reaped_.size(), 3u);
  for (const UniqueFd& fd : reaped_) EXPECT_TRUE(Exits(fd));
}

TEST_F(SupervisorPoolTest, ARequestToAGoneSupervisorIsUnavailable) {
  Supervisor s = pool_.Take().value();
  ::kill(s.pid, SIGKILL);
  ASSERT_TRUE(Exits(s.pidfd));
  testing::TempDir dir;
  WrapperArgs a;
  a.wrapper = testing::WrapperPath();
  a.cwd = dir.path();
  a.state = dir.Sub("run");
  a.command = "true";
  EXPECT_EQ(SupervisorPool::Send(s, a).code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace paceline::agent
