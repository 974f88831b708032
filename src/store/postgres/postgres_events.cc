#include "store/postgres/postgres_events.h"

#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "store/event_block.h"
#include "store/postgres/pg_rows.h"
#include "store/sql_tables.h"

namespace paceline::store::pg {
namespace {

constexpr sql::Dialect kPg = sql::Dialect::kPostgres;

// The rows of a query of kPgEventTable's columns, appended to `out` in the query's order.
absl::Status ReadEventRows(const PgRows& rows, std::vector<records::TaskEvent>& out) {
  for (int i = 0; i < rows.size(); ++i) {
    records::TaskEvent e;
    RETURN_IF_ERROR(ReadRow(rows, i, kPgEventTable, e));
    out.push_back(std::move(e));
  }
  return absl::OkStatus();
}

// `job`'s blocks in commit order (newest first with `newest_first`), decoded one by one into
// `fn`, which returns false to stop.
absl::Status ForEachBlock(PgConn& c, JobId job, bool newest_first,
                          const std::function<bool(std::vector<records::TaskEvent>&)>& fn) {
  static const std::string kOldest =
      sql::SelectSql(sql::ShapeOf(kPgEventBlockTable), kPg, "WHERE job = $1 ORDER BY seq", false);
  static const std::string kNewest = sql::SelectSql(sql::ShapeOf(kPgEventBlockTable), kPg,
                                                    "WHERE job = $1 ORDER BY seq DESC", false);
  ASSIGN_OR_RETURN(PgRows rows, c.Query(newest_first ? kNewest : kOldest,
                                        {absl::StrCat(job.value())}, "reading events"));
  std::vector<records::TaskEvent> events;
  for (int i = 0; i < rows.size(); ++i) {
    EventBlockRow block;
    RETURN_IF_ERROR(ReadRow(rows, i, kPgEventBlockTable, block));
    events.clear();
    RETURN_IF_ERROR(DecodeEventBlock(job, block.data, events));
    if (!fn(events)) break;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<records::TaskEvent>> ReadTaskEvents(PgConn& c, TaskId task,
                                                               size_t limit) {
  std::vector<records::TaskEvent> newest_first;
  bool more = true;
  RETURN_IF_ERROR(ForEachBlock(c, task.job, /*newest_first=*/true, [&](auto& block) {
    return more = TakeNewestOfInstance(block, task.instance, limit, newest_first);
  }));
  if (more) {  // then the rows written before the blocks
    std::optional<std::string> left;
    if (limit > 0) left = absl::StrCat(limit - newest_first.size());
    static const std::string kSelect = sql::SelectSql(
        sql::ShapeOf(kPgEventTable), kPg,
        "WHERE job = $1 AND instance = $2 ORDER BY seq DESC LIMIT $3", /*order=*/false);
    ASSIGN_OR_RETURN(
        PgRows rows,
        c.Query(kSelect, {absl::StrCat(task.job.value()), absl::StrCat(task.instance), left},
                "reading events"));
    RETURN_IF_ERROR(ReadEventRows(rows, newest_first));
  }
  std::reverse(newest_first.begin(), newest_first.end());
  return newest_first;
}

absl::Status ReadJobEvents(PgConn& c, JobId job, std::vector<records::TaskEvent>& out) {
  const size_t start = out.size();
  static const std::string kSelect = sql::SelectSql(sql::ShapeOf(kPgEventTable), kPg,
                                                    "WHERE job = $1 ORDER BY instance, seq", false);
  ASSIGN_OR_RETURN(PgRows rows,
                   c.Query(kSelect, {absl::StrCat(job.value())}, "reading a job's events"));
  RETURN_IF_ERROR(ReadEventRows(rows, out));
  RETURN_IF_ERROR(ForEachBlock(c, job, /*newest_first=*/false, [&](auto& block) {
    std::move(block.begin(), block.end(), std::back_inserter(out));
    return true;
  }));
  // By instance; within one, the older rows first, then the blocks in commit order.
  SortEventsByInstance(out, start);
  return absl::OkStatus();
}

absl::Status ForEachStoredEvent(PgConn& c, const Store::EventFn& fn) {
  ASSIGN_OR_RETURN(PgRows rows, c.Query("SELECT job FROM events UNION SELECT job FROM "
                                        "event_blocks ORDER BY job",
                                        {}, "reading the jobs with events"));
  std::vector<JobId> jobs;
  for (int i = 0; i < rows.size(); ++i) {
    ASSIGN_OR_RETURN(int64_t job, rows.Int(i, 0, "a job with events"));
    jobs.emplace_back(static_cast<uint64_t>(job));
  }
  for (JobId job : jobs) {  // one job's events in memory at a time
    std::vector<records::TaskEvent> events;
    RETURN_IF_ERROR(ReadJobEvents(c, job, events));
    for (const records::TaskEvent& e : events) RETURN_IF_ERROR(fn(e));
  }
  return absl::OkStatus();
}

}  // namespace paceline::store::pg
