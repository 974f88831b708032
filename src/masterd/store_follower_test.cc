// StoreFollower (store_follower.h) on a real PostgreSQL, as a standby follows its leader: the
// mirror follows the leader's commits by changes, and once the leader has compacted the changes
// past the mirror's revision (store/postgres/change_compaction.h), the next read takes the store
// whole and the mirror equals the leader's store again.

#include "masterd/store_follower.h"

#include <gtest/gtest.h>

#include "absl/synchronization/notification.h"
#include "store/postgres/postgres_store.h"
#include "store/testing/followed_records.h"
#include "store/testing/postgres_test_base.h"

namespace paceline::masterd {
namespace {

class StoreFollowerTest : public store::testing::PostgresDatabaseTest {
 protected:
  // Follows at once and waits until the mirror reaches `rev`; false after 10 s.
  bool FollowUntil(StoreFollower& follower, int64_t rev) {
    for (absl::Time end = absl::Now() + absl::Seconds(10); absl::Now() < end;) {
      const int64_t at = loop_.Call<int64_t>([&] {
        follower.FollowSoon();
        follower.Follow();
        return follower.mirror().rev();
      });
      if (at >= rev) return true;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return false;
  }

  EventLoop loop_{absl::Hours(1), [] {}};
};

TEST_F(StoreFollowerTest, AMirrorBehindACompactionReadsTheStoreWholeAndEqualsItAgain) {
  auto leader = MustOpen();
  auto standby = MustOpen();
  ASSERT_NE(leader, nullptr);
  ASSERT_NE(standby, nullptr);
  loop_.Start();
  store::GroupCommitter committer(standby.get());
  StoreFollower follower(&committer, &loop_, nullptr);

  const records::WriteBatch first = store::testing::JobWithTasks(8);
  ASSERT_TRUE(leader->Commit(first).ok());
  ASSERT_TRUE(FollowUntil(follower, leader->CommittedRevision()));

  int64_t third = 0;
  for (uint32_t run = 2; run <= 5; ++run) {
    records::WriteBatch b;
    b.put_tasks.push_back(store::testing::FollowedTask(1, run, run));
    b.delete_tasks.push_back(TaskId{JobId(1), run + 2});
    ASSERT_TRUE(leader->Commit(b).ok());
    if (run == 4) third = leader->CommittedRevision();
  }
  leader->CompactChangesBefore(third);
  records::WriteBatch last;
  last.put_tasks.push_back(store::testing::FollowedTask(1, 0, 9));
  ASSERT_TRUE(leader->Commit(last).ok());
  ASSERT_TRUE(FollowUntil(follower, leader->CommittedRevision()));

  auto want = leader->Load();
  ASSERT_TRUE(want.ok()) << want.status();
  const records::StoreContents got =
      loop_.Call<records::StoreContents>([&] { return follower.mirror().Contents(); });
  EXPECT_EQ(got.tasks, want->tasks);
  EXPECT_EQ(got.jobs.size(), want->jobs.size());
  loop_.Stop();
}

}  // namespace
}  // namespace paceline::masterd
