// PostgresStore beyond the conformance suite, on a real PostgreSQL server: schema versions (and
// the migration of a version-3 and of a version-4 database), connection strings, a failure deep
// inside a pipelined transaction (also among tokens, audit records and secrets), a server that
// goes away and comes back, fencing by term, and masters that start together.

#include "store/postgres/postgres_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "spec/yaml_spec.h"
#include "store/memory_store.h"
#include "store/postgres/pg_lease.h"
#include "store/postgres/schema.h"
#include "store/testing/postgres_test_base.h"

namespace paceline::store {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class PostgresStoreTest : public testing::PostgresDatabaseTest {
 protected:
  // Runs SQL on the test's database, outside any store.
  void Sql(const std::string& sql) {
    auto c = PgConn::Connect(url_, absl::Seconds(5));
    ASSERT_TRUE(c.ok()) << c.status();
    ASSERT_TRUE((*c)->Exec(sql, "test SQL").ok()) << sql;
  }

  static records::TaskRecord Task(uint32_t instance, std::string host = "host-1") {
    records::TaskRecord t;
    t.id = TaskId{JobId(1), instance};
    t.run = 1;
    t.state = TaskState::kRunning;
    t.host = std::move(host);
    return t;
  }
};

// One commit of several batches, as the group committer makes them, with more rows than one
// multi-row statement holds (task rows and events go 64 per statement), the same tasks written
// twice, an instance removed and added again, and a job deleted after its rows were written:
// PostgreSQL stores exactly what the in-memory store does.
TEST_F(PostgresStoreTest, ALargeMixedCommitStoresWhatTheMemoryStoreDoes) {
  auto pg = MustOpen();
  ASSERT_NE(pg, nullptr);
  MemoryStore mem;
  std::vector<records::WriteBatch> batches(4);
  // Events go by COPY in its text format: messages with its special characters come back whole.
  auto event = [](TaskId id, uint32_t run, int at, TaskState state) {
    return records::TaskEvent{RunId{id, run},
                              absl::FromUnixSeconds(at),
                              state,
                              "host-1",
                              "r",
                              at % 3 == 0 ? "exit\t1\r\nline two \\ \\N \\. caf\u00e9" : ""};
  };
  for (uint32_t i = 0; i < 150; ++i) {
    for (uint64_t job : {1, 2}) {
      records::TaskRecord t = Task(i);
      t.id.job = JobId(job);
      batches[0].put_tasks.push_back(t);
      batches[0].events.push_back(event(t.id, 1, static_cast<int>(i), TaskState::kRunning));
    }
    records::TaskRecord again = Task(i);  // the same row, later in the same commit
    again.run = 2;
    again.state = TaskState::kSucceeded;
    batches[1].put_tasks.push_back(again);
    batches[1].events.push_back(event(again.id, 2, 1000 + static_cast<int>(i), again.state));
  }
  batches[2].delete_tasks.push_back(TaskId{JobId(1), 5});
  batches[2].delete_jobs.push_back(JobId(2));
  records::TaskRecord back = Task(5);
  back.run = 3;
  batches[3].put_tasks.push_back(back);
  for (int k = 0; k < 70; ++k) {
    batches[3].events.push_back(event(TaskId{JobId(1), 7}, 2, 2000 + k, TaskState::kRunning));
  }
  std::vector<const records::WriteBatch*> all;
  for (const records::WriteBatch& b : batches) all.push_back(&b);
  ASSERT_TRUE(pg->CommitAll(all).ok());
  ASSERT_TRUE(mem.CommitAll(all).ok());
  auto got = pg->Load();
  auto want = mem.Load();
  ASSERT_TRUE(got.ok() && want.ok());
  EXPECT_EQ(got->tasks.size(), 150u);
  EXPECT_EQ(got->tasks, want->tasks);
  for (TaskId id : {TaskId{JobId(1), 0}, TaskId{JobId(1), 5}, TaskId{JobId(1), 7},
                    TaskId{JobId(1), 149}, TaskId{JobId(2), 3}}) {
    SCOPED_TRACE(absl::StrCat("task ", id.job.value(), "/", id.instance));
    auto pg_events = pg->ListEvents(id, 1000);
    auto mem_events = mem.ListEvents(id, 1000);
    ASSERT_TRUE(pg_events.ok() && mem_events.ok());
    EXPECT_EQ(*pg_events, *mem_events);
  }
  EXPECT_EQ(pg->ListEvents(TaskId{JobId(1), 7}, 1000)->size(), 72u);
}

// Events go in blocks (schema version 9), one row per job and commit, written by the commit's
// COPY; their texts are bytes in the block, so a message that is not UTF-8 is kept as it is
// (the old events table refused it, and with it the whole commit).
TEST_F(PostgresStoreTest, EventsOfACommitGoInOneBlockPerJobAndKeepTheirBytes) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  records::WriteBatch b;
  for (uint32_t i = 0; i < 100; ++i) {
    b.put_tasks.push_back(Task(i));
    b.events.push_back({RunId{TaskId{JobId(1 + i % 2), i}, 1}, absl::FromUnixSeconds(i),
                        TaskState::kRunning, "host-1", "r", "ok"});
  }
  b.events[90].message = "bad \xff byte";
  ASSERT_TRUE(store->Commit(b).ok());
  auto c = PgConn::Connect(url_, absl::Seconds(5));
  ASSERT_TRUE(c.ok()) << c.status();
  auto blocks = (*c)->Query("SELECT job, count FROM event_blocks ORDER BY job", {}, "blocks");
  ASSERT_TRUE(blocks.ok()) << blocks.status();
  ASSERT_EQ(blocks->size(), 2);
  EXPECT_EQ(*blocks->Int(0, 1, "count"), 50);
  EXPECT_EQ(*blocks->Int(1, 1, "count"), 50);
  auto events = store->ListEvents(TaskId{JobId(1), 90}, 10);
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ(events->at(0), b.events[90]);
}

TEST_F(PostgresStoreTest, ADatabaseOfANewerSchemaIsRefusedWithWhatToDo) {
  ASSERT_NE(MustOpen(), nullptr);
  Sql("UPDATE meta SET value = '99' WHERE key = 'schema_version'");
  auto s = PostgresStore::Open(url_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.status().message(), HasSubstr("schema version 99"));
  EXPECT_THAT(s.status().message(), HasSubstr("run a newer paceline"));
}

// The schema version the database at `url` records ("" when it cannot be read, with a failure).
std::string SchemaVersionOf(const std::string& url) {
  auto c = PgConn::Connect(url, absl::Seconds(5));
  if (!c.ok()) {
    ADD_FAILURE() << c.status();
    return "";
  }
  auto version =
      (*c)->Query("SELECT value FROM meta WHERE key = 'schema_version'", {}, "the version");
  if (!version.ok()) {
    ADD_FAILURE() << version.status();
    return "";
  }
  return std::string(version->Text(0, 0));
}

JobSpec EtlSpec() {
  JobSpec spec;
  spec.name = "etl";
  spec.instances = 1;
  spec.task.command = "true";
  spec.task.resources = Resources::Of(100, int64_t{16} << 20);
  return spec;
}

// A database as version 3 left it: one job (EtlSpec), no owners, no tokens, no audit log.
void MakeVersionThreeDatabase(const std::string& url) {
  auto c = PgConn::Connect(url, absl::Seconds(5));
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE((*c)->Exec(pg::kSchemaV1, "schema 1").ok());
  ASSERT_TRUE((*c)->Exec(pg::kSchemaV2, "schema 2").ok());
  ASSERT_TRUE((*c)->Exec(pg::kSchemaV3, "schema 3").ok());
  ASSERT_TRUE((*c)->Exec("INSERT INTO meta VALUES ('schema_version', '3'), "
                         "('cluster_id', 'c3'), ('next_job_id', '2')",
                         "meta of version 3")
                  .ok());
  ASSERT_TRUE((*c)->Query("INSERT INTO jobs (id, pool, spec, version, goal, created_us, "
                          "old_specs, updates, instances, rev) "
                          "VALUES (1, '/p', $1, 1, 0, 5, '{}', '[]', 0, 1)",
                          {PrintJobSpec(EtlSpec())}, "a job of version 3")
                  .ok());
}

TEST_F(PostgresStoreTest, ASchemaVersionThreeDatabaseIsMigratedToFourAndKeepsItsJobs) {
  const JobSpec spec = EtlSpec();
  MakeVersionThreeDatabase(url_);
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  auto contents = store->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->jobs.size(), 1u);
  EXPECT_EQ(contents->jobs[0].spec, spec);
  EXPECT_EQ(contents->jobs[0].owner, "");
  EXPECT_EQ(contents->jobs[0].owner_group, "");
  EXPECT_TRUE(contents->tokens.empty());
  EXPECT_EQ(contents->cluster_id, "c3");
  records::WriteBatch b;
  records::JobRecord job = contents->jobs[0];
  job.owner = "alice";
  job.owner_group = "ads-team";
  b.put_jobs.push_back(job);
  records::TokenRecord token;
  token.id = "tok-1";
  token.user = "alice";
  b.put_tokens.push_back(token);
  records::AuditRecord audit;
  audit.user = "alice";
  audit.target = "job 1";
  b.audit.push_back(audit);
  ASSERT_TRUE(store->Commit(b).ok());
  auto again = store->Load();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->jobs[0], job);
  EXPECT_THAT(again->tokens, ::testing::ElementsAre(token));
  auto listed = store->ListAudit({});
  ASSERT_TRUE(listed.ok()) << listed.status();
  audit.seq = 1;
  EXPECT_THAT(*listed, ::testing::ElementsAre(audit));
  EXPECT_EQ(SchemaVersionOf(url_), absl::StrCat(pg::kSchemaVersion));
}

TEST_F(PostgresStoreTest, ASchemaVersionFourDatabaseIsMigratedToFiveAndKeepsItsTokens) {
  {
    // A database as version 4 left it: a token, a pool's deletion, no secrets table.
    auto c = PgConn::Connect(url_, absl::Seconds(5));
    ASSERT_TRUE(c.ok()) << c.status();
    for (const char* sql : {pg::kSchemaV1, pg::kSchemaV2, pg::kSchemaV3, pg::kSchemaV4}) {
      ASSERT_TRUE((*c)->Exec(sql, "schema 1 to 4").ok());
    }
    ASSERT_TRUE((*c)->Exec("INSERT INTO meta VALUES ('schema_version', '4'), "
                           "('cluster_id', 'c4'), ('next_job_id', '3'); "
                           "INSERT INTO tokens VALUES ('tok-1', 'ci', 'alice', '', 'viewer', "
                           "'/', '00', 'ff', 'root', 5, NULL, NULL, 1); "
                           "INSERT INTO deletions (rev, kind, path) VALUES (2, 'pool', '/old'); "
                           "SELECT setval('changes_rev', 2)",
                           "rows of version 4")
                    .ok());
  }
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  auto contents = store->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->tokens.size(), 1u);
  EXPECT_EQ(contents->tokens[0].user, "alice");
  EXPECT_EQ(contents->tokens[0].revoked_at, absl::InfiniteFuture());
  EXPECT_TRUE(contents->secrets.empty());
  EXPECT_EQ(contents->cluster_id, "c4");
  // The new table is written and read back; its deletions are recorded for standbys (the
  // deletions table takes the new kind).
  records::SecretRecord secret;
  secret.path = "/ads/db-password";
  secret.key_id = "k1";
  secret.sealed = "00aa11bb";
  secret.created_by = "alice";
  secret.created_at = absl::FromUnixSeconds(10);
  secret.updated_at = absl::FromUnixSeconds(20);
  records::WriteBatch b;
  b.put_secrets.push_back(secret);
  ASSERT_TRUE(store->Commit(b).ok());
  auto again = store->Load();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_THAT(again->secrets, ::testing::ElementsAre(secret));
  auto before = store->ReadChanges(1);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_THAT(before->deleted_pools, ::testing::ElementsAre("/old"));
  records::WriteBatch del;
  del.delete_secrets.push_back(secret.path);
  ASSERT_TRUE(store->Commit(del).ok());
  auto changes = store->ReadChanges(before->rev);
  ASSERT_TRUE(changes.ok()) << changes.status();
  EXPECT_THAT(changes->deleted_secrets, ::testing::ElementsAre(secret.path));
  EXPECT_TRUE(changes->changed.secrets.empty());
  EXPECT_TRUE(store->Load()->secrets.empty());
  EXPECT_EQ(SchemaVersionOf(url_), absl::StrCat(pg::kSchemaVersion));
}

TEST_F(PostgresStoreTest, ASchemaVersionFiveDatabaseIsMigratedAndItsTasksAreAtGangAttemptZero) {
  {
    // A database as version 5 left it: one task, no gang attempts.
    auto c = PgConn::Connect(url_, absl::Seconds(5));
    ASSERT_TRUE(c.ok()) << c.status();
    for (const char* sql :
         {pg::kSchemaV1, pg::kSchemaV2, pg::kSchemaV3, pg::kSchemaV4, pg::kSchemaV5}) {
      ASSERT_TRUE((*c)->Exec(sql, "schema 1 to 5").ok());
    }
    ASSERT_TRUE((*c)->Exec("INSERT INTO meta VALUES ('schema_version', '5'), "
                           "('cluster_id', 'c5'), ('next_job_id', '2'); "
                           "INSERT INTO tasks (job, instance, run, state, host, exit_code, "
                           "signal, reason, message, failures, restart_requested, spec_version, "
                           "next_spec_version, volume_host, rev) VALUES (1, 0, 2, 0, '', -1, 0, "
                           "'RESTARTING', '', 1, 0, 1, 0, '', 1); "
                           "SELECT setval('changes_rev', 1)",
                           "rows of version 5")
                    .ok());
  }
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  auto contents = store->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->tasks.size(), 1u);
  EXPECT_EQ(contents->tasks[0].run, 2u);
  EXPECT_EQ(contents->tasks[0].gang_attempt, 0u);
  records::TaskRecord task = contents->tasks[0];
  task.gang_attempt = 4;
  records::WriteBatch b;
  b.put_tasks.push_back(task);
  ASSERT_TRUE(store->Commit(b).ok());
  auto again = store->Load();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_THAT(again->tasks, ::testing::ElementsAre(task));
}

// Secrets are written by their own statements, pipelined with the rest: one that fails takes
// back everything of its commit, a deletion of a secret included.
TEST_F(PostgresStoreTest, ABadSecretLeavesNothingOfItsCommit) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  records::SecretRecord kept;
  kept.path = "/a/kept";
  kept.sealed = "00";
  records::WriteBatch first;
  first.put_secrets.push_back(kept);
  ASSERT_TRUE(store->Commit(first).ok());
  auto rev = store->ReadChanges(kNoRevision);
  ASSERT_TRUE(rev.ok()) << rev.status();
  records::WriteBatch b;
  b.delete_secrets.push_back(kept.path);
  for (int i = 0; i < 3; ++i) {
    records::SecretRecord r;
    r.path = absl::StrCat("/a/s", i);
    r.sealed = "0a0b";
    b.put_secrets.push_back(r);
  }
  b.put_secrets[2].created_by = "bad \xff byte";  // not UTF-8: the server refuses this row
  absl::Status s = store->Commit(b);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("committing to the store"));
  auto c = store->Load();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->secrets, ::testing::ElementsAre(kept));
  auto nothing = store->ReadChanges(rev->rev);
  ASSERT_TRUE(nothing.ok()) << nothing.status();
  EXPECT_EQ(nothing->rows(), 0u);
  b.put_secrets[2].created_by = "fixed";
  ASSERT_TRUE(store->Commit(b).ok());
  EXPECT_EQ(store->Load()->secrets.size(), 3u);
}

// Tokens and audit records are written by their own statements, pipelined with the rest: one
// that fails takes back everything of its commit.
TEST_F(PostgresStoreTest, ABadAuditRecordLeavesNeitherTokensNorAuditOfItsCommit) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  records::WriteBatch b;
  for (int i = 0; i < 3; ++i) {
    records::TokenRecord t;
    t.id = absl::StrCat("tok-", i);
    t.user = "alice";
    b.put_tokens.push_back(t);
    records::AuditRecord a;
    a.at = absl::FromUnixSeconds(i);
    a.user = "alice";
    a.target = absl::StrCat("token tok-", i);
    b.audit.push_back(a);
  }
  b.audit[2].message = "bad \xff byte";  // not UTF-8: the server refuses this row
  absl::Status s = store->Commit(b);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("committing to the store"));
  auto c = store->Load();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->tokens.empty());
  EXPECT_TRUE(store->ListAudit({})->empty());
  b.audit[2].message = "fixed";
  ASSERT_TRUE(store->Commit(b).ok());
  EXPECT_EQ(store->Load()->tokens.size(), 3u);
  auto listed = store->ListAudit({});
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 3u);
  // Numbers burnt by the failed commit may be skipped; they still grow in commit order.
  EXPECT_EQ((*listed)[0].message, "fixed");
  EXPECT_GT((*listed)[0].seq, (*listed)[1].seq);
  EXPECT_GT((*listed)[1].seq, (*listed)[2].seq);
}

TEST_F(PostgresStoreTest, AnUnreachableServerIsNamedWithoutItsPassword) {
  auto s = PostgresStore::Open("postgres://someone:secret@127.0.0.1:1/nothing");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(s.status().message(), HasSubstr("postgres://someone:***@127.0.0.1:1/nothing"));
  EXPECT_THAT(s.status().message(), Not(HasSubstr("secret")));
  auto missing = PostgresStore::Open(server_->url_for("no_such_database"));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("no_such_database"));
}

TEST_F(PostgresStoreTest, AFailureDeepInAPipelinedTransactionLeavesNothing) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  records::WriteBatch b;
  b.put_pools.push_back({"/a", PoolSpec()});
  for (uint32_t i = 0; i < 3000; ++i) b.put_tasks.push_back(Task(i));
  // A deletion sends the 3,000 tasks held first; the host after them is refused by the server
  // (its name is not UTF-8).
  b.delete_tasks.push_back(TaskId{JobId(99), 0});
  records::HostRecord host;
  host.name = "bad \xff byte";
  b.put_hosts.push_back(host);
  b.next_job_id = 42;
  absl::Status s = store->Commit(b);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("committing to the store"));
  auto c = store->Load();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->pools.empty());
  EXPECT_TRUE(c->tasks.empty());
  EXPECT_EQ(c->next_job_id, 1u);
  // The same connection goes on: the same batch, fixed, commits whole.
  b.put_hosts[0].name = "host-1";
  ASSERT_TRUE(store->Commit(b).ok());
  EXPECT_EQ(store->Load()->tasks.size(), 3000u);
}

TEST_F(PostgresStoreTest, AServerThatGoesAwayIsUnavailableAndTheStoreReconnects) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  records::WriteBatch one;
  one.put_tasks.push_back(Task(0));
  ASSERT_TRUE(store->Commit(one).ok());
  ASSERT_TRUE(server_->Stop().ok());
  records::WriteBatch two;
  two.put_tasks.push_back(Task(1));
  EXPECT_EQ(store->Commit(two).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(store->Load().status().code(), absl::StatusCode::kUnavailable);
  ASSERT_TRUE(server_->StartAgain().ok());
  ASSERT_TRUE(store->Commit(two).ok());
  auto c = store->Load();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->tasks.size(), 2u);
}

TEST_F(PostgresStoreTest, CommitsOfATermThatLostTheLeaseFailAndChangeNothing) {
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  Sql("UPDATE lease SET term = 5");
  store->FenceWith(5);
  records::WriteBatch one;
  one.put_tasks.push_back(Task(0));
  ASSERT_TRUE(store->Commit(one).ok());
  Sql("UPDATE lease SET term = 6");  // another master took over
  records::WriteBatch two;
  two.put_tasks.push_back(Task(1));
  two.next_job_id = 9;
  absl::Status s = store->Commit(two);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("term 5 no longer holds the lease"));
  auto c = store->Load();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->tasks.size(), 1u);
  EXPECT_EQ(c->next_job_id, 1u);
}

// `n` stores opened at once on `url`, as masters starting together: the cluster id each found.
std::vector<absl::StatusOr<std::string>> OpenTogether(const std::string& url, int n) {
  std::vector<absl::StatusOr<std::string>> ids(n, absl::UnknownError("not opened"));
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      auto s = PostgresStore::Open(url);
      ids[i] = s.ok() ? absl::StatusOr<std::string>((*s)->cluster_id()) : s.status();
    });
  }
  for (auto& t : threads) t.join();
  return ids;
}

TEST_F(PostgresStoreTest, MastersStartingTogetherCreateTheSchemaOnce) {
  constexpr int kMasters = 4;
  std::vector<absl::StatusOr<std::string>> ids = OpenTogether(url_, kMasters);
  for (const absl::StatusOr<std::string>& id : ids) {
    ASSERT_TRUE(id.ok()) << id.status();
    EXPECT_FALSE(id->empty());
    EXPECT_EQ(*id, *ids[0]);
  }
  EXPECT_EQ(MustOpen()->open_count(), kMasters + 1);
}

// An upgrade of an HA set onto a build with a newer schema: the masters that start on the new
// build migrate the database once, whichever comes first (its migrations add columns, which
// fails when done twice), and each opens it.
TEST_F(PostgresStoreTest, MastersStartingTogetherOnAnOlderSchemaMigrateItOnce) {
  MakeVersionThreeDatabase(url_);
  constexpr int kMasters = 4;
  for (const absl::StatusOr<std::string>& id : OpenTogether(url_, kMasters)) {
    ASSERT_TRUE(id.ok()) << id.status();
    EXPECT_EQ(*id, "c3");
  }
  auto store = MustOpen();
  ASSERT_NE(store, nullptr);
  auto contents = store->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->jobs.size(), 1u);
  EXPECT_EQ(contents->jobs[0].spec, EtlSpec());
  EXPECT_EQ(store->open_count(), kMasters + 1);
  EXPECT_EQ(SchemaVersionOf(url_), absl::StrCat(pg::kSchemaVersion));
}

TEST_F(PostgresStoreTest, TheLeaseGoesToOneMasterAtATimeAndMovesOnWhenItExpires) {
  auto store = MustOpen();  // creates the schema
  ASSERT_NE(store, nullptr);
  PgLease a(url_, absl::Milliseconds(800), absl::Seconds(5));
  PgLease b(url_, absl::Milliseconds(800), absl::Seconds(5));
  auto ta = a.TryAcquire("a", "127.0.0.1:1");
  ASSERT_TRUE(ta.ok()) << ta.status();
  ASSERT_TRUE(ta->has_value());
  EXPECT_EQ(**ta, 1u);
  // b cannot take it while a renews.
  for (int i = 0; i < 3; ++i) {
    absl::SleepFor(absl::Milliseconds(300));
    ASSERT_TRUE(a.Renew(1).ok());
    auto tb = b.TryAcquire("b", "127.0.0.1:2");
    ASSERT_TRUE(tb.ok());
    EXPECT_FALSE(tb->has_value());
  }
  auto info = b.Read();
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->term, 1u);
  EXPECT_EQ(info->holder, "a");
  EXPECT_EQ(info->address, "127.0.0.1:1");
  EXPECT_TRUE(info->live);
  EXPECT_LT(info->since_renewal, absl::Seconds(1));
  // a stops renewing (paused): once the lease expired, b takes it with the next term, and a's
  // renewal and a's fenced commits fail.
  absl::SleepFor(absl::Seconds(1));
  auto tb = b.TryAcquire("b", "127.0.0.1:2");
  ASSERT_TRUE(tb.ok());
  ASSERT_TRUE(tb->has_value());
  EXPECT_EQ(**tb, 2u);
  absl::Status renew = a.Renew(1);
  EXPECT_EQ(renew.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(renew.message(), HasSubstr("lost the leader lease"));
  store->FenceWith(1);
  records::WriteBatch w;
  w.put_tasks.push_back(Task(0));
  EXPECT_EQ(store->Commit(w).code(), absl::StatusCode::kFailedPrecondition);
  store->FenceWith(2);
  EXPECT_TRUE(store->Commit(w).ok());
  // A clean shutdown releases the lease: a takes it at once.
  ASSERT_TRUE(b.Release(2).ok());
  auto again = a.TryAcquire("a", "127.0.0.1:1");
  ASSERT_TRUE(again.ok());
  ASSERT_TRUE(again->has_value());
  EXPECT_EQ(**again, 3u);
}

}  // namespace
}  // namespace paceline::store
