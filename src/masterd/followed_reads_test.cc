// A standby's read state (followed_reads.h): built from the mirror, rebuilt at once for a
// revision asked for, otherwise no sooner than its gap; it never schedules and sends the reader
// of a pending task to the leader.

#include "masterd/followed_reads.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/test_util.h"

namespace paceline::masterd {
namespace {

using scheduler::testing::Batch;
using scheduler::testing::Pool;
using ::testing::HasSubstr;

class FollowedReadsTest : public scheduler::testing::CoreTest {
 protected:
  // A job of `instances` in /a on the leader's core, committed to its store.
  JobId Submit(uint32_t instances) {
    scheduler::Actions a;
    if (!pool_made_) {
      EXPECT_TRUE(core_->pools().CreatePool("/a", Pool(10'000), a).ok());
      pool_made_ = true;
    }
    auto id = core_->job_control().CreateJob(Batch(instances), "/a", now_, a);
    EXPECT_TRUE(id.ok()) << id.status();
    Commit(std::move(a));
    return id.ok() ? *id : JobId(0);
  }
  // What a standby reads of the store at revision `rev`: all of it.
  void Follow(int64_t rev) {
    store::StoreChanges changes;
    changes.rev = rev;
    changes.changed = *store_.Load();
    mirror_.Apply(std::move(changes));
  }

  bool pool_made_ = false;
  store::StoreMirror mirror_;
  FollowedReads reads_{scheduler::CoreConfig{}};
};

TEST_F(FollowedReadsTest, BuildsFromTheMirrorAndRebuildsAtOnceOnlyForARevisionAskedFor) {
  EXPECT_EQ(reads_.core(), nullptr);
  const JobId first = Submit(2);
  Follow(5);
  absl::StatusOr<int64_t> rev = reads_.Refresh(mirror_, store::kNoRevision, now_);
  ASSERT_TRUE(rev.ok()) << rev.status();
  EXPECT_EQ(*rev, 5);
  ASSERT_NE(reads_.core(), nullptr);
  ASSERT_NE(reads_.core()->jobs().GetJob(first), nullptr);
  // Never scheduled: a pending task's reader is sent to the leader.
  EXPECT_THAT(reads_.core()->WhyPending(TaskId{first, 0}), HasSubstr("the leader says why"));

  const JobId second = Submit(1);
  Follow(6);
  // Within the gap, an answer that needs no newer revision comes from the state as it is...
  EXPECT_EQ(*reads_.Refresh(mirror_, 5, now_ + absl::Milliseconds(10)), 5);
  EXPECT_EQ(reads_.core()->jobs().GetJob(second), nullptr);
  // ...and one that asks for revision 6 has it at once.
  EXPECT_EQ(*reads_.Refresh(mirror_, 6, now_ + absl::Milliseconds(20)), 6);
  EXPECT_NE(reads_.core()->jobs().GetJob(second), nullptr);

  const JobId third = Submit(1);
  Follow(7);
  EXPECT_EQ(*reads_.Refresh(mirror_, store::kNoRevision,
                            now_ + FollowedReads::kMinRebuildGap + absl::Seconds(10)),
            7);
  EXPECT_NE(reads_.core()->jobs().GetJob(third), nullptr);
  reads_.Clear();
  EXPECT_EQ(reads_.core(), nullptr);
}

}  // namespace
}  // namespace paceline::masterd
