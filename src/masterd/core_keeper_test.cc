// CoreKeeper::BecomeLeader on a real PostgreSQL, as a standby takes over: it builds the core
// from its followed copy of the store plus the changes since; when the leader has compacted
// those changes (store/postgres/change_compaction.h) it reads the store whole instead, and the
// core it builds holds what the leader committed last either way.

#include "masterd/core_keeper.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "api/event_hub.h"
#include "masterd/agent_registry.h"
#include "masterd/commit_path.h"
#include "masterd/event_loop.h"
#include "store/group_commit.h"
#include "store/postgres/postgres_store.h"
#include "store/testing/followed_records.h"
#include "store/testing/postgres_test_base.h"

namespace paceline::masterd {
namespace {

using store::testing::FollowedTask;

// A standby master's parts around its keeper, on `store`; its loop ticks once an hour, so it
// follows the store only when the test kicks it.
class Standby {
 public:
  explicit Standby(store::Store* store)
      : committer_(std::make_unique<store::GroupCommitter>(store)),
        loop_(
            absl::Hours(1), [this] { keeper_.Recover(); }, [this] { commits_.CommitTurn(); }),
        commits_(committer_.get(), &loop_, &hub_, &agents_,
                 [this](const absl::Status& s) {
                   keeper_.OnStoreFailure(s);
                   return keeper_.refusal();
                 }),
        keeper_(scheduler::CoreConfig{}, /*led_by_lease=*/true,
                CoreKeeper::Parts{committer_.get(), &loop_, &commits_, &hub_, &agents_}) {}
  // As the master stops (Cluster::Stop): the loop, then the commits still pending.
  ~Standby() {
    loop_.Stop();
    committer_.reset();
  }

  absl::Status Start() {
    absl::Status s = keeper_.Start();
    loop_.Start();
    return s;
  }
  // Follows the store once (a tick); false when no read completed within 10 s.
  bool FollowOnce() {
    loop_.Kick();
    for (absl::Time end = absl::Now() + absl::Seconds(10); absl::Now() < end;) {
      if (keeper_.ReplicationLag() != absl::InfiniteDuration()) return true;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return false;
  }
  absl::Status BecomeLeader() {
    return keeper_.BecomeLeader([](store::Store&) {});
  }
  // The run of each task of `job` in the core, by instance.
  std::map<uint32_t, uint32_t> Runs(JobId job) {
    return loop_.Call<std::map<uint32_t, uint32_t>>([&] {
      std::map<uint32_t, uint32_t> runs;
      const jobmgr::Job* j = keeper_.core().jobs().GetJob(job);
      if (j == nullptr) return runs;
      for (uint32_t i = 0; i < j->spec().instances; ++i) runs[i] = j->task(i).run;
      return runs;
    });
  }

 private:
  std::unique_ptr<store::GroupCommitter> committer_;
  api::EventHub hub_;
  AgentRegistry agents_;
  EventLoop loop_;
  CommitPath commits_;
  CoreKeeper keeper_;
};

class CoreKeeperTakeOverTest : public store::testing::PostgresDatabaseTest {
 protected:
  // Pool /p, and job 1 with its four tasks at their first run.
  static records::WriteBatch First() {
    records::WriteBatch b;
    b.put_pools.push_back(records::PoolRecord{"/p", PoolSpec{}});
    b.put_jobs.push_back(store::testing::FollowedJob(1, 1));
    for (uint32_t i = 0; i < 4; ++i) b.put_tasks.push_back(FollowedTask(1, i, 1));
    b.next_job_id = 2;
    return b;
  }
  // Runs 2 to 4 of instances 2, 3 and 0, committed by the leader; the revision of run 3.
  static int64_t MoreRuns(store::PostgresStore& leader) {
    int64_t third = 0;
    for (uint32_t run = 2; run <= 4; ++run) {
      records::WriteBatch b;
      b.put_tasks.push_back(FollowedTask(1, run % 4, run));
      EXPECT_TRUE(leader.Commit(b).ok());
      if (run == 3) third = leader.CommittedRevision();
    }
    return third;
  }
  // Commits First() as the leader, then starts a standby on a connection of its own that
  // follows it once; the revision followed (0 when something failed).
  int64_t StartFollowing() {
    leader_ = MustOpen();
    own_ = MustOpen();
    if (leader_ == nullptr || own_ == nullptr || !leader_->Commit(First()).ok()) return 0;
    standby_ = std::make_unique<Standby>(own_.get());
    if (!standby_->Start().ok() || !standby_->FollowOnce()) return 0;
    return leader_->CommittedRevision();
  }
  // What the leader's store holds: the run of each task of job 1, by instance.
  static std::map<uint32_t, uint32_t> StoredRuns(store::PostgresStore& leader) {
    std::map<uint32_t, uint32_t> runs;
    auto contents = leader.Load();
    EXPECT_TRUE(contents.ok()) << contents.status();
    if (!contents.ok()) return runs;
    for (const records::TaskRecord& t : contents->tasks) {
      if (t.id.job == JobId(1)) runs[t.id.instance] = t.run;
    }
    return runs;
  }

  std::unique_ptr<store::PostgresStore> leader_;
  std::unique_ptr<store::PostgresStore> own_;  // the standby's connection
  std::unique_ptr<Standby> standby_;
};

TEST_F(CoreKeeperTakeOverTest, AStandbyTakesOverFromItsFollowedCopyAndTheChangesSince) {
  const int64_t followed = StartFollowing();
  ASSERT_GT(followed, 0);
  MoreRuns(*leader_);
  ASSERT_TRUE(own_->ReadChanges(followed).ok());  // the changes since are kept
  ASSERT_TRUE(standby_->BecomeLeader().ok());
  EXPECT_EQ(standby_->Runs(JobId(1)), StoredRuns(*leader_));
  EXPECT_EQ(standby_->Runs(JobId(1)).at(0), 4u);
}

TEST_F(CoreKeeperTakeOverTest, AStandbyBehindACompactionTakesOverFromTheWholeStore) {
  const int64_t followed = StartFollowing();
  ASSERT_GT(followed, 0);
  // The leader compacts the changes the standby has not read, then commits once more.
  leader_->CompactChangesBefore(MoreRuns(*leader_));
  records::WriteBatch last;
  last.put_tasks.push_back(FollowedTask(1, 1, 9));
  ASSERT_TRUE(leader_->Commit(last).ok());
  EXPECT_EQ(own_->ReadChanges(followed).status().code(), absl::StatusCode::kOutOfRange);

  ASSERT_TRUE(standby_->BecomeLeader().ok());
  EXPECT_EQ(standby_->Runs(JobId(1)), StoredRuns(*leader_));
  EXPECT_EQ(standby_->Runs(JobId(1)).at(1), 9u);
}

}  // namespace
}  // namespace paceline::masterd
