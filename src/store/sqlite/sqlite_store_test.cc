#include "store/sqlite/sqlite_store.h"

#include "store/spec_parsing.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/task_rows.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "spec/yaml_spec.h"

namespace paceline::store {
namespace {

std::string TempDir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             (name + "-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  return dir.string();
}

// Collects a streaming load's batches (from both reading threads).
class Collect final : public LoadSink {
 public:
  void Head(records::StoreContents) override {}
  bool Tasks(std::vector<records::TaskRecord> batch) override {
    absl::MutexLock lock(&mu);
    batches.push_back(std::move(batch));
    return true;
  }
  absl::Mutex mu;
  std::vector<std::vector<records::TaskRecord>> batches;
};

// The two halves of the jobs are read by two connections at once, each in batches by (job,
// instance); together they are every row, once.
TEST(SqliteStore, StreamsTheTaskRowsOfTwoHalvesOnTwoConnections) {
  const std::string dir = TempDir("pl-sqlite-stream");
  auto store = SqliteStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  records::WriteBatch b;
  std::vector<records::JobRecord> jobs;
  for (uint64_t j = 1; j <= 6; ++j) {
    records::JobRecord job;
    job.id = JobId(j);
    job.pool = "/";
    job.spec.name = absl::StrCat("j", j);
    job.instances = 50;
    jobs.push_back(job);
    for (uint32_t i = 0; i < 50; ++i) {
      records::TaskRecord t;
      t.id = TaskId{JobId(j), i};
      t.run = 1;
      t.state = TaskState::kRunning;
      t.host = absl::StrCat("host-", i % 7);
      t.started_at = absl::FromUnixSeconds(1000 + i);
      b.put_tasks.push_back(t);
    }
  }
  EXPECT_EQ(SplitJob(jobs), kNoEnd);  // 300 instances: not worth a second connection
  b.put_jobs = jobs;
  ASSERT_TRUE((*store)->Commit(b).ok());
  absl::StatusOr<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(dir + "/paceline.db");
  ASSERT_TRUE(db.ok()) << db.status();

  Collect sink;
  ASSERT_TRUE(StreamAllTaskRows(**db, /*split=*/4, sink).ok());
  std::vector<records::TaskRecord> all;
  bool lower = false, upper = false;
  for (const auto& batch : sink.batches) {
    ASSERT_FALSE(batch.empty());
    EXPECT_TRUE(std::is_sorted(batch.begin(), batch.end(),
                               [](const auto& x, const auto& y) { return x.id < y.id; }));
    lower |= batch.front().id.job < JobId(4);
    upper |= batch.front().id.job >= JobId(4);
    EXPECT_EQ(batch.front().id.job < JobId(4), batch.back().id.job < JobId(4));  // one half each
    all.insert(all.end(), batch.begin(), batch.end());
  }
  EXPECT_TRUE(lower && upper);
  std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) { return x.id < y.id; });
  EXPECT_EQ(all, b.put_tasks);
  std::filesystem::remove_all(dir);
}

TEST(SqliteStore, CreatesDirectoryAndKeepsClusterIdAcrossOpens) {
  std::string dir = TempDir("pl-store");
  std::string id;
  {
    auto store = SqliteStore::Open(dir + "/nested");
    ASSERT_TRUE(store.ok()) << store.status();
    id = (*store)->cluster_id();
    EXPECT_EQ(id.size(), 16u);
    EXPECT_EQ((*store)->open_count(), 1);
    EXPECT_THAT((*store)->Describe(), ::testing::StartsWith("sqlite:"));
  }
  auto again = SqliteStore::Open(dir + "/nested");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->cluster_id(), id);
  EXPECT_EQ((*again)->open_count(), 2);
  std::filesystem::remove_all(dir);
}

TEST(SqliteStore, RefusesNewerSchema) {
  std::string dir = TempDir("pl-store");
  {
    auto store = SqliteStore::Open(dir);
    ASSERT_TRUE(store.ok());
  }
  {
    auto db = SqliteDb::Open(dir + "/paceline.db");
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("UPDATE meta SET value = '999' WHERE key = 'schema_version'").ok());
  }
  auto store = SqliteStore::Open(dir);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), ::testing::HasSubstr("schema version 999"));
  std::filesystem::remove_all(dir);
}

TEST(SqliteStore, MigratesAVersionOneStoreAndKeepsItsTasks) {
  std::string dir = TempDir("pl-store");
  std::filesystem::create_directories(dir);
  {
    // A store as version 1 wrote it: its schema, one job's task, schema_version 1.
    auto db = SqliteDb::Open(dir + "/paceline.db");
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)").ok());
    ASSERT_TRUE((*db)->Exec(kSchemaV1).ok());
    ASSERT_TRUE((*db)
                    ->Exec("INSERT INTO meta VALUES ('schema_version', '1'), ('cluster_id', "
                           "'00112233aabbccdd'), ('next_job_id', '2')")
                    .ok());
    ASSERT_TRUE((*db)
                    ->Exec("INSERT INTO tasks VALUES (1, 0, 3, 5, 'h1', NULL, NULL, -1, 0, "
                           "'', '', 0, NULL)")
                    .ok());
  }
  auto store = SqliteStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->cluster_id(), "00112233aabbccdd");
  auto contents = (*store)->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->tasks.size(), 1u);
  EXPECT_EQ(contents->tasks[0].run, 3u);
  EXPECT_FALSE(contents->tasks[0].restart_requested);
  // The new column is written and read back.
  records::WriteBatch b;
  records::TaskRecord t = contents->tasks[0];
  t.restart_requested = true;
  b.put_tasks.push_back(t);
  ASSERT_TRUE((*store)->Commit(b).ok());
  auto again = (*store)->Load();
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->tasks[0].restart_requested);
  std::filesystem::remove_all(dir);
}

TEST(SqliteStore, MigratesAVersionThreeStoreToFourAndKeepsItsJobs) {
  std::string dir = TempDir("pl-store");
  std::filesystem::create_directories(dir);
  JobSpec spec;
  spec.name = "etl";
  spec.instances = 1;
  spec.task.command = "true";
  spec.task.resources = Resources::Of(100, int64_t{16} << 20);
  {
    // A store as version 3 wrote it: one job, no owners, no tokens, no audit log.
    auto db = SqliteDb::Open(dir + "/paceline.db");
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)").ok());
    for (const char* sql : {kSchemaV1, kSchemaV2, kSchemaV3}) ASSERT_TRUE((*db)->Exec(sql).ok());
    ASSERT_TRUE((*db)
                    ->Exec("INSERT INTO meta VALUES ('schema_version', '3'), ('cluster_id', "
                           "'00112233aabbccdd'), ('next_job_id', '2')")
                    .ok());
    auto insert = (*db)->Prepare(
        "INSERT INTO jobs (id, pool, spec, version, goal, created_us) VALUES (1, '/p', ?, 1, 0, "
        "5)");
    ASSERT_TRUE(insert.ok()) << insert.status();
    insert->Bind(1, PrintJobSpec(spec));
    ASSERT_TRUE(insert->Run().ok());
  }
  auto store = SqliteStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  auto contents = (*store)->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->jobs.size(), 1u);
  EXPECT_EQ(contents->jobs[0].spec, spec);
  EXPECT_EQ(contents->jobs[0].owner, "");
  EXPECT_EQ(contents->jobs[0].owner_group, "");
  EXPECT_TRUE(contents->tokens.empty());
  // The new columns and tables are written and read back.
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
  ASSERT_TRUE((*store)->Commit(b).ok());
  auto again = (*store)->Load();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->jobs[0], job);
  EXPECT_THAT(again->tokens, ::testing::ElementsAre(token));
  auto listed = (*store)->ListAudit({});
  ASSERT_TRUE(listed.ok()) << listed.status();
  audit.seq = 1;
  EXPECT_THAT(*listed, ::testing::ElementsAre(audit));
  store->reset();
  auto db = SqliteDb::Open(dir + "/paceline.db");
  ASSERT_TRUE(db.ok());
  auto version = (*db)->Prepare("SELECT value FROM meta WHERE key = 'schema_version'");
  ASSERT_TRUE(version.ok());
  absl::StatusOr<bool> row = version->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(version->ColumnText(0), absl::StrCat(SqliteStore::kSchemaVersion));
  std::filesystem::remove_all(dir);
}

TEST(SqliteStore, MigratesAVersionFourStoreToFiveAndKeepsItsTokens) {
  std::string dir = TempDir("pl-store");
  std::filesystem::create_directories(dir);
  {
    // A store as version 4 wrote it: one token, no secrets table.
    auto db = SqliteDb::Open(dir + "/paceline.db");
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)").ok());
    for (const char* sql : {kSchemaV1, kSchemaV2, kSchemaV3, kSchemaV4}) {
      ASSERT_TRUE((*db)->Exec(sql).ok());
    }
    ASSERT_TRUE((*db)
                    ->Exec("INSERT INTO meta VALUES ('schema_version', '4'), ('cluster_id', "
                           "'00112233aabbccdd'), ('next_job_id', '3')")
                    .ok());
    ASSERT_TRUE((*db)
                    ->Exec("INSERT INTO tokens VALUES ('tok-1', 'ci', 'alice', '', 'viewer', '/', "
                           "'00', 'ff', 'root', 5, NULL, NULL)")
                    .ok());
  }
  auto store = SqliteStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  auto contents = (*store)->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->tokens.size(), 1u);
  EXPECT_EQ(contents->tokens[0].user, "alice");
  EXPECT_EQ(contents->tokens[0].expires_at, absl::InfiniteFuture());
  EXPECT_EQ(contents->next_job_id, 3u);
  EXPECT_TRUE(contents->secrets.empty());
  // The new table is written, read back and deleted from.
  records::SecretRecord secret;
  secret.path = "/ads/db-password";
  secret.key_id = "k1";
  secret.sealed = "00aa11bb";
  secret.created_by = "alice";
  secret.created_at = absl::FromUnixSeconds(10);
  secret.updated_at = absl::FromUnixSeconds(20);
  records::WriteBatch b;
  b.put_secrets.push_back(secret);
  ASSERT_TRUE((*store)->Commit(b).ok());
  auto again = (*store)->Load();
  ASSERT_TRUE(again.ok());
  EXPECT_THAT(again->secrets, ::testing::ElementsAre(secret));
  EXPECT_EQ(again->tokens, contents->tokens);
  records::WriteBatch del;
  del.delete_secrets.push_back(secret.path);
  ASSERT_TRUE((*store)->Commit(del).ok());
  EXPECT_TRUE((*store)->Load()->secrets.empty());
  store->reset();
  auto db = SqliteDb::Open(dir + "/paceline.db");
  ASSERT_TRUE(db.ok());
  auto version = (*db)->Prepare("SELECT value FROM meta WHERE key = 'schema_version'");
  ASSERT_TRUE(version.ok());
  absl::StatusOr<bool> row = version->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(version->ColumnText(0), absl::StrCat(SqliteStore::kSchemaVersion));
  std::filesystem::remove_all(dir);
}

TEST(SqliteStore, MigratesAVersionFiveStoreToSixAndKeepsEveryEventInOrder) {
  std::string dir = TempDir("pl-store");
  std::filesystem::create_directories(dir);
  {
    // A store as version 5 wrote it: one row per event, two jobs' events interleaved.
    auto db = SqliteDb::Open(dir + "/paceline.db");
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)").ok());
    for (const char* sql : {kSchemaV1, kSchemaV2, kSchemaV3, kSchemaV4, kSchemaV5}) {
      ASSERT_TRUE((*db)->Exec(sql).ok());
    }
    ASSERT_TRUE((*db)
                    ->Exec("INSERT INTO meta VALUES ('schema_version', '5'), ('cluster_id', "
                           "'00112233aabbccdd'), ('next_job_id', '3')")
                    .ok());
    ASSERT_TRUE((*db)
                    ->Exec("INSERT INTO events (job, instance, run, at_us, state, host, reason, "
                           "message) VALUES "
                           "(2, 0, 1, 10, 3, 'h1', '', ''), (1, 1, 1, 11, 3, 'h2', '', ''), "
                           "(1, 0, 1, 12, 3, 'h1', '', ''), (2, 0, 1, 13, 5, 'h1', 'EXIT', 'x'), "
                           "(1, 1, 1, 14, 5, 'h2', '', 'done')")
                    .ok());
  }
  auto store = SqliteStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  auto events = (*store)->ListEvents(TaskId{JobId(1), 1}, 0);
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].at, absl::FromUnixMicros(11));
  EXPECT_EQ((*events)[1].message, "done");
  std::vector<std::pair<uint64_t, int64_t>> all;  // (job, at_us) in ForEachEvent's order
  ASSERT_TRUE((*store)
                  ->ForEachEvent([&](const records::TaskEvent& e) {
                    all.emplace_back(e.run.task.job.value(), absl::ToUnixMicros(e.at));
                    return absl::OkStatus();
                  })
                  .ok());
  EXPECT_EQ(all, (std::vector<std::pair<uint64_t, int64_t>>{
                     {1, 12}, {1, 11}, {1, 14}, {2, 10}, {2, 13}}));
  auto stats = (*store)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_THAT(stats->rows, ::testing::Contains(std::pair<std::string, int64_t>("events", 5)));
  std::filesystem::remove_all(dir);
}

// A store as version 6 wrote it, with `tasks_sql` inserted into its column-per-field tasks.
void WriteVersionSixStore(const std::string& dir, const std::string& tasks_sql) {
  std::filesystem::create_directories(dir);
  auto db = SqliteDb::Open(dir + "/paceline.db");
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->Exec("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)").ok());
  for (const char* sql : {kSchemaV1, kSchemaV2, kSchemaV3, kSchemaV4, kSchemaV5, kSchemaV6}) {
    ASSERT_TRUE((*db)->Exec(sql).ok());
  }
  ASSERT_TRUE((*db)->Exec("DROP TABLE events").ok());
  ASSERT_TRUE((*db)
                  ->Exec("INSERT INTO meta VALUES ('schema_version', '6'), ('cluster_id', "
                         "'00112233aabbccdd'), ('next_job_id', '3')")
                  .ok());
  ASSERT_TRUE((*db)->Exec(tasks_sql).ok());
}

TEST(SqliteStore, MigratesAVersionSixStoreToSevenAndKeepsEveryTaskField) {
  std::string dir = TempDir("pl-store");
  WriteVersionSixStore(dir,
                       "INSERT INTO tasks (job, instance, run, state, host, started_us, "
                       "finished_us, exit_code, signal, reason, message, failures, not_before_us, "
                       "restart_requested, spec_version, next_spec_version, volume_host) VALUES "
                       "(2, 0, 1, 4, 'h1', 1000, NULL, -1, 0, '', '', 0, NULL, 0, 1, 0, ''), "
                       "(1, 5, 3, 6, 'h2', 10, 20, 137, 9, 'OOM_KILLED', 'over 64 MiB', 2, 30, "
                       "1, 4, 5, 'h3'), "
                       "(1, 0, 0, 0, '', NULL, NULL, -1, 0, '', '', 0, NULL, 0, 0, 0, '')");
  auto store = SqliteStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  auto contents = (*store)->Load();
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_EQ(contents->tasks.size(), 3u);
  records::TaskRecord failed{TaskId{JobId(1), 5}};
  failed.run = 3;
  failed.state = TaskState::kFailed;
  failed.host = "h2";
  failed.started_at = absl::FromUnixMicros(10);
  failed.finished_at = absl::FromUnixMicros(20);
  failed.exit_code = 137;
  failed.signal = 9;
  failed.reason = "OOM_KILLED";
  failed.message = "over 64 MiB";
  failed.failures = 2;
  failed.not_before = absl::FromUnixMicros(30);
  failed.restart_requested = true;
  failed.spec_version = 4;
  failed.next_spec_version = 5;
  failed.volume_host = "h3";
  records::TaskRecord running{TaskId{JobId(2), 0}};
  running.run = 1;
  running.state = TaskState::kRunning;
  running.host = "h1";
  running.started_at = absl::FromUnixMicros(1000);
  running.spec_version = 1;
  EXPECT_EQ(contents->tasks, (std::vector<records::TaskRecord>{
                                 records::TaskRecord{TaskId{JobId(1), 0}}, failed, running}));
  auto db = SqliteDb::Open(dir + "/paceline.db");
  ASSERT_TRUE(db.ok());
  auto columns = (*db)->Prepare("SELECT count(*) FROM pragma_table_info('tasks')");
  ASSERT_TRUE(columns.ok());
  ASSERT_TRUE(*columns->Step());
  EXPECT_EQ(columns->ColumnInt(0), 3);  // job, instance, data
  std::filesystem::remove_all(dir);
}

TEST(SqliteStore, AVersionSixRowWithAnUnknownStateStopsTheMigrationAndChangesNothing) {
  std::string dir = TempDir("pl-store");
  WriteVersionSixStore(dir,
                       "INSERT INTO tasks (job, instance, run, state, host, exit_code, signal, "
                       "reason, message, failures) VALUES (1, 0, 1, 4, 'h1', -1, 0, '', '', 0), "
                       "(1, 1, 1, 99, 'h1', -1, 0, '', '', 0)");
  auto store = SqliteStore::Open(dir);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(store.status().message(), ::testing::HasSubstr("row 1/1: unknown state 99"));
  auto db = SqliteDb::Open(dir + "/paceline.db");
  ASSERT_TRUE(db.ok());
  auto version = (*db)->Prepare("SELECT value FROM meta WHERE key = 'schema_version'");
  ASSERT_TRUE(version.ok());
  ASSERT_TRUE(*version->Step());
  EXPECT_EQ(version->ColumnText(0), "6");
  auto rows = (*db)->Prepare("SELECT count(*) FROM tasks WHERE state = 4");
  ASSERT_TRUE(rows.ok()) << rows.status();  // still the column-per-field table
  ASSERT_TRUE(*rows->Step());
  EXPECT_EQ(rows->ColumnInt(0), 1);
  std::filesystem::remove_all(dir);
}

TEST(SqliteStore, EveryJobGetsItsOwnSpecAndABadOneIsDataLossNamingItsJob) {
  // The specs are parsed on a thread of their own while the tasks are read (SpecParsing: 300
  // jobs are past its kThreadFrom).
  std::string dir = TempDir("pl-store");
  std::vector<JobSpec> specs;
  static_assert(300 >= SpecParsing::kThreadFrom, "the specs must be parsed on a thread");
  {
    auto store = SqliteStore::Open(dir);
    ASSERT_TRUE(store.ok()) << store.status();
    records::WriteBatch b;
    for (uint64_t id = 1; id <= 300; ++id) {
      records::JobRecord job;
      job.id = JobId(id);
      job.pool = "/p";
      job.spec.name = absl::StrCat("job-", id);
      job.spec.instances = static_cast<uint32_t>(id);
      job.spec.task.command = absl::StrCat("echo ", id);
      job.spec.task.resources = Resources::Of(100, int64_t{16} << 20);
      job.version = 1;
      specs.push_back(job.spec);
      b.put_jobs.push_back(job);
      records::TaskRecord task;
      task.id = TaskId{JobId(id), 0};
      task.state = TaskState::kRunning;
      task.host = "h1";
      b.put_tasks.push_back(task);
    }
    ASSERT_TRUE((*store)->Commit(b).ok());
    auto loaded = (*store)->Load();
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    ASSERT_EQ(loaded->jobs.size(), 300u);
    ASSERT_EQ(loaded->tasks.size(), 300u);
    for (size_t i = 0; i < specs.size(); ++i) EXPECT_EQ(loaded->jobs[i].spec, specs[i]) << i;
  }
  {
    auto db = SqliteDb::Open(dir + "/paceline.db");
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("UPDATE jobs SET spec = 'instances: [' WHERE id = 217").ok());
  }
  auto store = SqliteStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  auto loaded = (*store)->Load();
  EXPECT_EQ(loaded.status().code(), absl::StatusCode::kDataLoss) << loaded.status();
  EXPECT_THAT(loaded.status().message(), ::testing::HasSubstr("jobs"));
  EXPECT_THAT(loaded.status().message(), ::testing::HasSubstr("217"));
  std::filesystem::remove_all(dir);
}

TEST(SqliteStore, UnwritableDirectoryIsUnavailable) {
  auto store = SqliteStore::Open("/proc/paceline-cannot-exist");
  EXPECT_EQ(store.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(store.status().message(), ::testing::HasSubstr("/proc/paceline-cannot-exist"));
}

TEST(SqliteDb, ConstraintViolationIsFailedPrecondition) {
  std::string dir = TempDir("pl-db");
  std::filesystem::create_directories(dir);
  auto db = SqliteDb::Open(dir + "/t.db");
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->Exec("CREATE TABLE t (k INTEGER PRIMARY KEY)").ok());
  ASSERT_TRUE((*db)->Exec("INSERT INTO t VALUES (1)").ok());
  absl::Status s = (*db)->Exec("INSERT INTO t VALUES (1)");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*db)->Exec("SELEC nonsense").code(), absl::StatusCode::kInternal);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace paceline::store
