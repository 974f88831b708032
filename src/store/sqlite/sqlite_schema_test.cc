// The SQLite store against its schema: rows as the statements of the release before the tables
// were described wrote them read back the same, and the described statements write the same
// columns; a database that lacks a described column is refused at open and left as it was; and
// a new column is one description and one migration (store/testing/widget_table.h).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "spec/yaml_spec.h"
#include "store/sqlite/sqlite_rows.h"
#include "store/sqlite/sqlite_store.h"
#include "store/testing/golden_records.h"
#include "store/testing/widget_table.h"

namespace paceline::store {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TempDir() {
  auto dir = std::filesystem::temp_directory_path() /
             ("pl-schema-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  return dir.string();
}

std::unique_ptr<SqliteDb> MustOpenDb(const std::string& dir) {
  auto db = SqliteDb::Open(dir + "/" + SqliteStore::kFileName);
  EXPECT_TRUE(db.ok()) << db.status();
  return db.ok() ? std::move(*db) : nullptr;
}

using testing::Golden;
using testing::MakeGolden;

// The statements of the release before the descriptions, with the golden records' values.
std::vector<std::string> EarlierStatements(const Golden& g) {
  return {
      absl::StrCat("INSERT OR REPLACE INTO pools (path, spec) VALUES ('/ads', '",
                   PrintPoolSpec(g.pool.spec), "')"),
      absl::StrCat("INSERT OR REPLACE INTO jobs (id, pool, spec, version, goal, created_us, "
                   "old_specs, updates, instances, owner, owner_group) VALUES (7, '/ads', '",
                   PrintJobSpec(g.job.spec),
                   "', 3, 1, 1700000000000000, '{}', '[]', 2, 'alice', 'ads-team')"),
      "INSERT OR REPLACE INTO hosts (name, maintenance, cpu_milli, memory_bytes, disk_bytes, "
      "gpu_milli, labels) VALUES ('host-1', 1, 4000, 8589934592, 107374182400, 2000, "
      "'{\"zone\":\"a\"}')",
      "INSERT OR REPLACE INTO tokens (id, name, user_name, group_name, role, scope, salt, hash, "
      "created_by, created_us, expires_us, revoked_us) VALUES ('tok-1', 'ci', 'alice', "
      "'ads-team', 'submitter', '/ads', '00ff', 'beef', 'root', 5, NULL, 9)",
      "INSERT OR REPLACE INTO secrets (path, key_id, sealed, created_by, created_us, updated_us) "
      "VALUES ('/ads/db', 'k1', '00aa', 'alice', 10, 20)",
      "INSERT INTO audit (at_us, user_name, source, action, pool, target, outcome, message, "
      "request_id) VALUES (30, 'alice', '127.0.0.1:1', 'JobService.KillJob', '/ads', 'job 7', "
      "'OK', '', 'req-1')",
  };
}

// Each table's columns as the earlier statements read them, as text, row by row.
std::vector<std::string> Dump(SqliteDb& db) {
  std::vector<std::string> out;
  for (const char* sql :
       {"SELECT path, spec FROM pools",
        "SELECT id, pool, spec, version, goal, created_us, old_specs, updates, instances, owner, "
        "owner_group FROM jobs",
        "SELECT name, maintenance, cpu_milli, memory_bytes, disk_bytes, gpu_milli, labels FROM "
        "hosts",
        "SELECT id, name, user_name, group_name, role, scope, salt, hash, created_by, created_us, "
        "expires_us, revoked_us FROM tokens",
        "SELECT path, key_id, sealed, created_by, created_us, updated_us FROM secrets",
        "SELECT seq, at_us, user_name, source, action, pool, target, outcome, message, "
        "request_id FROM audit"}) {
    auto st = db.Prepare(sql);
    EXPECT_TRUE(st.ok()) << st.status();
    if (!st.ok()) continue;
    while (*st->Step()) {
      std::string row;
      for (int c = 0; c < st->ColumnCount(); ++c) {
        absl::StrAppend(&row, c ? "|" : "", st->ColumnIsNull(c) ? "NULL" : st->ColumnText(c));
      }
      out.push_back(row);
    }
  }
  return out;
}

TEST(SqliteSchema, RowsTheEarlierStatementsWroteReadBackAndTheDescribedOnesWriteTheSame) {
  const std::string dir = TempDir();
  const Golden g = MakeGolden();
  ASSERT_TRUE(SqliteStore::Open(dir).ok());
  std::vector<std::string> earlier;
  {
    std::unique_ptr<SqliteDb> db = MustOpenDb(dir);
    ASSERT_NE(db, nullptr);
    for (const std::string& sql : EarlierStatements(g)) ASSERT_TRUE(db->Exec(sql).ok()) << sql;
    earlier = Dump(*db);
  }
  auto store = SqliteStore::Open(dir);
  ASSERT_TRUE(store.ok()) << store.status();
  auto c = (*store)->Load();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->pools, ElementsAre(g.pool));
  EXPECT_THAT(c->jobs, ElementsAre(g.job));
  EXPECT_THAT(c->hosts, ElementsAre(g.host));
  EXPECT_THAT(c->tokens, ElementsAre(g.token));
  EXPECT_THAT(c->secrets, ElementsAre(g.secret));
  auto audit = (*store)->ListAudit({});
  ASSERT_TRUE(audit.ok()) << audit.status();
  EXPECT_THAT(*audit, ElementsAre(g.audit));
  store->reset();

  // The same records written by the described statements into a new store: the same columns.
  const std::string dir2 = dir + "-described";
  std::filesystem::remove_all(dir2);
  {
    auto fresh = SqliteStore::Open(dir2);
    ASSERT_TRUE(fresh.ok()) << fresh.status();
    records::WriteBatch b;
    b.put_pools = {g.pool};
    b.put_jobs = {g.job};
    b.put_hosts = {g.host};
    b.put_tokens = {g.token};
    b.put_secrets = {g.secret};
    b.audit = {g.audit};
    ASSERT_TRUE((*fresh)->Commit(b).ok());
  }
  std::unique_ptr<SqliteDb> db2 = MustOpenDb(dir2);
  ASSERT_NE(db2, nullptr);
  EXPECT_EQ(Dump(*db2), earlier);
  EXPECT_EQ(earlier.size(), 6u);
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(dir2);
}

TEST(SqliteSchema, AStoreWithoutADescribedColumnIsRefusedNamingItAndLeftAsItWas) {
  const std::string dir = TempDir();
  ASSERT_TRUE(SqliteStore::Open(dir).ok());
  {
    std::unique_ptr<SqliteDb> db = MustOpenDb(dir);
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(db->Exec("ALTER TABLE jobs DROP COLUMN owner_group").ok());
  }
  auto store = SqliteStore::Open(dir);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(),
              AllOf(HasSubstr("store table jobs"), HasSubstr("column owner_group is missing")));
  std::unique_ptr<SqliteDb> db = MustOpenDb(dir);
  ASSERT_NE(db, nullptr);
  auto opens = db->Prepare("SELECT value FROM meta WHERE key = 'open_count'");
  ASSERT_TRUE(opens.ok());
  ASSERT_TRUE(*opens->Step());
  EXPECT_EQ(opens->ColumnText(0), "1");  // the refused open changed nothing
  std::filesystem::remove_all(dir);
}

TEST(SqliteSchema, ANewColumnIsOneDescriptionAndOneMigration) {
  using testing::kWidgetsV1;
  using testing::kWidgetsV2;
  using testing::Widget;
  const std::string dir = TempDir();
  std::filesystem::create_directories(dir);
  std::unique_ptr<SqliteDb> db = MustOpenDb(dir);
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Exec(testing::kCreateWidgetsSqlite).ok());
  ASSERT_TRUE(CheckSqliteTable(*db, sql::ShapeOf(kWidgetsV1)).ok());
  auto put = [&](const sql::Table<Widget>& t, const Widget& w) {
    auto st = db->Prepare(sql::UpsertSql(sql::ShapeOf(t), sql::Dialect::kSqlite));
    ASSERT_TRUE(st.ok()) << st.status();
    BindRow(*st, t, w);
    ASSERT_TRUE(st->Run().ok());
  };
  put(kWidgetsV1, Widget{"a", 1, ""});
  // The description gained `color`; the database has not yet.
  EXPECT_THAT(CheckSqliteTable(*db, sql::ShapeOf(kWidgetsV2)).message(),
              HasSubstr("column color is missing"));
  ASSERT_TRUE(db->Exec(testing::kAddColorSqlite).ok());
  ASSERT_TRUE(CheckSqliteTable(*db, sql::ShapeOf(kWidgetsV2)).ok());
  put(kWidgetsV2, Widget{"b", 2, "red"});
  auto st = db->Prepare(sql::SelectSql(sql::ShapeOf(kWidgetsV2), sql::Dialect::kSqlite));
  ASSERT_TRUE(st.ok()) << st.status();
  std::vector<Widget> read;
  while (*st->Step()) {
    Widget w;
    ASSERT_TRUE(ReadRow(*st, kWidgetsV2, w).ok());
    read.push_back(w);
  }
  EXPECT_THAT(read, ElementsAre(Widget{"a", 1, ""}, Widget{"b", 2, "red"}));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace paceline::store
