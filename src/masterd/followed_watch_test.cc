// A standby's watch events (followed_watch.h): a task whose state or run changed gives one
// event of its new state at the time its row says; an unchanged row none; a job change comes
// from the jobs as they are once the changes are applied, and only when its state changed.

#include "masterd/followed_watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/test_util.h"

namespace paceline::masterd {
namespace {

using scheduler::testing::Batch;
using scheduler::testing::Host;
using scheduler::testing::Pool;

class FollowedWatchTest : public scheduler::testing::CoreTest {
 protected:
  void SetUp() override {
    CoreTest::SetUp();
    scheduler::Actions a;
    ASSERT_TRUE(core_->pools().CreatePool("/a", Pool(10'000), a).ok());
    ASSERT_TRUE(core_->agents().RegisterHost(Host("h1", 8), {}, now_, a).ok());
    auto id = core_->job_control().CreateJob(Batch(2), "/a", now_, a);
    ASSERT_TRUE(id.ok()) << id.status();
    job_ = *id;
    Commit(std::move(a));
    mirror_.Apply(Changes());
  }
  // Everything the store holds now, as a standby's read of it.
  store::StoreChanges Changes() {
    store::StoreChanges c;
    c.rev = ++rev_;
    c.changed = *store_.Load();
    return c;
  }
  // Notes the store's rows against the mirror, applies them, and takes the events.
  std::vector<v1::WatchEvent> FollowOnce() {
    store::StoreChanges c = Changes();
    watch_.Note(c, mirror_, now_);
    mirror_.Apply(std::move(c));
    return watch_.Take(core_->jobs(), now_);
  }

  JobId job_{0};
  int64_t rev_ = 0;
  store::StoreMirror mirror_;
  FollowedWatch watch_;
};

TEST_F(FollowedWatchTest, ATaskThatChangedGivesItsNewStateAndAJobChangeWhenTheJobDid) {
  // Nothing changed: nothing noted.
  store::StoreChanges same = Changes();
  watch_.Note(same, mirror_, now_);
  EXPECT_FALSE(watch_.pending());

  // Placed and launched: each task's new state, then the job's change.
  now_ += absl::Seconds(1);
  Cycle();
  std::vector<v1::WatchEvent> events = FollowOnce();
  ASSERT_EQ(events.size(), 3u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(events[i].job_id(), job_.value());
    EXPECT_EQ(events[i].task().instance(), static_cast<uint32_t>(i));
    EXPECT_EQ(events[i].task().event().state(), v1::Task::LAUNCHING);
  }
  EXPECT_TRUE(events[2].has_job());
  EXPECT_FALSE(watch_.pending());

  // The same rows again: nothing.
  EXPECT_TRUE(FollowOnce().empty());
}

}  // namespace
}  // namespace paceline::masterd
