// Checking a described table's columns on SQLite (sqlite_rows.h).

#include "store/sqlite/sqlite_rows.h"

#include "absl/strings/str_cat.h"
#include "common/status.h"

namespace paceline::store {

absl::Status CheckSqliteTable(SqliteDb& db, const sql::Shape& t) {
  ASSIGN_OR_RETURN(Statement st, db.Prepare("SELECT name, type FROM pragma_table_info(?)"));
  st.Bind(1, t.name);
  std::vector<std::pair<std::string, std::string>> columns;
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    columns.emplace_back(st.ColumnText(0), st.ColumnText(1));
  }
  return sql::CheckColumns(t, sql::Dialect::kSqlite, columns);
}

}  // namespace paceline::store
