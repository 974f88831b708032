// SqliteStore: the task events, kept in blocks (store/event_block.h, schema version 6). A commit
// queues its events by job (QueueEvents) and writes one block per job before it ends
// (FlushEvents); reads decode a job's blocks in commit order.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "store/event_block.h"
#include "store/row_codec.h"
#include "store/sql_tables.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_store.h"

namespace paceline::store {

absl::Status SqliteStore::QueueEvents(const records::WriteBatch& b) {
  for (const records::TaskEvent& e : b.events) {
    RETURN_IF_ERROR(CountWrite());
    pending_events_[e.run.task.job.value()].push_back(&e);
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::FlushEvents() {
  if (pending_events_.empty()) return absl::OkStatus();
  static const std::string kAppendBlock =
      sql::InsertSql(sql::ShapeOf(kSqliteEventBlockTable), sql::Dialect::kSqlite);
  ASSIGN_OR_RETURN(Statement * st, Cached(kAppendBlock));
  absl::Status s;
  for (const auto& [job, events] : pending_events_) {
    st->Reset();
    BindRow(*st, kSqliteEventBlockTable, EventBlock{static_cast<int64_t>(job), &events});
    s = st->Run();
    if (!s.ok()) break;
  }
  pending_events_.clear();
  return s;
}

absl::Status SqliteStore::ForEachBlock(JobId job, bool newest_first,
                                       const std::function<bool(absl::string_view)>& fn) {
  ASSIGN_OR_RETURN(
      Statement * st,
      Cached(newest_first ? "SELECT data FROM event_blocks WHERE job = ? ORDER BY seq DESC"
                          : "SELECT data FROM event_blocks WHERE job = ? ORDER BY seq"));
  st->Reset();
  st->Bind(1, static_cast<int64_t>(job.value()));
  absl::Status s;
  while (true) {
    absl::StatusOr<bool> row = st->Step();
    if (!row.ok()) s = row.status();
    if (!row.ok() || !*row || !fn(st->ColumnBlob(0))) break;
  }
  st->Reset();
  return s;
}

absl::StatusOr<std::vector<records::TaskEvent>> SqliteStore::ListEvents(TaskId task, size_t limit) {
  std::vector<records::TaskEvent> newest_first, block;
  absl::Status bad;
  RETURN_IF_ERROR(ForEachBlock(task.job, /*newest_first=*/true, [&](absl::string_view data) {
    block.clear();
    bad = DecodeEventBlock(task.job, data, block);
    return bad.ok() && TakeNewestOfInstance(block, task.instance, limit, newest_first);
  }));
  RETURN_IF_ERROR(bad);
  std::reverse(newest_first.begin(), newest_first.end());
  return newest_first;
}

absl::Status SqliteStore::ReadJobEvents(JobId job, std::vector<records::TaskEvent>& out) {
  absl::Status bad;
  RETURN_IF_ERROR(ForEachBlock(job, /*newest_first=*/false, [&](absl::string_view data) {
    bad = DecodeEventBlock(job, data, out);
    return bad.ok();
  }));
  RETURN_IF_ERROR(bad);
  SortEventsByInstance(out);
  return absl::OkStatus();
}

absl::Status SqliteStore::ForEachEvent(const EventFn& fn) {
  ASSIGN_OR_RETURN(Statement st,
                   db_->Prepare("SELECT DISTINCT job FROM event_blocks ORDER BY job"));
  std::vector<JobId> jobs;
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    jobs.emplace_back(static_cast<uint64_t>(st.ColumnInt(0)));
  }
  for (JobId job : jobs) {
    std::vector<records::TaskEvent> events;
    RETURN_IF_ERROR(ReadJobEvents(job, events));
    for (const records::TaskEvent& e : events) RETURN_IF_ERROR(fn(e));
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::MigrateEventsToBlocks() {
  RETURN_IF_ERROR(db_->Exec(kSchemaV6));
  ASSIGN_OR_RETURN(Statement st,
                   db_->Prepare("SELECT job, instance, run, at_us, state, host, reason, message "
                                "FROM events ORDER BY job, seq"));
  records::WriteBatch batch;  // one job's events at a time
  auto flush = [&]() -> absl::Status {
    RETURN_IF_ERROR(QueueEvents(batch));
    RETURN_IF_ERROR(FlushEvents());
    batch.events.clear();
    return absl::OkStatus();
  };
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    const JobId job(static_cast<uint64_t>(st.ColumnInt(0)));
    if (!batch.events.empty() && batch.events.back().run.task.job != job) RETURN_IF_ERROR(flush());
    const int64_t state = st.ColumnInt(4);
    if (state < 0 || state >= kNumTaskStates) {
      return BadRow("events", job.ToString(), absl::StrCat("unknown state ", state));
    }
    batch.events.push_back(
        records::TaskEvent{RunId{TaskId{job, static_cast<uint32_t>(st.ColumnInt(1))},
                                 static_cast<uint32_t>(st.ColumnInt(2))},
                           absl::FromUnixMicros(st.ColumnInt(3)), static_cast<TaskState>(state),
                           st.ColumnText(5), st.ColumnText(6), st.ColumnText(7)});
  }
  RETURN_IF_ERROR(flush());
  return db_->Exec("DROP TABLE events");
}

}  // namespace paceline::store
