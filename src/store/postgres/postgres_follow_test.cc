// Following a PostgreSQL store as a standby does (store_mirror.h), on a real server: a mirror
// fed only the changes after its revision equals a full load after every commit of a long,
// random mix of writes and deletions; a delta holds only what changed; tokens and secrets (put,
// replaced and deleted) come through the changes (audit records do not); changes older than a
// compaction are refused and the store still reads whole; a database of schema version 1 is
// migrated and followed from its first rows.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "absl/strings/str_cat.h"
#include "spec/yaml_spec.h"
#include "store/postgres/postgres_store.h"
#include "store/postgres/schema.h"
#include "store/store_mirror.h"
#include "store/testing/followed_records.h"
#include "store/testing/postgres_test_base.h"

namespace paceline::store {
namespace {

using testing::FollowedJob;
using testing::FollowedTask;
using testing::JobWithTasks;

class StoreFollowTest : public testing::PostgresDatabaseTest {
 protected:
  // Reads the changes after the mirror's revision into it; how many rows they held.
  size_t Follow(PostgresStore& store, StoreMirror& mirror) {
    absl::StatusOr<StoreChanges> changes = store.ReadChanges(mirror.rev());
    EXPECT_TRUE(changes.ok()) << changes.status();
    if (!changes.ok()) return 0;
    EXPECT_GE(changes->rev, mirror.rev());
    size_t rows = changes->rows();
    mirror.Apply(*std::move(changes));
    return rows;
  }
  static void ExpectSame(const records::StoreContents& a, const records::StoreContents& b) {
    EXPECT_EQ(a.pools, b.pools);
    EXPECT_EQ(a.jobs, b.jobs);
    EXPECT_EQ(a.tasks, b.tasks);
    EXPECT_EQ(a.hosts, b.hosts);
    EXPECT_EQ(a.tokens, b.tokens);
    EXPECT_EQ(a.secrets, b.secrets);
    EXPECT_EQ(a.next_job_id, b.next_job_id);
    EXPECT_EQ(a.cluster_id, b.cluster_id);
  }
};

records::TokenRecord Token(const std::string& id, const std::string& user) {
  records::TokenRecord t;
  t.id = id;
  t.name = "ci";
  t.user = user;
  t.group = "g";
  t.role = "submitter";
  t.scope = "/p";
  t.salt = "00";
  t.hash = "ff";
  t.created_by = "root";
  t.created_at = absl::FromUnixSeconds(100);
  return t;
}

records::SecretRecord Secret(const std::string& path, const std::string& sealed) {
  records::SecretRecord r;
  r.path = path;
  r.key_id = "k1";
  r.sealed = sealed;
  r.created_by = "root";
  r.created_at = absl::FromUnixSeconds(100);
  r.updated_at = absl::FromUnixSeconds(100);
  return r;
}

TEST_F(StoreFollowTest, AMirrorFedOnlyTheChangesEqualsAFullLoadAfterEveryCommit) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  StoreMirror mirror;
  std::mt19937 rng(20261125);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  uint64_t next_job = 1;
  for (int step = 0; step < 300; ++step) {
    records::WriteBatch b;
    switch (pick(9)) {
      case 0: {  // a pool, created, changed or deleted (and created again later)
        std::string path = "/p" + std::to_string(pick(3));
        if (pick(3) == 0) {
          b.delete_pools.push_back(path);
        } else {
          PoolSpec p;
          p.dim(Dim::kCpu).reservation = 1000 * (1 + pick(5));
          b.put_pools.push_back({path, p});
        }
        break;
      }
      case 1:  // a new job with its tasks
        b.put_jobs.push_back(FollowedJob(next_job, 1));
        for (uint32_t i = 0; i < 4; ++i) b.put_tasks.push_back(FollowedTask(next_job, i, 1));
        b.next_job_id = ++next_job;
        break;
      case 2:  // a job deleted with its tasks
        if (next_job > 1) b.delete_jobs.push_back(JobId(1 + pick(static_cast<int>(next_job - 1))));
        break;
      case 3:  // an instance removed by a scale-down
        if (next_job > 1) {
          b.delete_tasks.push_back(TaskId{JobId(1 + pick(static_cast<int>(next_job - 1))),
                                          static_cast<uint32_t>(pick(4))});
        }
        break;
      case 4: {  // a host joins or changes; a token is created or revoked
        b.put_hosts.push_back(
            records::HostRecord{"h" + std::to_string(pick(4)),
                                records::HostMaintenance::kUp,
                                Resources::Of(1000 * (1 + pick(8)), int64_t{1} << 30),
                                {{"zone", "z"}}});
        records::TokenRecord t = Token("tok-" + std::to_string(pick(3)), "u");
        if (pick(2) == 0) t.revoked_at = absl::FromUnixSeconds(1000 + step);
        b.put_tokens.push_back(t);
        break;
      }
      case 6: {  // a secret put, replaced or deleted (and put again later)
        std::string path = "/p" + std::to_string(pick(2)) + "/s" + std::to_string(pick(3));
        if (pick(3) == 0) {
          b.delete_secrets.push_back(path);
        } else {
          b.put_secrets.push_back(Secret(path, absl::StrCat(absl::Hex(step, absl::kZeroPad4))));
        }
        break;
      }
      case 5:  // a job updated
        if (next_job > 1) {
          b.put_jobs.push_back(FollowedJob(1 + pick(static_cast<int>(next_job - 1)), 2 + pick(5)));
        }
        break;
      default:  // task transitions, possibly of an instance removed before (it is back)
        for (int k = 0; k < 3 && next_job > 1; ++k) {
          b.put_tasks.push_back(FollowedTask(1 + pick(static_cast<int>(next_job - 1)),
                                             static_cast<uint32_t>(pick(4)), 1 + pick(9)));
        }
        break;
    }
    ASSERT_TRUE(store->Commit(b).ok()) << "step " << step;
    Follow(*store, mirror);
    absl::StatusOr<records::StoreContents> loaded = store->Load();
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    ExpectSame(mirror.Contents(), *loaded);
    if (::testing::Test::HasFailure()) FAIL() << "differs after step " << step;
  }
}

TEST_F(StoreFollowTest, ADeltaHoldsOnlyWhatChangedSinceTheRevision) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Commit(JobWithTasks(2000)).ok());
  StoreMirror mirror;
  EXPECT_EQ(Follow(*store, mirror), 2001u);
  EXPECT_EQ(Follow(*store, mirror), 0u) << "nothing changed";

  records::WriteBatch one;
  one.put_tasks.push_back(FollowedTask(1, 7, 2));
  one.delete_tasks.push_back(TaskId{JobId(1), 9});
  ASSERT_TRUE(store->Commit(one).ok());
  absl::StatusOr<StoreChanges> delta = store->ReadChanges(mirror.rev());
  ASSERT_TRUE(delta.ok()) << delta.status();
  ASSERT_EQ(delta->changed.tasks.size(), 1u);
  EXPECT_EQ(delta->changed.tasks[0], FollowedTask(1, 7, 2));
  EXPECT_THAT(delta->deleted_tasks, ::testing::ElementsAre(TaskId{JobId(1), 9}));
  EXPECT_TRUE(delta->changed.jobs.empty());
  EXPECT_GT(delta->rev, mirror.rev());
  mirror.Apply(*std::move(delta));
  EXPECT_EQ(mirror.tasks(), 1999u);
}

// Compaction (change_compaction.h): the changes older than the compacted revision go, but each
// table's newest row; a standby behind it is refused (OUT_OF_RANGE) and reads the store whole,
// one at it is brought up to date by changes as before, and the newest revision stays.
TEST_F(StoreFollowTest, ChangesOlderThanACompactionAreRefusedAndTheWholeStoreStillReads) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Commit(JobWithTasks(10)).ok());
  StoreMirror behind;
  Follow(*store, behind);
  std::vector<int64_t> revs;
  for (uint32_t run = 2; run <= 5; ++run) {
    records::WriteBatch b;
    b.put_tasks.push_back(FollowedTask(1, run, run));
    b.delete_tasks.push_back(TaskId{JobId(1), run + 4});
    ASSERT_TRUE(store->Commit(b).ok());
    revs.push_back(store->CommittedRevision());
  }
  StoreMirror at;  // up to date before the compaction
  Follow(*store, at);
  ASSERT_EQ(at.rev(), revs.back());
  store->CompactChangesBefore(revs[2]);
  records::WriteBatch after;
  after.put_tasks.push_back(FollowedTask(1, 0, 9));
  ASSERT_TRUE(store->Commit(after).ok());
  const int64_t newest = store->CommittedRevision();
  auto c = PgConn::Connect(url_, absl::Seconds(5));
  ASSERT_TRUE(c.ok()) << c.status();
  auto left = (*c)->Query(
      "SELECT (SELECT count(*) FROM task_changes WHERE rev < $1::bigint) + "
      "(SELECT count(*) FROM deletions WHERE rev < $1::bigint)",
      {absl::StrCat(revs[2])}, "the rows left");
  ASSERT_TRUE(left.ok()) << left.status();
  EXPECT_EQ(left->Text(0, 0), "0");

  absl::StatusOr<StoreChanges> refused = store->ReadChanges(behind.rev());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kOutOfRange) << refused.status();
  EXPECT_THAT(refused.status().message(), ::testing::HasSubstr("read the store whole"));
  absl::StatusOr<StoreChanges> from_second = store->ReadChanges(revs[1]);
  ASSERT_TRUE(from_second.ok()) << from_second.status();
  EXPECT_EQ(from_second->rev, newest);
  EXPECT_THAT(from_second->deleted_tasks,
              ::testing::ElementsAre(TaskId{JobId(1), 8}, TaskId{JobId(1), 9}));
  absl::StatusOr<StoreChanges> whole = store->ReadChanges(kNoRevision);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->rev, newest);
  StoreMirror again;
  again.Apply(*std::move(whole));
  ExpectSame(std::move(again).TakeContents(), *store->Load());
  Follow(*store, at);
  ExpectSame(std::move(at).TakeContents(), *store->Load());
}

// The revision a leader stamps its answers with (read-your-writes on a standby): that of its
// last commit of followed rows, which a standby's changes then reach; a commit of events or
// audit records only does not move it, so a standby can always reach it.
TEST_F(StoreFollowTest, TheCommittedRevisionIsOneAStandbyReaches) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->CommittedRevision(), kNoRevision);
  records::WriteBatch job;
  job.put_jobs.push_back(FollowedJob(1, 1));
  job.put_tasks.push_back(FollowedTask(1, 0, 1));
  ASSERT_TRUE(store->Commit(job).ok());
  const int64_t wrote = store->CommittedRevision();
  EXPECT_GE(wrote, 0);
  StoreMirror mirror;
  Follow(*store, mirror);
  EXPECT_EQ(mirror.rev(), wrote);

  records::WriteBatch audit_only;
  audit_only.audit.push_back(records::AuditRecord{});
  audit_only.audit.back().at = absl::FromUnixSeconds(5);
  audit_only.audit.back().action = "x";
  ASSERT_TRUE(store->Commit(audit_only).ok());
  EXPECT_EQ(store->CommittedRevision(), wrote);
  Follow(*store, mirror);
  EXPECT_GE(mirror.rev(), store->CommittedRevision());

  records::WriteBatch task;
  task.put_tasks.push_back(FollowedTask(1, 0, 2));
  ASSERT_TRUE(store->Commit(task).ok());
  EXPECT_GT(store->CommittedRevision(), wrote);
  Follow(*store, mirror);
  EXPECT_EQ(mirror.rev(), store->CommittedRevision());
}

TEST_F(StoreFollowTest, TokensComeThroughTheChangesSoAStandbyKnowsEveryToken) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  records::WriteBatch first;
  first.put_jobs.push_back(FollowedJob(1, 1));
  first.put_tokens = {Token("tok-a", "alice"), Token("tok-b", "bob")};
  records::AuditRecord audit;
  audit.user = "root";
  audit.target = "token tok-a";
  first.audit = {audit, audit};
  ASSERT_TRUE(store->Commit(first).ok());
  StoreMirror mirror;
  EXPECT_EQ(Follow(*store, mirror), 3u) << "a job and two tokens; audit records are not rows";
  EXPECT_THAT(mirror.Contents().tokens,
              ::testing::ElementsAre(Token("tok-a", "alice"), Token("tok-b", "bob")));

  // A revocation, alone in its commit with its audit record: the delta is that token.
  records::TokenRecord revoked = Token("tok-b", "bob");
  revoked.revoked_at = absl::FromUnixSeconds(200);
  records::WriteBatch revoke;
  revoke.put_tokens = {revoked};
  revoke.audit = {audit};
  ASSERT_TRUE(store->Commit(revoke).ok());
  absl::StatusOr<StoreChanges> delta = store->ReadChanges(mirror.rev());
  ASSERT_TRUE(delta.ok()) << delta.status();
  EXPECT_THAT(delta->changed.tokens, ::testing::ElementsAre(revoked));
  EXPECT_EQ(delta->rows(), 1u);
  EXPECT_GT(delta->rev, mirror.rev());
  mirror.Apply(*std::move(delta));
  // A commit of audit records only changes nothing a standby follows.
  records::WriteBatch only_audit;
  only_audit.audit = {audit};
  ASSERT_TRUE(store->Commit(only_audit).ok());
  EXPECT_EQ(Follow(*store, mirror), 0u);
  absl::StatusOr<records::StoreContents> loaded = store->Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ExpectSame(mirror.Contents(), *loaded);
  ExpectSame(StoreMirror(mirror).TakeContents(), *loaded);
}

TEST_F(StoreFollowTest, AStandbySeesASecretPutReplacedAndDeleted) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  records::WriteBatch first;
  first.put_secrets = {Secret("/p/db-password", "00aa"), Secret("/p/api-key", "11bb")};
  ASSERT_TRUE(store->Commit(first).ok());
  StoreMirror mirror;
  EXPECT_EQ(Follow(*store, mirror), 2u);
  EXPECT_THAT(mirror.Contents().secrets, ::testing::ElementsAre(Secret("/p/api-key", "11bb"),
                                                                Secret("/p/db-password", "00aa")));

  // Replaced: the delta is the secret as it is now.
  records::SecretRecord rotated = Secret("/p/db-password", "22cc");
  rotated.key_id = "k2";
  rotated.updated_at = absl::FromUnixSeconds(200);
  records::WriteBatch replace;
  replace.put_secrets = {rotated};
  ASSERT_TRUE(store->Commit(replace).ok());
  absl::StatusOr<StoreChanges> delta = store->ReadChanges(mirror.rev());
  ASSERT_TRUE(delta.ok()) << delta.status();
  EXPECT_THAT(delta->changed.secrets, ::testing::ElementsAre(rotated));
  EXPECT_TRUE(delta->deleted_secrets.empty());
  EXPECT_EQ(delta->rows(), 1u);
  mirror.Apply(*std::move(delta));
  EXPECT_THAT(mirror.Contents().secrets,
              ::testing::ElementsAre(Secret("/p/api-key", "11bb"), rotated));

  // Deleted: the delta names its path and holds no row.
  records::WriteBatch del;
  del.delete_secrets = {"/p/api-key"};
  ASSERT_TRUE(store->Commit(del).ok());
  delta = store->ReadChanges(mirror.rev());
  ASSERT_TRUE(delta.ok()) << delta.status();
  EXPECT_THAT(delta->deleted_secrets, ::testing::ElementsAre("/p/api-key"));
  EXPECT_TRUE(delta->changed.secrets.empty());
  EXPECT_EQ(delta->rows(), 1u);
  EXPECT_GT(delta->rev, mirror.rev());
  mirror.Apply(*std::move(delta));
  EXPECT_THAT(mirror.Contents().secrets, ::testing::ElementsAre(rotated));

  // Deleted and put again in one commit, and put then deleted over two commits read at once:
  // the first is there, the second is not.
  records::WriteBatch again;
  again.delete_secrets = {"/p/db-password"};
  again.put_secrets = {Secret("/p/db-password", "33dd"), Secret("/p/short-lived", "44ee")};
  ASSERT_TRUE(store->Commit(again).ok());
  records::WriteBatch gone;
  gone.delete_secrets = {"/p/short-lived", "/p/never-there"};
  ASSERT_TRUE(store->Commit(gone).ok());
  Follow(*store, mirror);
  EXPECT_THAT(mirror.Contents().secrets, ::testing::ElementsAre(Secret("/p/db-password", "33dd")));
  absl::StatusOr<records::StoreContents> loaded = store->Load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ExpectSame(mirror.Contents(), *loaded);
  ExpectSame(StoreMirror(mirror).TakeContents(), *loaded);
  EXPECT_EQ(Follow(*store, mirror), 0u) << "nothing changed";
}

TEST_F(StoreFollowTest, ASchemaVersionOneDatabaseIsMigratedAndFollowedFromItsFirstRows) {
  {
    auto c = PgConn::Connect(url_, absl::Seconds(5));
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE((*c)->Exec(pg::kSchemaV1, "schema 1").ok());
    ASSERT_TRUE((*c)->Exec("INSERT INTO meta VALUES ('schema_version', '1'), "
                           "('cluster_id', 'c1'), ('next_job_id', '2'); "
                           "INSERT INTO hosts VALUES ('h1', 0, 1000, 1073741824, 0, 0, '{}')",
                           "rows of version 1")
                    .ok());
    PoolSpec pool;
    pool.dim(Dim::kCpu).reservation = 1000;
    ASSERT_TRUE(
        (*c)->Query("INSERT INTO pools VALUES ($1, $2)", {"/p", PrintPoolSpec(pool)}, "a pool")
            .ok());
  }
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  StoreMirror mirror;
  Follow(*store, mirror);
  records::StoreContents c = mirror.Contents();
  ASSERT_EQ(c.pools.size(), 1u);
  ASSERT_EQ(c.hosts.size(), 1u);
  EXPECT_EQ(c.cluster_id, "c1");
  EXPECT_EQ(c.next_job_id, 2u);
  records::WriteBatch b;
  b.delete_pools.push_back("/p");
  ASSERT_TRUE(store->Commit(b).ok());
  EXPECT_EQ(Follow(*store, mirror), 1u);
  EXPECT_TRUE(mirror.Contents().pools.empty());
}

}  // namespace
}  // namespace paceline::store
