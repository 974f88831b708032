// Pipelined commits on a real PostgreSQL (postgres_store.h): two in flight commit in order; a
// commit sent behind one that failed, at any statement or at COMMIT itself, does not commit;
// the group committer fails every batch behind a failed commit, and sends a batch submitted
// during a commit without waiting for it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "store/fault_injecting_store.h"
#include "store/group_commit.h"
#include "store/postgres/postgres_store.h"
#include "store/testing/postgres_test_base.h"

namespace paceline::store {
namespace {

using ::testing::HasSubstr;

class PostgresPipelineTest : public testing::PostgresDatabaseTest {};

records::WriteBatch PoolBatch(const std::string& path) {
  records::WriteBatch b;
  b.put_pools.push_back({path, PoolSpec()});
  return b;
}

// Two commits in flight on the one connection: they commit in order, and one sent behind a
// commit that failed does not commit (paceline_chain); the next commit sent alone commits.
TEST_F(PostgresPipelineTest, ACommitSentBehindAFailedOneDoesNotCommit) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  ASSERT_EQ(store->MaxCommitsInFlight(), 2);
  records::WriteBatch a = PoolBatch("/a"), b = PoolBatch("/b");
  ASSERT_TRUE(store->SendCommit({&a}).ok());
  ASSERT_TRUE(store->SendCommit({&b}).ok());
  EXPECT_FALSE(store->SendCommit({&b}).ok());  // two at most
  ASSERT_TRUE(store->FinishCommit().ok());
  ASSERT_TRUE(store->FinishCommit().ok());
  EXPECT_EQ(store->Load()->pools.size(), 2u);

  records::WriteBatch bad = PoolBatch("/c");
  records::HostRecord host;
  host.name = "bad \xff byte";  // not UTF-8: the server refuses it
  bad.put_hosts.push_back(host);
  records::WriteBatch behind = PoolBatch("/d");
  ASSERT_TRUE(store->SendCommit({&bad}).ok());
  ASSERT_TRUE(store->SendCommit({&behind}).ok());
  EXPECT_FALSE(store->FinishCommit().ok());
  EXPECT_FALSE(store->FinishCommit().ok());
  EXPECT_EQ(store->Load()->pools.size(), 2u);  // neither /c nor /d
  ASSERT_TRUE(store->Commit(behind).ok());
  EXPECT_EQ(store->Load()->pools.size(), 3u);
}

// The case the chain is for: the first commit fails at COMMIT itself (here a deferred
// constraint trigger), after which the server would run the second as a transaction of its own.
TEST_F(PostgresPipelineTest, ACommitSentBehindOneThatFailsAtCommitDoesNotCommit) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  {
    auto c = PgConn::Connect(url_, absl::Seconds(5));
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE(
        (*c)->Exec("CREATE FUNCTION refuse_bad() RETURNS trigger LANGUAGE plpgsql AS $$ "
                   "BEGIN IF NEW.path = '/bad' THEN RAISE EXCEPTION 'refused at commit'; "
                   "END IF; RETURN NULL; END $$; "
                   "CREATE CONSTRAINT TRIGGER refuse_bad AFTER INSERT ON pools "
                   "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_bad()",
                   "a trigger at commit")
            .ok());
  }
  records::WriteBatch bad = PoolBatch("/bad"), behind = PoolBatch("/behind");
  ASSERT_TRUE(store->SendCommit({&bad}).ok());
  ASSERT_TRUE(store->SendCommit({&behind}).ok());
  absl::Status first = store->FinishCommit();
  EXPECT_THAT(first.message(), HasSubstr("refused at commit"));
  absl::Status second = store->FinishCommit();
  EXPECT_EQ(second.code(), absl::StatusCode::kAborted) << second;
  EXPECT_THAT(second.message(), HasSubstr("the commit sent before this one did not commit"));
  EXPECT_TRUE(store->Load()->pools.empty());
  ASSERT_TRUE(store->Commit(behind).ok());
  EXPECT_EQ(store->Load()->pools.size(), 1u);
}

// The group committer on PostgreSQL: batches sent behind a failed one, in the same group or
// pipelined behind it, all fail with its error and leave nothing. Batches before it succeed
// unless they shared its group (how batches group depends on timing), so the successes are a
// prefix, and a pool is stored exactly when its batch succeeded.
TEST_F(PostgresPipelineTest, TheGroupCommitterFailsEveryBatchBehindAFailedCommit) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  std::vector<absl::Status> outcomes(20);
  {
    GroupCommitter committer(store.get());
    for (int i = 0; i < 20; ++i) {
      records::WriteBatch b = PoolBatch(absl::StrCat("/p", i));
      if (i == 3) {
        records::HostRecord host;
        host.name = "bad \xff byte";
        b.put_hosts.push_back(host);
      }
      committer.Submit(std::move(b), [&outcomes, i](absl::Status s) { outcomes[i] = s; });
      if (i < 3) absl::SleepFor(absl::Milliseconds(2));  // some groups of their own
    }
    committer.RunOnWriter([](Store&) {});
  }
  auto pools = store->Load()->pools;
  int succeeded = 0;
  while (succeeded < 20 && outcomes[succeeded].ok()) ++succeeded;
  EXPECT_LE(succeeded, 3);
  for (int i = succeeded; i < 20; ++i) {
    EXPECT_FALSE(outcomes[i].ok()) << i << " succeeded after a failed batch";
    EXPECT_THAT(outcomes[i].message(), HasSubstr("committing to the store")) << i;
  }
  EXPECT_EQ(pools.size(), static_cast<size_t>(succeeded));
  for (const records::PoolRecord& p : pools) {
    int n = 0;
    ASSERT_TRUE(absl::SimpleAtoi(p.path.substr(2), &n)) << p.path;
    EXPECT_TRUE(outcomes[n].ok()) << p.path << " is stored but its commit failed";
  }
}

// A batch submitted while a commit is in flight is sent at once, not after that commit: here
// the first commit waits for a lock another session holds, and the second is sent meanwhile.
TEST_F(PostgresPipelineTest, ABatchSubmittedDuringACommitIsSentWithoutWaitingForIt) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  // A first commit prepares the statements (preparing a write to a table takes a lock on it).
  ASSERT_TRUE(store->Commit(PoolBatch("/first")).ok());
  FaultInjectingStore counted(store.get());
  auto locker = PgConn::Connect(url_, absl::Seconds(5));
  ASSERT_TRUE(locker.ok()) << locker.status();
  ASSERT_TRUE((*locker)->Exec("BEGIN; LOCK TABLE pools IN EXCLUSIVE MODE", "locking").ok());
  auto sent = [&](int n) {
    for (absl::Time end = absl::Now() + absl::Seconds(10); absl::Now() < end;) {
      if (counted.sent_commits() >= n) return true;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return false;
  };
  std::atomic<int> answered{0};
  absl::Status a_status, b_status;
  {
    GroupCommitter committer(&counted);
    committer.Submit(PoolBatch("/a"), [&](absl::Status s) {
      a_status = s;
      ++answered;
    });
    ASSERT_TRUE(sent(1));
    committer.Submit(PoolBatch("/b"), [&](absl::Status s) {
      b_status = s;
      ++answered;
    });
    EXPECT_TRUE(sent(2)) << "the second batch waited for the first commit";
    EXPECT_EQ(answered.load(), 0);  // the first still waits for the lock
    ASSERT_TRUE((*locker)->Exec("COMMIT", "unlocking").ok());
    committer.RunOnWriter([](Store&) {});
  }
  EXPECT_TRUE(a_status.ok()) << a_status;
  EXPECT_TRUE(b_status.ok()) << b_status;
  EXPECT_EQ(store->Load()->pools.size(), 3u);
}

}  // namespace
}  // namespace paceline::store
