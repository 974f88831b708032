// The PostgreSQL store against its schema, on a real server: rows as the statements of the
// release before the tables were described wrote them, in a database of schema version 9, read
// back the same after the migrations (tasks moved into blobs, events
// included), and the described statements write the same columns; a task row that does not
// decode fails the migration and leaves the database as it was; a database that lacks a
// described column is refused at open and left as it was; a new column is one description
// and one migration (store/testing/widget_table.h); and event blocks and the key arrays of
// task_changes are compressed with lz4.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "spec/yaml_spec.h"
#include "store/postgres/pg_rows.h"
#include "store/postgres/postgres_store.h"
#include "store/postgres/schema.h"
#include "store/postgres/task_migration.h"
#include "store/testing/golden_records.h"
#include "store/testing/postgres_test_base.h"
#include "store/testing/widget_table.h"

namespace paceline::store {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class PostgresSchemaTest : public testing::PostgresDatabaseTest {
 protected:
  std::unique_ptr<PgConn> Connect() {
    auto c = PgConn::Connect(url_, absl::Seconds(5));
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? std::move(*c) : nullptr;
  }

  // Each table's columns as the earlier statements read them, as text, row by row.
  std::vector<std::string> Dump() {
    std::unique_ptr<PgConn> c = Connect();
    std::vector<std::string> out;
    if (c == nullptr) return out;
    for (const char* sql :
         {"SELECT path, spec FROM pools",
          "SELECT id, pool, spec, version, goal, created_us, old_specs, updates, instances, "
          "owner, owner_group FROM jobs",
          "SELECT job, instance, data FROM tasks",
          "SELECT job, instance, run, at_us, state, host, reason, message FROM events",
          "SELECT name, maintenance, cpu_milli, memory_bytes, disk_bytes, gpu_milli, labels "
          "FROM hosts",
          "SELECT id, name, user_name, group_name, role, scope, salt, hash, created_by, "
          "created_us, expires_us, revoked_us FROM tokens",
          "SELECT path, key_id, sealed, created_by, created_us, updated_us FROM secrets",
          "SELECT seq, at_us, user_name, source, action, pool, target, outcome, message, "
          "request_id FROM audit"}) {
      auto rows = c->Query(sql, {}, "dump");
      EXPECT_TRUE(rows.ok()) << rows.status();
      if (!rows.ok()) continue;
      for (int i = 0; i < rows->size(); ++i) {
        std::string row;
        for (int col = 0; col < ColumnCount(sql); ++col) {
          absl::StrAppend(&row, col ? "|" : "", rows->IsNull(i, col) ? "NULL" : rows->Text(i, col));
        }
        out.push_back(row);
      }
    }
    return out;
  }

  // The database as a release of schema version 9 left it (before tasks became blobs).
  void CreateVersion9() {
    std::unique_ptr<PgConn> c = Connect();
    ASSERT_NE(c, nullptr);
    ASSERT_TRUE(c->Exec(pg::kSchemaV1, "version 1").ok());
    for (const pg::Migration& m : pg::kMigrations) {
      if (m.version > 9) continue;
      ASSERT_TRUE(c->Exec(m.sql, "a migration").ok()) << m.version;
    }
    ASSERT_TRUE(c->Exec("INSERT INTO meta (key, value) VALUES ('schema_version', '9'), "
                        "('cluster_id', 'c0ffee'), ('next_job_id', '8')",
                        "meta")
                    .ok());
  }

  std::string One(const char* sql) {
    std::unique_ptr<PgConn> c = Connect();
    if (c == nullptr) return "";
    auto rows = c->Query(sql, {}, "one value");
    EXPECT_TRUE(rows.ok()) << rows.status();
    return rows.ok() && rows->size() == 1 ? std::string(rows->Text(0, 0)) : "";
  }

  static int ColumnCount(absl::string_view select) {
    absl::string_view list = select.substr(0, select.find(" FROM "));
    return static_cast<int>(std::count(list.begin(), list.end(), ',')) + 1;
  }
};

using testing::Golden;
using testing::MakeGolden;

// The statements of the release before the descriptions, with the golden records' values, in
// one transaction that took a revision; the task's state is `state`.
std::string EarlierStatements(const Golden& g, int state = static_cast<int>(TaskState::kRunning)) {
  const int running = static_cast<int>(TaskState::kRunning);
  return absl::StrCat(
      "BEGIN; SELECT nextval('changes_rev'); ",
      "INSERT INTO pools (path, spec, rev) VALUES ('/ads', '", PrintPoolSpec(g.pool.spec),
      "', currval('changes_rev')); ",
      "INSERT INTO jobs (id, pool, spec, version, goal, created_us, old_specs, updates, "
      "instances, owner, owner_group, rev) VALUES (7, '/ads', '",
      PrintJobSpec(g.job.spec),
      "', 3, 1, 1700000000000000, '{}', '[]', 2, 'alice', 'ads-team', currval('changes_rev')); ",
      "INSERT INTO tasks (job, instance, run, state, host, started_us, finished_us, exit_code, "
      "signal, reason, message, failures, not_before_us, restart_requested, spec_version, "
      "next_spec_version, volume_host, rev) VALUES (7, 1, 2, ",
      state, ", 'host-1', 100, NULL, -1, 0, '', '', 1, NULL, 1, 3, 0, 'host-1', ",
      "currval('changes_rev')); ",
      "INSERT INTO events (job, instance, run, at_us, state, host, reason, message) VALUES "
      "(7, 1, 2, 100, ",
      running, ", 'host-1', 'STARTED', ''); ",
      "INSERT INTO hosts (name, maintenance, cpu_milli, memory_bytes, disk_bytes, gpu_milli, "
      "labels, rev) VALUES ('host-1', 1, 4000, 8589934592, 107374182400, 2000, "
      "'{\"zone\":\"a\"}', currval('changes_rev')); ",
      "INSERT INTO tokens (id, name, user_name, group_name, role, scope, salt, hash, "
      "created_by, created_us, expires_us, revoked_us, rev) VALUES ('tok-1', 'ci', 'alice', "
      "'ads-team', 'submitter', '/ads', '00ff', 'beef', 'root', 5, NULL, 9, "
      "currval('changes_rev')); ",
      "INSERT INTO secrets (path, key_id, sealed, created_by, created_us, updated_us, rev) "
      "VALUES ('/ads/db', 'k1', '00aa', 'alice', 10, 20, currval('changes_rev')); ",
      "INSERT INTO audit (at_us, user_name, source, action, pool, target, outcome, message, "
      "request_id) VALUES (30, 'alice', '127.0.0.1:1', 'JobService.KillJob', '/ads', 'job 7', "
      "'OK', '', 'req-1'); COMMIT;");
}

TEST_F(PostgresSchemaTest, RowsTheEarlierStatementsWroteReadBackAndTheDescribedOnesWriteTheSame) {
  const Golden g = MakeGolden();
  CreateVersion9();
  {
    std::unique_ptr<PgConn> c = Connect();
    ASSERT_NE(c, nullptr);
    ASSERT_TRUE(c->Exec(EarlierStatements(g), "the earlier statements").ok());
  }
  std::unique_ptr<PostgresStore> store = MustOpen();
  ASSERT_NE(store, nullptr);
  // The task moved into a blob; the revision of the commit that wrote it stays the newest.
  EXPECT_EQ(One("SELECT (SELECT max(rev) FROM task_changes) = (SELECT rev FROM jobs)"), "t");
  EXPECT_EQ(One("SELECT to_regclass('tasks_v9') IS NULL"), "t");
  EXPECT_EQ(One("SELECT value FROM meta WHERE key = 'schema_version'"),
            absl::StrCat(pg::kSchemaVersion));
  const std::vector<std::string> earlier = Dump();
  ASSERT_EQ(earlier.size(), 8u);
  auto c = store->Load();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->pools, ElementsAre(g.pool));
  EXPECT_THAT(c->jobs, ElementsAre(g.job));
  EXPECT_THAT(c->tasks, ElementsAre(g.task));
  EXPECT_THAT(c->hosts, ElementsAre(g.host));
  EXPECT_THAT(c->tokens, ElementsAre(g.token));
  EXPECT_THAT(c->secrets, ElementsAre(g.secret));
  auto events = store->ListEvents(g.task.id, 0);
  ASSERT_TRUE(events.ok()) << events.status();
  EXPECT_THAT(*events, ElementsAre(g.event));
  auto audit = store->ListAudit({});
  ASSERT_TRUE(audit.ok()) << audit.status();
  EXPECT_THAT(*audit, ElementsAre(g.audit));

  // The same records written again by the described statements, over the rows: the same
  // columns, and the same blob as the migration wrote. The event is appended to its job's blocks
  // (schema version 9), after the row written before, so it is read twice, the older first.
  records::WriteBatch b;
  b.put_pools = {g.pool};
  b.put_jobs = {g.job};
  b.put_tasks = {g.task};
  b.events = {g.event};
  b.put_hosts = {g.host};
  b.put_tokens = {g.token};
  b.put_secrets = {g.secret};
  ASSERT_TRUE(store->Commit(b).ok());
  EXPECT_EQ(Dump(), earlier);
  auto twice = store->ListEvents(g.task.id, 0);
  ASSERT_TRUE(twice.ok()) << twice.status();
  EXPECT_THAT(*twice, ElementsAre(g.event, g.event));
  auto newest = store->ListEvents(g.task.id, 1);
  ASSERT_TRUE(newest.ok()) << newest.status();
  EXPECT_THAT(*newest, ElementsAre(g.event));
  auto job = store->ReadJob(g.task.id.job);
  ASSERT_TRUE(job.ok() && job->has_value()) << job.status();
  EXPECT_THAT((*job)->events, ElementsAre(g.event, g.event));
}

TEST_F(PostgresSchemaTest, EventBlocksAndTaskChangesAreCompressedWithLz4AndReadBackWhole) {
  const Golden g = MakeGolden();
  std::unique_ptr<PostgresStore> store = MustOpen();
  ASSERT_NE(store, nullptr);
  // 400 events of one task in one commit: one block of several KB, which PostgreSQL compresses.
  records::WriteBatch b;
  b.put_pools = {g.pool};
  b.put_jobs = {g.job};
  b.put_tasks = {g.task};
  for (int i = 0; i < 400; ++i) {
    records::TaskEvent e = g.event;
    e.at = absl::FromUnixMicros(100 + i);
    e.message = absl::StrCat("event ", i);
    b.events.push_back(e);
  }
  ASSERT_TRUE(store->Commit(b).ok());
  EXPECT_EQ(One("SELECT count(*) || ' ' || string_agg(pg_column_compression(data), ',') "
                "FROM event_blocks"),
            "1 lz4");
  auto events = store->ListEvents(g.task.id, 0);
  ASSERT_TRUE(events.ok()) << events.status();
  EXPECT_EQ(*events, b.events);
  // 1,000 tasks written in one commit: task_changes' key arrays (8 KB each), lz4 too.
  records::WriteBatch tasks;
  for (int i = 0; i < 1000; ++i) {
    records::TaskRecord t = g.task;
    t.id.instance = i;
    tasks.put_tasks.push_back(t);
  }
  ASSERT_TRUE(store->Commit(tasks).ok());
  EXPECT_EQ(One("SELECT pg_column_compression(jobs) || ' ' || pg_column_compression(instances) "
                "FROM task_changes WHERE cardinality(jobs) = 1000"),
            "lz4 lz4");
  auto load = store->Load();
  ASSERT_TRUE(load.ok()) << load.status();
  EXPECT_EQ(load->tasks.size(), 1000u);
}

// The move into blobs reads and writes the tasks a batch at a time (task_migration.h): every
// task of a table of several batches and a part arrives, once, as it was.
TEST_F(PostgresSchemaTest, TasksOfSeveralBatchesAllMoveIntoBlobs) {
  const Golden g = MakeGolden();
  CreateVersion9();
  const int tasks = 2 * pg::kTaskMoveBatch + 500;
  {
    std::unique_ptr<PgConn> c = Connect();
    ASSERT_NE(c, nullptr);
    ASSERT_TRUE(c->Exec(EarlierStatements(g), "the earlier statements").ok());
    // Instances 2 and on, like instance 1 of the earlier statements.
    ASSERT_TRUE(c->Exec(absl::StrCat("INSERT INTO tasks SELECT 7, i, run, state, host, "
                                     "started_us, finished_us, exit_code, signal, reason, "
                                     "message, failures, not_before_us, restart_requested, "
                                     "spec_version, next_spec_version, volume_host, rev FROM "
                                     "tasks, generate_series(2, ",
                                     tasks, ") AS i WHERE job = 7 AND instance = 1"),
                        "more tasks")
                    .ok());
  }
  std::unique_ptr<PostgresStore> store = MustOpen();
  ASSERT_NE(store, nullptr);
  auto c = store->Load();
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->tasks.size(), static_cast<size_t>(tasks));
  for (int i = 0; i < tasks; ++i) {
    records::TaskRecord want = g.task;
    want.id.instance = static_cast<uint32_t>(i + 1);
    EXPECT_EQ(c->tasks[i], want) << i;
  }
  EXPECT_EQ(One("SELECT to_regclass('tasks_v9') IS NULL"), "t");
}

TEST_F(PostgresSchemaTest, ATaskRowThatDoesNotDecodeFailsTheMigrationAndChangesNothing) {
  CreateVersion9();
  {
    std::unique_ptr<PgConn> c = Connect();
    ASSERT_NE(c, nullptr);
    ASSERT_TRUE(c->Exec(EarlierStatements(MakeGolden(), 99), "the earlier statements").ok());
  }
  auto store = PostgresStore::Open(url_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss) << store.status();
  EXPECT_THAT(store.status().message(), AllOf(HasSubstr("tasks_v9"), HasSubstr("7/1")));
  EXPECT_EQ(One("SELECT value FROM meta WHERE key = 'schema_version'"), "9");
  EXPECT_EQ(One("SELECT state FROM tasks WHERE job = 7"), "99");  // the column table, as it was
  EXPECT_EQ(One("SELECT to_regclass('tasks_v9') IS NULL"), "t");
}

TEST_F(PostgresSchemaTest, ADatabaseWithoutADescribedColumnIsRefusedNamingItAndLeftAsItWas) {
  ASSERT_NE(MustOpen(), nullptr);
  {
    std::unique_ptr<PgConn> c = Connect();
    ASSERT_NE(c, nullptr);
    ASSERT_TRUE(c->Exec("ALTER TABLE tasks DROP COLUMN data", "drop").ok());
  }
  auto store = PostgresStore::Open(url_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(),
              AllOf(HasSubstr("store table tasks"), HasSubstr("column data is missing")));
  std::unique_ptr<PgConn> c = Connect();
  ASSERT_NE(c, nullptr);
  auto opens = c->Query("SELECT value FROM meta WHERE key = 'open_count'", {}, "opens");
  ASSERT_TRUE(opens.ok()) << opens.status();
  EXPECT_EQ(opens->Text(0, 0), "1");  // the refused open changed nothing
}

TEST_F(PostgresSchemaTest, ANewColumnIsOneDescriptionAndOneMigration) {
  using testing::kWidgetsV1;
  using testing::kWidgetsV2;
  using testing::Widget;
  std::unique_ptr<PgConn> c = Connect();
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->Exec(testing::kCreateWidgetsPg, "create").ok());
  ASSERT_TRUE(pg::CheckPgTable(*c, sql::ShapeOf(kWidgetsV1)).ok());
  auto put = [&](const sql::Table<Widget>& t, const Widget& w) {
    auto r = c->Query(sql::UpsertSql(sql::ShapeOf(t), sql::Dialect::kPostgres), pg::ParamsOf(t, w),
                      "put");
    ASSERT_TRUE(r.ok()) << r.status();
  };
  put(kWidgetsV1, Widget{"a", 1, ""});
  EXPECT_THAT(pg::CheckPgTable(*c, sql::ShapeOf(kWidgetsV2)).message(),
              HasSubstr("column color is missing"));
  ASSERT_TRUE(c->Exec(testing::kAddColorPg, "add color").ok());
  ASSERT_TRUE(pg::CheckPgTable(*c, sql::ShapeOf(kWidgetsV2)).ok());
  put(kWidgetsV2, Widget{"b", 2, "red"});
  put(kWidgetsV2, Widget{"a", 3, "blue"});  // an upsert: replaces a's row
  auto rows =
      c->Query(sql::SelectSql(sql::ShapeOf(kWidgetsV2), sql::Dialect::kPostgres), {}, "read");
  ASSERT_TRUE(rows.ok()) << rows.status();
  std::vector<Widget> read;
  ASSERT_TRUE(pg::ReadRows(*rows, kWidgetsV2, read).ok());
  EXPECT_THAT(read, ElementsAre(Widget{"a", 3, "blue"}, Widget{"b", 2, "red"}));
}

}  // namespace
}  // namespace paceline::store
