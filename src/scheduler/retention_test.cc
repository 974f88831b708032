#include "scheduler/retention.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/scheduler_core.h"
#include "scheduler/test_util.h"

namespace paceline::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

using testing::Batch;
using testing::Host;
using testing::Pool;

class RetentionTest : public testing::CoreTest {
 protected:
  void SetUp() override { core_ = NewCore(); }

  std::unique_ptr<SchedulerCore> NewCore() {
    CoreConfig config;
    config.retain_terminal = absl::Hours(1);
    auto core = SchedulerCore::Create(config);
    EXPECT_TRUE(core.ok()) << core.status();
    return std::move(*core);
  }

  void Setup(const std::vector<std::pair<std::string, PoolSpec>>& pools) {
    Actions a;
    for (const auto& [path, spec] : pools)
      ASSERT_TRUE(core_->pools().CreatePool(path, spec, a).ok());
    ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 8), {}, now_, a).ok());
    Commit(std::move(a));
  }

  // Creates a batch job of `n` instances in `pool` and runs it to the end with `exit_code`.
  JobId RunToEnd(const std::string& pool, uint32_t n = 2, int exit_code = 0) {
    Actions a;
    auto id = core_->job_control().CreateJob(Batch(n), pool, now_, a);
    EXPECT_TRUE(id.ok()) << id.status();
    Commit(std::move(a));
    core_->agents().Heartbeat("h1", now_);  // the clock jumps between jobs
    for (const Launch& l : Cycle().launches) {
      Report(l, TaskState::kRunning);
      Report(l, exit_code == 0 ? TaskState::kSucceeded : TaskState::kFailed, exit_code);
    }
    return *id;
  }

  std::vector<JobId> Purge(const std::vector<JobId>& ids) {
    Actions a;
    std::vector<JobId> done = core_->job_control().PurgeExpired(ids, now_, a);
    Commit(std::move(a));
    return done;
  }
};

PoolSpec Retained(absl::Duration d) {
  PoolSpec p = Pool(100'000);
  p.retain_terminal = d;
  return p;
}

TEST_F(RetentionTest, AFinishedJobExpiresAfterTheWindowAndIsPurgedFromCoreAndStore) {
  Setup({{"/a", Pool(100'000)}});
  JobId job = RunToEnd("/a");
  EXPECT_EQ(core_->retention().finished(), 1u);
  now_ += absl::Minutes(59);
  EXPECT_THAT(core_->retention().Expired(now_, 10), IsEmpty());
  EXPECT_EQ(core_->retention().Lag(now_), absl::ZeroDuration());
  EXPECT_THAT(Purge({job}), IsEmpty()) << "not expired yet: nothing is deleted";
  ASSERT_NE(core_->jobs().GetJob(job), nullptr);

  now_ += absl::Minutes(2);
  EXPECT_THAT(core_->retention().Expired(now_, 10), ElementsAre(job));
  EXPECT_EQ(core_->retention().Lag(now_), absl::Minutes(1));
  EXPECT_THAT(Purge({job}), ElementsAre(job));
  EXPECT_EQ(core_->jobs().GetJob(job), nullptr);
  EXPECT_EQ(core_->retention().finished(), 0u);
  EXPECT_EQ(core_->retention().Lag(now_), absl::ZeroDuration());
  auto contents = store_.Load();
  ASSERT_TRUE(contents.ok());
  EXPECT_THAT(contents->jobs, IsEmpty());
  EXPECT_THAT(contents->tasks, IsEmpty());
  auto events = store_.ListEvents(TaskId{job, 0}, 0);
  ASSERT_TRUE(events.ok());
  EXPECT_THAT(*events, IsEmpty());
}

TEST_F(RetentionTest, ExpiredComesOldestFirstAndInBoundedBatches) {
  Setup({{"/a", Pool(100'000)}});
  std::vector<JobId> jobs;
  for (int i = 0; i < 5; ++i) {
    jobs.push_back(RunToEnd("/a", 1));
    now_ += absl::Minutes(1);
  }
  now_ += absl::Hours(2);
  EXPECT_THAT(core_->retention().Expired(now_, 2), ElementsAre(jobs[0], jobs[1]));
  EXPECT_EQ(core_->retention().Expired(now_, 100), jobs);
}

TEST_F(RetentionTest, APoolOverridesTheWindowForItsSubtreeAndAChangeRewindows) {
  Setup({{"/short", Retained(absl::Minutes(10))},
         {"/keep", Retained(absl::InfiniteDuration())},
         {"/keep/child", Pool(100'000)},
         {"/default", Pool(100'000)}});
  JobId short_job = RunToEnd("/short");
  JobId kept = RunToEnd("/keep/child");
  JobId plain = RunToEnd("/default");
  now_ += absl::Minutes(11);
  EXPECT_THAT(core_->retention().Expired(now_, 10), ElementsAre(short_job));
  now_ += absl::Hours(24 * 30);
  EXPECT_THAT(core_->retention().Expired(now_, 10), ElementsAre(short_job, plain))
      << "a child inherits forever from /keep";

  Actions a;
  ASSERT_TRUE(core_->pools().UpdatePool("/keep", Retained(absl::Hours(2)), false, a).ok());
  Commit(std::move(a));
  EXPECT_THAT(core_->retention().Expired(now_, 10), ElementsAre(short_job, plain, kept))
      << "expiries follow the new window at once";
}

TEST_F(RetentionTest, AJobThatRunsAgainIsNotPurgedAndFinishesAnew) {
  Setup({{"/a", Pool(100'000)}});
  JobId job = RunToEnd("/a", 1);
  now_ += absl::Hours(2);
  ASSERT_THAT(core_->retention().Expired(now_, 10), ElementsAre(job));
  Actions a;
  ASSERT_TRUE(core_->job_control().RestartInstances(job, {0}, now_, a).ok());
  Commit(std::move(a));
  EXPECT_EQ(core_->retention().finished(), 0u) << "it runs again";
  EXPECT_THAT(Purge({job}), IsEmpty()) << "a purge decided before the restart skips it";
  core_->agents().Heartbeat("h1", now_);
  for (const Launch& l : Cycle().launches) {
    Report(l, TaskState::kRunning);
    Report(l, TaskState::kSucceeded, 0);
  }
  EXPECT_THAT(core_->retention().Expired(now_, 10), IsEmpty()) << "its window starts again";
  now_ += absl::Hours(1);
  EXPECT_THAT(core_->retention().Expired(now_, 10), ElementsAre(job));
}

TEST_F(RetentionTest, LiveDaemonsAndServicesNeverExpireButKilledOnesDo) {
  Setup({{"/a", Pool(100'000)}});
  Actions a;
  JobSpec daemon = Batch(1);
  daemon.type = JobType::kDaemon;
  auto d = core_->job_control().CreateJob(daemon, "/a", now_, a);
  ASSERT_TRUE(d.ok()) << d.status();
  JobSpec service = Batch(1);
  service.type = JobType::kService;
  auto s = core_->job_control().CreateJob(service, "/a", now_, a);
  ASSERT_TRUE(s.ok()) << s.status();
  Commit(std::move(a));
  for (const Launch& l : Cycle().launches) Report(l, TaskState::kRunning);
  EXPECT_EQ(core_->retention().finished(), 0u);
  Actions kill;
  ASSERT_TRUE(core_->job_control().KillJob(*s, now_, kill).ok());
  ASSERT_TRUE(core_->job_control().KillJob(*d, now_, kill).ok());
  Commit(kill);
  for (const jobmgr::KillCommand& k : kill.kills) Report(k.run, k.host, TaskState::kKilled);
  EXPECT_EQ(core_->retention().finished(), 2u);
  now_ += absl::Hours(2);
  EXPECT_EQ(core_->retention().Expired(now_, 10).size(), 2u);
}

TEST_F(RetentionTest, ARestartedCoreKnowsWhenEachJobFinished) {
  Setup({{"/a", Pool(100'000)}});
  JobId early = RunToEnd("/a");
  now_ += absl::Minutes(30);
  JobId late = RunToEnd("/a");
  now_ += absl::Minutes(40);  // early: 70 minutes ago; late: 40

  core_ = NewCore();
  auto contents = store_.Load();
  ASSERT_TRUE(contents.ok());
  Actions restored;
  ASSERT_TRUE(core_->Restore(*contents, now_, restored).ok());
  Commit(restored);
  EXPECT_EQ(core_->retention().finished(), 2u);
  EXPECT_THAT(core_->retention().Expired(now_, 10), ElementsAre(early));
  now_ += absl::Minutes(20);
  EXPECT_THAT(core_->retention().Expired(now_, 10), ElementsAre(early, late));
}

}  // namespace
}  // namespace paceline::scheduler
