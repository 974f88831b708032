// Gangs that restart together (job.gang.restart: gang) through the whole core: the new runs of
// a gang are admitted and placed together, in one cycle, each launch with the gang's new
// attempt and the whole gang as its peers; preemption (for a job of higher priority, off a
// draining host), a lost host and a restarted master included.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/scheduler_core.h"
#include "scheduler/test_util.h"

namespace paceline::scheduler {
namespace {

using testing::Batch;
using testing::CoreTest;
using ::testing::HasSubstr;
using testing::Host;
using testing::Pool;
using ::testing::StartsWith;

class GangRestartTest : public CoreTest {
 protected:
  JobId CreateGang(uint32_t size, uint32_t max_restarts, const PoolSpec& pool = Pool(100'000)) {
    Actions a;
    EXPECT_TRUE(core_->pools().CreatePool("/a", pool, a).ok());
    for (int h = 0; h < 4; ++h) {
      EXPECT_TRUE(core_->agents().RegisterHost(Host("h" + std::to_string(h), 2), {}, now_, a).ok());
    }
    JobSpec spec = Batch(size);
    spec.sla.min_running_instances = size;
    spec.gang.restart = GangRestart::kGang;
    spec.gang.max_restarts = max_restarts;
    auto id = core_->job_control().CreateJob(spec, "/a", now_, a);
    EXPECT_TRUE(id.ok()) << id.status();
    Commit(std::move(a));
    return *id;
  }
  // One cycle that must launch the whole gang of `n`, in attempt `attempt`.
  std::vector<Launch> LaunchAll(uint32_t n, uint32_t attempt) {
    Actions c = Cycle();
    EXPECT_EQ(c.launches.size(), n);
    for (const Launch& l : c.launches) {
      EXPECT_EQ(l.gang_attempt, attempt);
      EXPECT_EQ(l.run.run, attempt + 1);
      EXPECT_NE(l.peers, nullptr);
      if (l.peers != nullptr) {
        EXPECT_EQ(l.peers->size(), n) << "every member placed together";
      }
      Report(l, TaskState::kRunning);
    }
    return c.launches;
  }
  const jobmgr::Job& J(JobId id) { return *core_->jobs().GetJob(id); }
};

TEST_F(GangRestartTest, AFailedRankRestartsTheWholeGangTogetherInTheNextAttempt) {
  JobId id = CreateGang(4, 3);
  std::vector<Launch> first = LaunchAll(4, 0);
  Actions failed = Report(first[2], TaskState::kFailed, 1);
  ASSERT_EQ(failed.kills.size(), 3u);
  EXPECT_TRUE(Cycle().launches.empty()) << "no member starts before every member stopped";
  for (const jobmgr::KillCommand& k : failed.kills) {
    EXPECT_EQ(k.reason, jobmgr::TaskReason::kGangRestart);
    Report(k.run, k.host, TaskState::kKilled);
  }
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_THAT(core_->WhyPending({id, i}), StartsWith("gang attempt 1, every member together"));
  }
  std::vector<Launch> second = LaunchAll(4, 1);
  EXPECT_TRUE(core_->snapshot().Validate().ok());
  for (const Launch& l : second) Report(l, TaskState::kSucceeded, 0);
  EXPECT_EQ(J(id).state(), JobState::kSucceeded);
  EXPECT_TRUE(core_->resources().total_allocation().regular().IsZero());
  auto events = store_.ListEvents({id, 0}, 100);
  ASSERT_TRUE(events.ok());
  bool said = false;
  for (const records::TaskEvent& e : *events) {
    said |= e.message == "gang restart 1/3: instance " +
                             std::to_string(first[2].run.task.instance) + " failed: exit 1";
  }
  EXPECT_TRUE(said);
}

TEST_F(GangRestartTest, AGangMovedOffADrainingHostComesBackWholeWithoutUsingItsRestarts) {
  JobId id = CreateGang(3, 1);
  std::vector<Launch> first = LaunchAll(3, 0);
  Actions drain;
  ASSERT_TRUE(core_->agents()
                  .SetMaintenance(first[0].host, records::HostMaintenance::kDraining, now_, drain)
                  .ok());
  Commit(drain);
  ASSERT_FALSE(drain.kills.empty());  // the gang's members on that host, preempted
  Actions moved = Report(drain.kills[0].run, drain.kills[0].host, TaskState::kKilled);
  ASSERT_EQ(moved.kills.size(), 2u) << "the others stop too, for the gang";
  for (const jobmgr::KillCommand& k : moved.kills) Report(k.run, k.host, TaskState::kKilled);
  std::vector<Launch> second = LaunchAll(3, 1);
  for (const Launch& l : second) EXPECT_NE(l.host, first[0].host);
  EXPECT_EQ(jobmgr::TaskReasonName(J(id).task(0).reason), "STARTED");

  // The drain used none of its one restart: a failure restarts the gang once more...
  Actions failed = Report(second[1], TaskState::kFailed, 2);
  ASSERT_EQ(failed.kills.size(), 2u);
  for (const jobmgr::KillCommand& k : failed.kills) {
    EXPECT_EQ(k.reason, jobmgr::TaskReason::kGangRestart);
    Report(k.run, k.host, TaskState::kKilled);
  }
  std::vector<Launch> third = LaunchAll(3, 2);
  // ...and the next one, with it spent, fails the job.
  Actions spent = Report(third[2], TaskState::kFailed, 2);
  ASSERT_EQ(spent.kills.size(), 2u);
  for (const jobmgr::KillCommand& k : spent.kills) {
    EXPECT_EQ(k.reason, jobmgr::TaskReason::kGangFailed);
    Report(k.run, k.host, TaskState::kKilled);
  }
  EXPECT_TRUE(Cycle().launches.empty());
  EXPECT_EQ(J(id).state(), JobState::kFailed);
  EXPECT_TRUE(core_->resources().total_allocation().regular().IsZero());
}

TEST_F(GangRestartTest, AGangPreemptedForAHigherPriorityJobComesBackWholeOnceThereIsRoom) {
  PoolSpec four = Pool(4000);
  four.dim(Dim::kCpu).limit = 4000;
  JobId id = CreateGang(4, 3, four);
  std::vector<Launch> first = LaunchAll(4, 0);
  JobSpec urgent = Batch(1);
  urgent.priority = 100;
  Actions submit;
  auto urgent_id = core_->job_control().CreateJob(urgent, "/a", now_, submit);
  ASSERT_TRUE(urgent_id.ok()) << urgent_id.status();
  Commit(std::move(submit));

  // The gang is the resource manager's victim as a whole; the first member to stop restarts
  // it, and the others, being preempted already, now stop for the gang.
  Actions preempted = Cycle();
  EXPECT_TRUE(preempted.launches.empty());
  ASSERT_EQ(preempted.kills.size(), 4u);
  for (const jobmgr::KillCommand& k : preempted.kills) {
    EXPECT_EQ(k.reason, jobmgr::TaskReason::kPreempted);
  }
  const uint32_t named = preempted.kills[1].run.task.instance;
  Actions ended = Report(preempted.kills[1].run, preempted.kills[1].host, TaskState::kKilled);
  EXPECT_EQ(ended.kills.size(), 3u);
  for (const jobmgr::KillCommand& k : ended.kills) {
    EXPECT_EQ(k.reason, jobmgr::TaskReason::kGangRestart);
  }
  for (size_t k = 0; k < preempted.kills.size(); ++k) {
    if (k != 1) Report(preempted.kills[k].run, preempted.kills[k].host, TaskState::kKilled);
  }
  const std::string cause =
      "gang restart (not counted): instance " + std::to_string(named) + " was preempted";
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(J(id).task(i).state, TaskState::kPending) << i;
    auto events = store_.ListEvents({id, i}, 100);
    ASSERT_TRUE(events.ok());
    EXPECT_EQ(events->back().message, cause) << i;
  }

  // The urgent job takes one core of the pool's four: the gang waits, whole, until it is done.
  Actions next = Cycle();
  ASSERT_EQ(next.launches.size(), 1u);
  EXPECT_EQ(next.launches[0].run.task.job, *urgent_id);
  Report(next.launches[0], TaskState::kRunning);
  EXPECT_TRUE(Cycle().launches.empty());
  EXPECT_THAT(core_->WhyPending({id, 0}), StartsWith("gang attempt 1, every member together"));
  Report(next.launches[0], TaskState::kSucceeded, 0);
  std::vector<Launch> second = LaunchAll(4, 1);
  for (const Launch& l : second) Report(l, TaskState::kSucceeded, 0);
  EXPECT_EQ(J(id).state(), JobState::kSucceeded);
  EXPECT_TRUE(core_->resources().total_allocation().regular().IsZero());
}

TEST_F(GangRestartTest, AGangWhoseMemberLostItsHostIsPlacedAgainOnTheOthers) {
  JobId id = CreateGang(4, 3);
  std::vector<Launch> first = LaunchAll(4, 0);
  const std::string gone = first[3].host;
  now_ += defaults::kHostTimeout + absl::Seconds(1);
  for (int h = 0; h < 4; ++h) {
    if ("h" + std::to_string(h) != gone) core_->agents().Heartbeat("h" + std::to_string(h), now_);
  }
  Actions expired = Cycle();
  EXPECT_EQ(J(id).task(first[3].run.task.instance).state, TaskState::kLost);
  for (const jobmgr::KillCommand& k : expired.kills) {
    if (k.host != gone) Report(k.run, k.host, TaskState::kKilled);
  }
  // Three hosts of two cores are left for a gang of four of one core each.
  std::vector<Launch> second = LaunchAll(4, 1);
  for (const Launch& l : second) EXPECT_NE(l.host, gone);
}

TEST_F(GangRestartTest, AGangStoppingWhenTheMasterRestartsIsPlacedTogetherByTheNewOne) {
  JobId id = CreateGang(4, 3);
  std::vector<Launch> first = LaunchAll(4, 0);
  Actions failed = Report(first[0], TaskState::kFailed, 137);
  ASSERT_EQ(failed.kills.size(), 3u);
  Report(failed.kills[0].run, failed.kills[0].host, TaskState::kKilled);

  Restart();
  // The agents come back with the two runs still being stopped; they are told again.
  for (int h = 0; h < 4; ++h) {
    std::vector<ReportedRun> runs;
    for (size_t k = 1; k < failed.kills.size(); ++k) {
      if (failed.kills[k].host == "h" + std::to_string(h)) runs.push_back({failed.kills[k].run});
    }
    Actions reg;
    ASSERT_TRUE(
        core_->agents().RegisterHost(Host("h" + std::to_string(h), 2), runs, now_, reg).ok());
    Commit(reg);
  }
  EXPECT_TRUE(Cycle().launches.empty());
  for (size_t k = 1; k < failed.kills.size(); ++k) {
    Report(failed.kills[k].run, failed.kills[k].host, TaskState::kKilled);
  }
  LaunchAll(4, 1);
  EXPECT_THAT(core_->WhyPending({id, 0}), ::testing::IsEmpty());
  EXPECT_EQ(J(id).task(3).gang_attempt, 1u);
  EXPECT_EQ(jobmgr::TaskReasonName(J(id).task(3).reason), "STARTED");
}

}  // namespace
}  // namespace paceline::scheduler
