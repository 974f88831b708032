// Schema version 10's move of the tasks into blobs (task_migration.h).

#include "store/postgres/task_migration.h"

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "store/postgres/pg_rows.h"
#include "store/sql_tables.h"

namespace paceline::store::pg {

absl::Status MoveTasksIntoBlobs(PgConn& c) {
  const sql::Shape old_shape = sql::ShapeOf(kPgTaskTableV9);
  constexpr absl::string_view kReading = "reading the tasks of schema version 9";
  RETURN_IF_ERROR(c.Exec(
      absl::StrCat("DECLARE tasks_v9_rows NO SCROLL CURSOR FOR SELECT ", sql::SelectList(old_shape),
                   " FROM ", old_shape.name, " ORDER BY job, instance"),
      kReading));
  const std::string fetch = absl::StrCat("FETCH ", kTaskMoveBatch, " FROM tasks_v9_rows");
  const std::string copy_sql = sql::CopySql(sql::ShapeOf(kTaskTable));
  while (true) {
    ASSIGN_OR_RETURN(PgRows rows, c.Query(fetch, {}, kReading));
    if (rows.size() == 0) break;
    PgCopy copy{copy_sql.c_str(), {}};
    for (int i = 0; i < rows.size(); ++i) {
      records::TaskRecord task;
      RETURN_IF_ERROR(ReadRow(rows, i, kPgTaskTableV9, task));
      const PgParams blob = ParamsOf(kTaskTable, task);  // job, instance, data as bytea text
      for (size_t f = 0; f < blob.size(); ++f) AppendCopyField(copy.rows, blob[f], f == 0);
      copy.rows.push_back('\n');
    }
    RETURN_IF_ERROR(c.CopyIn(copy, "writing the tasks as blobs"));
  }
  RETURN_IF_ERROR(c.Exec("CLOSE tasks_v9_rows", kReading));
  return c.Exec("DROP TABLE tasks_v9", "dropping the tasks of schema version 9");
}

}  // namespace paceline::store::pg
