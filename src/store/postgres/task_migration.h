#pragma once
// The move of schema version 10 (schema.h): every task of `tasks_v9`, a column per field
// (kPgTaskTableV9), written again into `tasks` as its key and one blob (kTaskTable,
// store/task_row.h). Runs inside the migration's transaction, after kSchemaV10's SQL, and drops
// tasks_v9 at the end. The rows are read through a cursor and written kTaskMoveBatch at a
// time, so the move holds one batch in memory, not the table. A row that does not decode fails
// the migration (BadRow, naming the task), and the transaction leaves the database as it was.
//
// Thread-safety: as the connection's.

#include "absl/status/status.h"
#include "store/postgres/pg_conn.h"

namespace paceline::store::pg {

inline constexpr int kTaskMoveBatch = 1000;

absl::Status MoveTasksIntoBlobs(PgConn& c);

}  // namespace paceline::store::pg
