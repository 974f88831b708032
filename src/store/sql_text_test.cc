// The SQL text made from the tables' descriptions (sql_text.h, sql_tables.h), and the check of
// a database's columns against them.

#include "store/sql_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/sql_tables.h"
#include "store/testing/widget_table.h"

namespace paceline::store::sql {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(SqlText, SqliteReplacesARowByItsKey) {
  EXPECT_EQ(UpsertSql(ShapeOf(kPoolTable), Dialect::kSqlite),
            "INSERT OR REPLACE INTO pools (path, spec) VALUES (?, ?)");
  EXPECT_EQ(SelectSql(ShapeOf(kSecretTable), Dialect::kSqlite),
            "SELECT path, key_id, sealed, created_by, created_us, updated_us FROM secrets "
            "ORDER BY path");
}

TEST(SqlText, PostgresUpsertsSetEveryColumnButTheKeyAndTheRevision) {
  EXPECT_EQ(UpsertSql(ShapeOf(kPoolTable), Dialect::kPostgres),
            "INSERT INTO pools (path, spec, rev) VALUES ($1, $2, currval('changes_rev')) "
            "ON CONFLICT (path) DO UPDATE SET spec = EXCLUDED.spec, rev = EXCLUDED.rev");
  // Secrets sort by bytes whatever the database's collation, as every backend sorts them.
  EXPECT_THAT(SelectSql(ShapeOf(kSecretTable), Dialect::kPostgres, "WHERE rev > $1"),
              HasSubstr("FROM secrets WHERE rev > $1 ORDER BY path COLLATE \"C\""));
}

TEST(SqlText, ManyRowsAreNumberedRowByRowAndATasksKeyIsTwoColumns) {
  std::string two = UpsertSql(ShapeOf(kTaskTable), Dialect::kPostgres, 2);
  EXPECT_THAT(two, HasSubstr("INSERT INTO tasks (job, instance, data) VALUES ($1, $2, $3), "
                             "($4, $5, $6) ON CONFLICT (job, instance) DO UPDATE SET "
                             "data = EXCLUDED.data"));
  EXPECT_THAT(two, ::testing::Not(HasSubstr("rev")));  // followed through task_changes
  EXPECT_THAT(two, ::testing::Not(HasSubstr("job = EXCLUDED.job")));
}

TEST(SqlText, TheDatabasesColumnsAreNeitherWrittenNorRevisedButRead) {
  // The audit log's seq is a sequence, and standbys do not follow the log: no rev.
  EXPECT_EQ(InsertSql(ShapeOf(kAuditTable), Dialect::kPostgres),
            "INSERT INTO audit (at_us, user_name, source, action, pool, target, outcome, message, "
            "request_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)");
  EXPECT_EQ(SelectList(ShapeOf(kAuditTable)),
            "seq, at_us, user_name, source, action, pool, target, outcome, message, request_id");
  EXPECT_EQ(CopySql(ShapeOf(kPgEventTable)),
            "COPY events (job, instance, run, at_us, state, host, reason, message) FROM STDIN");
}

TEST(SqlText, AColumnLeftOutOfTheMigrationsIsNamed) {
  Shape widgets = ShapeOf(testing::kWidgetsV2);
  EXPECT_TRUE(CheckColumns(widgets, Dialect::kSqlite,
                           {{"name", "TEXT"}, {"size", "INTEGER"}, {"color", "TEXT"}})
                  .ok());
  absl::Status missing =
      CheckColumns(widgets, Dialect::kSqlite, {{"name", "TEXT"}, {"size", "INTEGER"}});
  EXPECT_EQ(missing.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.message(),
              AllOf(HasSubstr("store table widgets"), HasSubstr("column color is missing")));
  absl::Status type = CheckColumns(widgets, Dialect::kPostgres,
                                   {{"name", "text"}, {"size", "integer"}, {"color", "text"}});
  EXPECT_THAT(type.message(), HasSubstr("column size is integer, expected bigint"));
  absl::Status extra = CheckColumns(ShapeOf(testing::kWidgetsV1), Dialect::kSqlite,
                                    {{"name", "TEXT"}, {"size", "INTEGER"}, {"color", "TEXT"}});
  EXPECT_THAT(extra.message(), HasSubstr("column color is not described"));
}

TEST(SqlText, AFollowedTableNeedsItsRevisionOnPostgresOnly) {
  const std::vector<std::pair<std::string, std::string>> pools = {{"path", "text"},
                                                                  {"spec", "text"}};
  EXPECT_THAT(CheckColumns(ShapeOf(kPoolTable), Dialect::kPostgres, pools).message(),
              HasSubstr("column rev is missing"));
  EXPECT_TRUE(
      CheckColumns(ShapeOf(kPoolTable), Dialect::kSqlite, {{"path", "TEXT"}, {"spec", "TEXT"}})
          .ok());
}

}  // namespace
}  // namespace paceline::store::sql
