// Checking a described table's columns on PostgreSQL (pg_rows.h).

#include "store/postgres/pg_rows.h"

#include "common/status.h"

namespace paceline::store::pg {

absl::Status CheckPgTable(PgConn& c, const sql::Shape& t) {
  ASSIGN_OR_RETURN(PgRows rows,
                   c.Query("SELECT column_name, data_type FROM information_schema.columns "
                           "WHERE table_schema = current_schema() AND table_name = $1 "
                           "ORDER BY ordinal_position",
                           {std::string(t.name)}, "reading the store's columns"));
  std::vector<std::pair<std::string, std::string>> columns;
  for (int i = 0; i < rows.size(); ++i) {
    columns.emplace_back(std::string(rows.Text(i, 0)), std::string(rows.Text(i, 1)));
  }
  return sql::CheckColumns(t, sql::Dialect::kPostgres, columns);
}

}  // namespace paceline::store::pg
