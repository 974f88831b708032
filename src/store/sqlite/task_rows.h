#pragma once
// Reading the `tasks` table of the SQLite store into task records: ReadTaskRows for Load and
// ReadJob, StreamAllTaskRows for LoadInto. A row is (job, instance, data), data a task row
// (store/task_row.h); MigrateTaskColumnsToRows turns the column rows of schema versions 3 to 6
// into such rows.
//
// StreamAllTaskRows hands every row over in batches as it reads them (Store::LoadInto). From
// kParallelFrom instances on, it reads the upper half of the jobs on a second connection and
// thread while the caller's connection reads the lower half: a restart at 10 million tasks
// spends most of its time here, one row at a time through SQLite. Both connections read the
// same committed state: the store has one writer, the thread that calls this.
//
// Thread-safety: `db` is used on the calling thread only; the second connection is opened,
// used and closed inside the call.

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "common/ids.h"
#include "records/records.h"
#include "store/sqlite/db.h"
#include "store/store.h"

namespace paceline::store {

// The rows of `only` (every row when nullopt), appended to `out` by (job, instance).
absl::Status ReadTaskRows(SqliteDb& db, std::optional<JobId> only,
                          std::vector<records::TaskRecord>& out);

inline constexpr int64_t kParallelFrom = 200'000;
inline constexpr size_t kBatchRows = 65'536;  // StreamAllTaskRows's batches
inline constexpr int64_t kNoEnd = std::numeric_limits<int64_t>::max();

// The first job of the upper half of the instances of `jobs` (by id); kNoEnd when they have
// fewer than kParallelFrom instances in all, or there is no such job.
int64_t SplitJob(const std::vector<records::JobRecord>& jobs);

// Every row, handed to `sink` in batches of kBatchRows (and a last smaller one per half): the
// jobs below `split` (SplitJob) read on `db`, the others on a second connection and thread at
// once (kNoEnd: all on `db`). CANCELLED when the sink gave up.
absl::Status StreamAllTaskRows(SqliteDb& db, int64_t split, LoadSink& sink);

// Schema version 6 -> 7 (kSchemaV7), inside the caller's transaction: every row of `tasks`
// rewritten as a task row, with every field kept; DATA_LOSS on a row with an unknown state.
absl::Status MigrateTaskColumnsToRows(SqliteDb& db);

}  // namespace paceline::store
