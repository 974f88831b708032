#include "store/sqlite/task_rows.h"

#include <future>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "store/row_codec.h"
#include "store/sqlite/schema.h"
#include "store/task_row.h"

namespace paceline::store {
namespace {

void AssignText(const Statement& st, int col, std::string& out) {
  absl::string_view text = st.ColumnView(col);
  out.assign(text.data(), text.size());
}

// The key of a `tasks` row read with (job, instance) as its first two columns.
TaskId KeyOf(const Statement& st) {
  return TaskId{JobId(static_cast<uint64_t>(st.ColumnInt(0))),
                static_cast<uint32_t>(st.ColumnInt(1))};
}

// A row of the `tasks` table as versions 3 to 6 kept it, one column per field (kSchemaV3).
constexpr const char* kColumnRows =
    "SELECT job, instance, run, state, host, started_us, finished_us, exit_code, signal, reason, "
    "message, failures, not_before_us, restart_requested, spec_version, next_spec_version, "
    "volume_host FROM tasks ORDER BY job, instance";

absl::Status ReadColumnRow(const Statement& st, records::TaskRecord& t) {
  t.id = KeyOf(st);
  t.run = static_cast<uint32_t>(st.ColumnInt(2));
  int64_t state = st.ColumnInt(3);
  if (state < 0 || state >= kNumTaskStates) {
    return BadRow("tasks", t.id.ToString(), absl::StrCat("unknown state ", state));
  }
  t.state = static_cast<TaskState>(state);
  AssignText(st, 4, t.host);
  t.started_at = st.ColumnTime(5);
  t.finished_at = st.ColumnTime(6);
  t.exit_code = static_cast<int32_t>(st.ColumnInt(7));
  t.signal = static_cast<int32_t>(st.ColumnInt(8));
  AssignText(st, 9, t.reason);
  AssignText(st, 10, t.message);
  t.failures = static_cast<uint32_t>(st.ColumnInt(11));
  t.not_before = st.ColumnTime(12);
  t.restart_requested = st.ColumnInt(13) != 0;
  t.spec_version = static_cast<uint64_t>(st.ColumnInt(14));
  t.next_spec_version = static_cast<uint64_t>(st.ColumnInt(15));
  AssignText(st, 16, t.volume_host);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> CountRows(SqliteDb& db, int64_t from, int64_t to) {
  ASSIGN_OR_RETURN(Statement st,
                   db.Prepare("SELECT count(*) FROM tasks WHERE job >= ?1 AND job < ?2"));
  st.Bind(1, from).Bind(2, to);
  ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.ColumnInt(0) : 0;
}

// The rows of the jobs in [from, to), appended to `out`; `reserve`: count them first and make
// room for them (millions of records would otherwise move several times as the vector grows).
// With `sink`, every kBatchRows rows are handed to it instead (and the rest at the end).
absl::Status ReadRange(SqliteDb& db, int64_t from, int64_t to, bool reserve,
                       std::vector<records::TaskRecord>& out, LoadSink* sink = nullptr) {
  auto flush = [&]() -> absl::Status {
    if (!sink->Tasks(std::exchange(out, sink->TakeSpare()))) return LoadAbandoned();
    out.reserve(kBatchRows);  // a spare has the room already
    return absl::OkStatus();
  };
  if (sink != nullptr) out.reserve(kBatchRows);
  if (reserve) {
    ASSIGN_OR_RETURN(int64_t n, CountRows(db, from, to));
    out.reserve(out.size() + static_cast<size_t>(n));
  }
  ASSIGN_OR_RETURN(Statement st, db.Prepare("SELECT job, instance, data FROM tasks WHERE job >= ?1 "
                                            "AND job < ?2 ORDER BY job, instance"));
  st.Bind(1, from).Bind(2, to);
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    RETURN_IF_ERROR(DecodeTaskRow(KeyOf(st), st.ColumnBlob(2), out.emplace_back()));
    if (sink != nullptr && out.size() == kBatchRows) RETURN_IF_ERROR(flush());
  }
  if (sink != nullptr && !out.empty()) RETURN_IF_ERROR(flush());
  return absl::OkStatus();
}

}  // namespace

int64_t SplitJob(const std::vector<records::JobRecord>& jobs) {
  uint64_t total = 0;
  for (const records::JobRecord& j : jobs) total += j.instances;
  if (total < static_cast<uint64_t>(kParallelFrom)) return kNoEnd;
  uint64_t below = 0;
  for (const records::JobRecord& j : jobs) {
    if (below >= total / 2) return static_cast<int64_t>(j.id.value());
    below += j.instances;
  }
  return kNoEnd;
}

absl::Status ReadTaskRows(SqliteDb& db, std::optional<JobId> only,
                          std::vector<records::TaskRecord>& out) {
  if (only) {
    const auto id = static_cast<int64_t>(only->value());
    return ReadRange(db, id, id + 1, /*reserve=*/false, out);
  }
  return ReadRange(db, 0, kNoEnd, /*reserve=*/true, out);
}

// Reads through a memory map while it lives: millions of rows read once each, without copying
// every page out of the page cache.
class MappedReads {
 public:
  explicit MappedReads(SqliteDb& db) : db_(db) {
    (void)db_.Exec("PRAGMA mmap_size=2147418112");  // SQLite's largest (2 GiB)
  }
  ~MappedReads() { (void)db_.Exec("PRAGMA mmap_size=0"); }
  MappedReads(const MappedReads&) = delete;
  MappedReads& operator=(const MappedReads&) = delete;

 private:
  SqliteDb& db_;
};

absl::Status StreamAllTaskRows(SqliteDb& db, int64_t split, LoadSink& sink) {
  MappedReads mapped(db);
  std::vector<records::TaskRecord> lower;
  if (split == kNoEnd) return ReadRange(db, 0, kNoEnd, false, lower, &sink);
  std::future<absl::Status> read_upper =
      std::async(std::launch::async, [path = db.path(), split, &sink]() -> absl::Status {
        ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> second, SqliteDb::Open(path));
        MappedReads second_mapped(*second);
        std::vector<records::TaskRecord> upper;
        return ReadRange(*second, split, kNoEnd, false, upper, &sink);
      });
  absl::Status read_lower = ReadRange(db, 0, split, false, lower, &sink);
  absl::Status upper = read_upper.get();
  RETURN_IF_ERROR(read_lower);
  return upper;
}

absl::Status MigrateTaskColumnsToRows(SqliteDb& db) {
  RETURN_IF_ERROR(db.Exec(kSchemaV7));
  {
    ASSIGN_OR_RETURN(Statement read, db.Prepare(kColumnRows));
    ASSIGN_OR_RETURN(Statement write,
                     db.Prepare("INSERT INTO task_rows (job, instance, data) VALUES (?, ?, ?)"));
    records::TaskRecord t;
    while (true) {
      ASSIGN_OR_RETURN(bool row, read.Step());
      if (!row) break;
      RETURN_IF_ERROR(ReadColumnRow(read, t));
      write.Reset();
      write.Bind(1, static_cast<int64_t>(t.id.job.value()))
          .Bind(2, static_cast<int64_t>(t.id.instance))
          .BindBlob(3, EncodeTaskRow(t));
      RETURN_IF_ERROR(write.Run());
    }
  }
  RETURN_IF_ERROR(db.Exec("DROP TABLE tasks"));
  return db.Exec("ALTER TABLE task_rows RENAME TO tasks");
}

}  // namespace paceline::store
