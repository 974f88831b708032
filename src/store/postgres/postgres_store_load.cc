// PostgresStore's reads: Load, ReadChanges, ListEvents, ForEachEvent, ListAudit, ListUsage
// (postgres_store.h).

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "store/audit_query.h"
#include "store/postgres/pg_rows.h"
#include "store/postgres/postgres_events.h"
#include "store/postgres/postgres_store.h"
#include "store/spec_parsing.h"
#include "store/sql_tables.h"
#include "store/usage_sql.h"

namespace paceline::store {
namespace {

// Reads the columns of one row in order, as the types they should hold (the deletions, which
// are no record's table).
class RowReader {
 public:
  RowReader(const PgRows& rows, int row, absl::string_view table)
      : rows_(rows), row_(row), table_(table) {}
  absl::StatusOr<int64_t> Int() {
    int c = col_++;
    return rows_.Int(row_, c, absl::StrCat("store table ", table_, ", column ", c));
  }
  std::string Text() { return std::string(rows_.Text(row_, col_++)); }

 private:
  const PgRows& rows_;
  int row_;
  absl::string_view table_;
  int col_ = 0;
};

constexpr sql::Dialect kPg = sql::Dialect::kPostgres;

// The rows of table `t` written after revision `since` (all: kNoRevision), in its order.
template <typename Record>
absl::Status LoadTable(PgConn& c, const sql::Table<Record>& t, const std::string& since,
                       std::vector<Record>& out) {
  ASSIGN_OR_RETURN(PgRows rows, c.Query(sql::SelectSql(sql::ShapeOf(t), kPg, "WHERE rev > $1"),
                                        {since}, absl::StrCat("loading ", t.name)));
  return pg::ReadRows(rows, t, out);
}

// The rows changed after revision `since`, or (`only`) those of one job.
struct RowFilter {
  std::string since = absl::StrCat(kNoRevision);
  std::optional<JobId> only;
  std::string Where(absl::string_view job_column) const {
    return only ? absl::StrCat("WHERE ", job_column, " = $1") : "WHERE rev > $1";
  }
  std::string Param() const { return only ? absl::StrCat(only->value()) : since; }
};

// The jobs' specs are left to parse (SpecParsing): their texts go to `spec_texts`.
absl::Status LoadJobs(PgConn& c, const RowFilter& f, records::StoreContents& out,
                      std::vector<std::string>& spec_texts) {
  ASSIGN_OR_RETURN(PgRows rows, c.Query(sql::SelectSql(sql::ShapeOf(kJobTable), kPg, f.Where("id")),
                                        {f.Param()}, "loading jobs"));
  for (int i = 0; i < rows.size(); ++i) {
    JobRow j;
    RETURN_IF_ERROR(pg::ReadRow(rows, i, kJobTable, j));
    spec_texts.push_back(std::move(j.spec_text));
    out.jobs.push_back(std::move(j));
  }
  return absl::OkStatus();
}

// Tasks have no revision: those changed after `since` are the keys of task_changes (schema.h,
// version 10), read by key.
absl::Status LoadTasks(PgConn& c, const RowFilter& f, records::StoreContents& out) {
  const sql::Shape shape = sql::ShapeOf(kTaskTable);
  const bool all = !f.only && f.since == absl::StrCat(kNoRevision);
  const std::string where =
      f.only ? f.Where("job")
      : all  ? ""
             : "WHERE (job, instance) IN (SELECT u.job, u.instance FROM task_changes c, "
               "unnest(c.jobs, c.instances) AS u(job, instance) WHERE c.rev > $1)";
  PgParams params;
  if (!all) params.push_back(f.Param());
  ASSIGN_OR_RETURN(PgRows rows,
                   c.Query(sql::SelectSql(shape, kPg, where), params, "loading tasks"));
  return pg::ReadRows(rows, kTaskTable, out.tasks);
}

absl::Status LoadDeletions(PgConn& c, const std::string& since, StoreChanges& out) {
  ASSIGN_OR_RETURN(PgRows rows, c.Query("SELECT kind, job, instance, path FROM deletions "
                                        "WHERE rev > $1 ORDER BY rev",
                                        {since}, "loading deletions"));
  for (int i = 0; i < rows.size(); ++i) {
    RowReader r(rows, i, "deletions");
    std::string kind = r.Text();
    ASSIGN_OR_RETURN(int64_t job, r.Int());
    ASSIGN_OR_RETURN(int64_t instance, r.Int());
    JobId id(static_cast<uint64_t>(job));
    if (kind == "pool") {
      out.deleted_pools.push_back(r.Text());
    } else if (kind == "secret") {
      out.deleted_secrets.push_back(r.Text());
    } else if (kind == "job") {
      out.deleted_jobs.push_back(id);
    } else {
      out.deleted_tasks.push_back(TaskId{id, static_cast<uint32_t>(instance)});
    }
  }
  return absl::OkStatus();
}

// The newest revision among the rows written or deleted (kNoRevision: none).
absl::StatusOr<int64_t> NewestRevision(PgConn& c) {
  ASSIGN_OR_RETURN(PgRows rows,
                   c.Query("SELECT COALESCE(GREATEST((SELECT max(rev) FROM pools), "
                           "(SELECT max(rev) FROM jobs), (SELECT max(rev) FROM task_changes), "
                           "(SELECT max(rev) FROM hosts), (SELECT max(rev) FROM tokens), "
                           "(SELECT max(rev) FROM secrets), (SELECT max(rev) FROM deletions)), "
                           "$1)",
                           {absl::StrCat(kNoRevision)}, "reading the newest revision"));
  return rows.Int(0, 0, "the newest revision");
}

// The meta values a read uses (an absent key reads as ""), in one query.
struct ReadMeta {
  std::string changes_from;
  std::string next_job_id;
  std::string cluster_id;
};
absl::StatusOr<ReadMeta> ReadMetaOf(PgConn& c) {
  ASSIGN_OR_RETURN(PgRows rows, c.Query("SELECT key, value FROM meta WHERE key IN ('changes_from', "
                                        "'next_job_id', 'cluster_id')",
                                        {}, "reading the store's meta"));
  ReadMeta m;
  for (int i = 0; i < rows.size(); ++i) {
    const absl::string_view key = rows.Text(i, 0);
    std::string* to = key == "changes_from"  ? &m.changes_from
                      : key == "next_job_id" ? &m.next_job_id
                                             : &m.cluster_id;
    *to = std::string(rows.Text(i, 1));
  }
  return m;
}

}  // namespace

absl::StatusOr<records::StoreContents> PostgresStore::Load() {
  ASSIGN_OR_RETURN(StoreChanges all, ReadChanges(kNoRevision));
  return std::move(all.changed);
}

absl::StatusOr<StoreChanges> PostgresStore::ReadChanges(int64_t since) {
  ASSIGN_OR_RETURN(PgConn * c, Conn());
  StoreChanges out;
  records::StoreContents& changed = out.changed;
  const std::string after = absl::StrCat(since);
  // One snapshot for all tables: what a concurrent leader commits is either all in or all out.
  RETURN_IF_ERROR(c->Exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "loading"));
  absl::Status s = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(int64_t newest, NewestRevision(*c));
    out.rev = std::max(since, newest);
    ASSIGN_OR_RETURN(ReadMeta meta, ReadMetaOf(*c));
    if (since != kNoRevision) {
      const std::string& text = meta.changes_from;
      int64_t from = kNoRevision;
      if (!text.empty() && !absl::SimpleAtoi(text, &from)) {
        return absl::DataLossError(absl::StrCat("changes_from '", text, "' is not a number"));
      }
      if (since + 1 < from) {
        return absl::OutOfRangeError(absl::StrCat("the changes after revision ", since,
                                                  " are compacted (they are kept from revision ",
                                                  from, "): read the store whole"));
      }
    }
    RETURN_IF_ERROR(LoadTable(*c, kPoolTable, after, changed.pools));
    std::vector<std::string> spec_texts;
    RETURN_IF_ERROR(LoadJobs(*c, RowFilter{after}, changed, spec_texts));
    {
      SpecParsing parsing(std::move(spec_texts), &changed.jobs);  // while the tasks are read
      absl::Status tasks = LoadTasks(*c, RowFilter{after}, changed);
      RETURN_IF_ERROR(parsing.Wait());
      RETURN_IF_ERROR(tasks);
    }
    RETURN_IF_ERROR(LoadTable(*c, kHostTable, after, changed.hosts));
    RETURN_IF_ERROR(LoadTable(*c, kTokenTable, after, changed.tokens));
    RETURN_IF_ERROR(LoadTable(*c, kSecretTable, after, changed.secrets));
    if (since != kNoRevision) RETURN_IF_ERROR(LoadDeletions(*c, after, out));
    if (!absl::SimpleAtoi(meta.next_job_id, &changed.next_job_id)) {
      return absl::DataLossError(
          absl::StrCat("next_job_id '", meta.next_job_id, "' is not a number"));
    }
    changed.cluster_id = std::move(meta.cluster_id);
    return c->Exec("COMMIT", "loading");
  }();
  if (!s.ok() && c->healthy()) (void)c->Exec("ROLLBACK", "loading");
  RETURN_IF_ERROR(s);
  return out;
}

absl::StatusOr<std::vector<records::TaskEvent>> PostgresStore::ListEvents(TaskId task,
                                                                          size_t limit) {
  ASSIGN_OR_RETURN(PgConn * c, Conn());
  return pg::ReadTaskEvents(*c, task, limit);
}

absl::StatusOr<std::optional<records::JobHistory>> PostgresStore::ReadJob(JobId job) {
  ASSIGN_OR_RETURN(PgConn * c, Conn());
  // One snapshot, so that the tasks and events match the job.
  RETURN_IF_ERROR(c->Exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "reading a job"));
  absl::StatusOr<std::optional<records::JobHistory>> out =
      [&]() -> absl::StatusOr<std::optional<records::JobHistory>> {
    records::StoreContents found;
    RowFilter only{.only = job};
    std::vector<std::string> spec_texts;
    RETURN_IF_ERROR(LoadJobs(*c, only, found, spec_texts));
    if (found.jobs.empty()) return std::nullopt;
    RETURN_IF_ERROR(ParseStoredSpecs(spec_texts, found.jobs));
    RETURN_IF_ERROR(LoadTasks(*c, only, found));
    records::JobHistory h{std::move(found.jobs.front()), std::move(found.tasks), {}};
    RETURN_IF_ERROR(pg::ReadJobEvents(*c, job, h.events));
    return h;
  }();
  if (out.ok()) {
    RETURN_IF_ERROR(c->Exec("COMMIT", "reading a job"));
  } else if (c->healthy()) {
    (void)c->Exec("ROLLBACK", "reading a job");
  }
  return out;
}

absl::StatusOr<StoreStats> PostgresStore::Stats() {
  ASSIGN_OR_RETURN(PgConn * c, Conn());
  StoreStats s;
  ASSIGN_OR_RETURN(PgRows rows,
                   c->Query("SELECT relname, n_live_tup FROM pg_stat_user_tables WHERE relname "
                            "IN ('audit', 'event_blocks', 'events', 'hosts', 'jobs', 'pools', "
                            "'secrets', "
                            "'tasks', 'tokens') ORDER BY relname",
                            {}, "reading the tables' sizes"));
  for (int i = 0; i < rows.size(); ++i) {
    ASSIGN_OR_RETURN(int64_t n, rows.Int(i, 1, "live rows"));
    s.rows.emplace_back(std::string(rows.Text(i, 0)), n);
  }
  ASSIGN_OR_RETURN(PgRows size, c->Query("SELECT pg_database_size(current_database())", {},
                                         "reading the database's size"));
  ASSIGN_OR_RETURN(s.bytes, size.Int(0, 0, "the database's size"));
  return s;
}

absl::Status PostgresStore::ForEachEvent(const EventFn& fn) {
  ASSIGN_OR_RETURN(PgConn * c, Conn());
  return pg::ForEachStoredEvent(*c, fn);
}

absl::StatusOr<std::vector<records::AuditRecord>> PostgresStore::ListAudit(
    const records::AuditQuery& query) {
  ASSIGN_OR_RETURN(PgConn * c, Conn());
  AuditSelect select = AuditSelectSql(query, '$');
  PgParams params;
  for (const std::variant<int64_t, std::string>& p : select.params) {
    params.push_back(std::visit([](const auto& v) { return absl::StrCat(v); }, p));
  }
  ASSIGN_OR_RETURN(PgRows rows, c->Query(select.sql, params, "reading the audit log"));
  std::vector<records::AuditRecord> out;
  RETURN_IF_ERROR(pg::ReadRows(rows, kAuditTable, out));
  return out;
}

absl::StatusOr<std::vector<records::UsageRecord>> PostgresStore::ListUsage(
    const records::UsageQuery& query) {
  ASSIGN_OR_RETURN(PgConn * c, Conn());
  UsageSelect select = UsageSelectSql(query, '$');
  PgParams params;
  for (const std::variant<int64_t, std::string>& p : select.params) {
    params.push_back(std::visit([](const auto& v) { return absl::StrCat(v); }, p));
  }
  ASSIGN_OR_RETURN(PgRows rows, c->Query(select.sql, params, "reading usage"));
  std::vector<records::UsageRecord> out;
  RETURN_IF_ERROR(pg::ReadRows(rows, kUsageTable, out));
  // The key's order by bytes, as the other backends list it (the database's collation may
  // order the pools' text otherwise).
  std::sort(out.begin(), out.end(), records::UsageKeyLess);
  return out;
}

}  // namespace paceline::store
