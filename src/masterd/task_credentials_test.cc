// The index of runs with an identity that the credential renewal goes over: only those runs,
// however many other tasks the cluster runs; a run leaves it after its end; and a master that
// restarts (a core rebuilt from the store) indexes again every such run launched before it.
// The core is driven as the master drives it (scheduler/test_util.h); launches go through
// FillLaunch as the agent registry sends them.

#include "masterd/task_credentials.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "scheduler/test_util.h"

namespace paceline::masterd {
namespace {

using scheduler::Actions;
using scheduler::Launch;
using scheduler::SchedulerCore;
using scheduler::testing::Batch;
using scheduler::testing::Host;
using scheduler::testing::kGi;
using scheduler::testing::Pool;

// What a renewal pass would send: "host job/instance/run", sorted.
std::vector<std::string> Names(const std::vector<TaskCredentials::Due>& due) {
  std::vector<std::string> out;
  for (const TaskCredentials::Due& d : due) {
    out.push_back(absl::StrCat(d.host, " ", d.run.task.job.value(), "/", d.run.task.instance, "/",
                               d.run.run));
  }
  std::sort(out.begin(), out.end());
  return out;
}

class TaskCredentialsIndexTest : public scheduler::testing::CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    Actions a;
    ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(400'000), a).ok());
    for (int h = 0; h < 4; ++h) {
      ASSERT_TRUE(
          core_->agents().RegisterHost(Host("h" + std::to_string(h), 64), {}, now_, a).ok());
    }
    Commit(std::move(a));
  }

  JobId Create(JobSpec spec) {
    spec.task.resources = Resources::Of(100, kGi / 16);  // all fit at once
    Actions a;
    auto id = core_->job_control().CreateJob(std::move(spec), "/a", now_, a);
    EXPECT_TRUE(id.ok()) << id.status();
    Commit(std::move(a));
    return id.ok() ? *id : JobId(0);
  }

  // One cycle: each launch leaves with its credential (or none) and its run starts. Returns
  // the launches of runs with an identity.
  std::vector<Launch> LaunchAndRun(TaskCredentials& creds) {
    std::vector<Launch> with_identity;
    for (const Launch& l : Cycle().launches) {
      v1::LaunchTask msg;
      creds.FillLaunch(l, msg, now_);
      EXPECT_EQ(msg.has_credential(), TaskCredentials::HasIdentity(*l.task));
      if (msg.has_credential()) with_identity.push_back(l);
      Report(l, TaskState::kRunning);
    }
    return with_identity;
  }

  // 200 tasks without an identity, 3 with one, and a controller.
  std::vector<Launch> LaunchMixed(TaskCredentials& creds) {
    plain_ = Create(Batch(200, 100));
    JobSpec drivers = Batch(3, 100);
    drivers.name = "drivers";
    drivers.task.identity = true;
    Create(drivers);
    JobSpec controller = Batch(1, 100);
    controller.name = "controller";
    controller.task.controller = true;
    Create(controller);
    return LaunchAndRun(creds);
  }

  static std::vector<std::string> NamesOf(const std::vector<Launch>& launches) {
    std::vector<TaskCredentials::Due> due;
    for (const Launch& l : launches) due.push_back({l.host, l.run});
    return Names(due);
  }

  JobId plain_{0};
  // Not started: only the index is used, which reads the core it is given.
  TaskCredentials creds_{nullptr, "key", absl::Minutes(10)};
};

TEST_F(TaskCredentialsIndexTest, APassGoesOverTheRunsWithAnIdentityOnly) {
  std::vector<Launch> identity = LaunchMixed(creds_);
  ASSERT_EQ(identity.size(), 4u);
  EXPECT_EQ(core_->jobs().GetJob(plain_)->count(TaskState::kRunning), 200u);
  // 204 running tasks; the pass looks at the 4 indexed runs.
  EXPECT_EQ(creds_.indexed(), 4u);
  EXPECT_EQ(Names(creds_.Sweep(*core_)), NamesOf(identity));
  EXPECT_EQ(creds_.indexed(), 4u);
}

TEST_F(TaskCredentialsIndexTest, ARunLeavesTheIndexAtThePassAfterItsEnd) {
  std::vector<Launch> identity = LaunchMixed(creds_);
  ASSERT_EQ(identity.size(), 4u);
  Report(identity[0], TaskState::kSucceeded, 0);
  // Killed: being stopped is no longer live either.
  Actions a;
  ASSERT_TRUE(core_->job_control().KillJob(identity[3].run.task.job, now_, a).ok());
  Commit(std::move(a));
  EXPECT_EQ(creds_.indexed(), 4u);  // not yet swept
  std::vector<Launch> live = {identity[1], identity[2]};
  EXPECT_EQ(Names(creds_.Sweep(*core_)), NamesOf(live));
  EXPECT_EQ(creds_.indexed(), 2u);
}

TEST_F(TaskCredentialsIndexTest, ARestartedMasterIndexesTheRunsLaunchedBeforeIt) {
  std::vector<Launch> identity = LaunchMixed(creds_);
  ASSERT_EQ(identity.size(), 4u);
  Report(identity[0], TaskState::kSucceeded, 0);
  // A second wave, still LAUNCHING when the master goes: 2 more runs with an identity.
  JobSpec more = Batch(2, 100);
  more.name = "more";
  more.task.identity = true;
  Create(more);
  Actions launched = Cycle();
  ASSERT_EQ(launched.launches.size(), 2u);
  for (const Launch& l : launched.launches) {
    v1::LaunchTask msg;
    creds_.FillLaunch(l, msg, now_);
  }

  // The master restarts: a new core from the store, a new, empty index.
  auto fresh = SchedulerCore::Create(scheduler::CoreConfig{});
  ASSERT_TRUE(fresh.ok());
  core_ = std::move(*fresh);
  auto contents = store_.Load();
  ASSERT_TRUE(contents.ok());
  Actions restored;
  ASSERT_TRUE(core_->Restore(*contents, now_, restored).ok());
  Commit(std::move(restored));
  TaskCredentials after{nullptr, "key", absl::Minutes(10)};
  EXPECT_TRUE(after.Sweep(*core_).empty()) << "nothing indexed before the rebuild's Reindex";
  after.Reindex(*core_);
  std::vector<Launch> live = {identity[1], identity[2], identity[3], launched.launches[0],
                              launched.launches[1]};
  EXPECT_EQ(after.indexed(), 5u);
  EXPECT_EQ(Names(after.Sweep(*core_)), NamesOf(live));
  // The old master's index agrees with it.
  EXPECT_EQ(Names(creds_.Sweep(*core_)), NamesOf(live));
}

}  // namespace
}  // namespace paceline::masterd
