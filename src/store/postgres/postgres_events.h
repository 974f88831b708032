#pragma once
// PostgresStore's task events. From schema version 9 a commit writes one block per job
// (store/event_block.h, table event_blocks; postgres_write.h); the rows of `events` written
// before stay and are read with the blocks, as older than every block.
//   - ReadTaskEvents: one task's events in commit order, at most `limit` of the newest (> 0);
//   - ReadJobEvents: a job's events by instance, each instance's in commit order;
//   - ForEachStoredEvent: every event, by job, then as ReadJobEvents orders them.
// A block that does not decode is DATA_LOSS (nothing of it is returned).
//
// Thread-safety: as the connection's.

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/ids.h"
#include "records/records.h"
#include "store/postgres/pg_conn.h"
#include "store/store.h"

namespace paceline::store::pg {

absl::StatusOr<std::vector<records::TaskEvent>> ReadTaskEvents(PgConn& c, TaskId task,
                                                               size_t limit);
absl::Status ReadJobEvents(PgConn& c, JobId job, std::vector<records::TaskEvent>& out);
absl::Status ForEachStoredEvent(PgConn& c, const Store::EventFn& fn);

}  // namespace paceline::store::pg
