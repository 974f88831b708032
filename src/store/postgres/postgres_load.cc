// PostgresStore's reads: Load, ReadChanges, ListEvents, ForEachEvent, ListAudit
// (postgres_store.h).

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "spec/yaml_spec.h"
#include "store/audit_query.h"
#include "store/postgres/postgres_store.h"
#include "store/row_codec.h"
#include "store/spec_parsing.h"

namespace paceline::store {
namespace {

// Reads the columns of one row in order, as the types they should hold.
class RowReader {
 public:
  RowReader(const PgRows& rows, int row, absl::string_view table)
      : rows_(rows), row_(row), table_(table) {}
  absl::StatusOr<int64_t> Int() {
    int c = col_++;
    return rows_.Int(row_, c, absl::StrCat("store table ", table_, ", column ", c));
  }
  // NULL stands for `null_means` (schema.h).
  absl::StatusOr<absl::Time> Time(absl::Time null_means = absl::InfinitePast()) {
    if (rows_.IsNull(row_, col_)) {
      ++col_;
      return null_means;
    }
    ASSIGN_OR_RETURN(int64_t us, Int());
    return absl::FromUnixMicros(us);
  }
  std::string Text() { return std::string(rows_.Text(row_, col_++)); }

 private:
  const PgRows& rows_;
  int row_;
  absl::string_view table_;
  int col_ = 0;
};

absl::StatusOr<TaskState> StateOf(int64_t v, absl::string_view table, const TaskId& task) {
  if (v < 0 || v >= kNumTaskStates) {
    return BadRow(table, task.ToString(), absl::StrCat("unknown state ", v));
  }
  return static_cast<TaskState>(v);
}

// The columns after (job, instance): run, at_us, state, host, reason, message.
absl::StatusOr<records::TaskEvent> ReadEvent(RowReader& r, TaskId task) {
  records::TaskEvent e;
  ASSIGN_OR_RETURN(int64_t run, r.Int());
  e.run = RunId{task, static_cast<uint32_t>(run)};
  ASSIGN_OR_RETURN(e.at, r.Time());
  ASSIGN_OR_RETURN(int64_t state, r.Int());
  ASSIGN_OR_RETURN(e.state, StateOf(state, "events", task));
  e.host = r.Text();
  e.reason = r.Text();
  e.message = r.Text();
  return e;
}

// Each Load* reads the rows of one table written after revision `since` (all: kNoRevision).
absl::Status LoadPools(PgConn& c, const std::string& since, records::StoreContents& out) {
  ASSIGN_OR_RETURN(PgRows rows, c.Query("SELECT path, spec FROM pools WHERE rev > $1 ORDER BY path",
                                        {since}, "loading pools"));
  for (int i = 0; i < rows.size(); ++i) {
    records::PoolRecord p;
    p.path = std::string(rows.Text(i, 0));
    absl::StatusOr<PoolSpec> spec = ParsePoolSpec(std::string(rows.Text(i, 1)), "stored pool");
    if (!spec.ok()) return BadRow("pools", p.path, spec.status().message());
    p.spec = *std::move(spec);
    out.pools.push_back(std::move(p));
  }
  return absl::OkStatus();
}

// The rows changed after revision `since`, or (`only`) those of one job.
struct RowFilter {
  std::string since = absl::StrCat(kNoRevision);
  std::optional<JobId> only;
  std::string Where(absl::string_view job_column) const {
    return only ? absl::StrCat(" WHERE ", job_column, " = $1") : " WHERE rev > $1";
  }
  std::string Param() const { return only ? absl::StrCat(only->value()) : since; }
};

// The jobs' specs are left to parse (SpecParsing): their texts go to `spec_texts`.
absl::Status LoadJobs(PgConn& c, const RowFilter& f, records::StoreContents& out,
                      std::vector<std::string>& spec_texts) {
  ASSIGN_OR_RETURN(PgRows rows,
                   c.Query(absl::StrCat("SELECT id, pool, spec, version, goal, created_us, "
                                        "old_specs, updates, instances, owner, owner_group "
                                        "FROM jobs",
                                        f.Where("id"), " ORDER BY id"),
                           {f.Param()}, "loading jobs"));
  for (int i = 0; i < rows.size(); ++i) {
    RowReader r(rows, i, "jobs");
    records::JobRecord j;
    ASSIGN_OR_RETURN(int64_t id, r.Int());
    j.id = JobId(static_cast<uint64_t>(id));
    j.pool = r.Text();
    spec_texts.push_back(r.Text());
    ASSIGN_OR_RETURN(int64_t version, r.Int());
    j.version = static_cast<uint64_t>(version);
    ASSIGN_OR_RETURN(int64_t goal, r.Int());
    j.goal = static_cast<records::JobGoal>(goal);
    ASSIGN_OR_RETURN(j.created_at, r.Time());
    absl::StatusOr<std::map<uint64_t, JobSpec>> old = DecodeOldSpecs(r.Text());
    if (!old.ok()) return BadRow("jobs", j.id.ToString(), old.status().message());
    j.old_specs = *std::move(old);
    absl::StatusOr<std::vector<records::UpdateRecord>> updates = DecodeUpdates(r.Text());
    if (!updates.ok()) return BadRow("jobs", j.id.ToString(), updates.status().message());
    j.updates = *std::move(updates);
    ASSIGN_OR_RETURN(int64_t instances, r.Int());
    j.instances = static_cast<uint32_t>(instances);
    j.owner = r.Text();
    j.owner_group = r.Text();
    out.jobs.push_back(std::move(j));
  }
  return absl::OkStatus();
}

absl::Status LoadTasks(PgConn& c, const RowFilter& f, records::StoreContents& out) {
  ASSIGN_OR_RETURN(PgRows rows,
                   c.Query(absl::StrCat("SELECT job, instance, run, state, host, started_us, "
                                        "finished_us, exit_code, signal, reason, message, "
                                        "failures, not_before_us, restart_requested, "
                                        "spec_version, next_spec_version, volume_host FROM tasks",
                                        f.Where("job"), " ORDER BY job, instance"),
                           {f.Param()}, "loading tasks"));
  out.tasks.reserve(static_cast<size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) {
    RowReader r(rows, i, "tasks");
    records::TaskRecord t;
    ASSIGN_OR_RETURN(int64_t job, r.Int());
    ASSIGN_OR_RETURN(int64_t instance, r.Int());
    t.id = TaskId{JobId(static_cast<uint64_t>(job)), static_cast<uint32_t>(instance)};
    ASSIGN_OR_RETURN(int64_t run, r.Int());
    t.run = static_cast<uint32_t>(run);
    ASSIGN_OR_RETURN(int64_t state, r.Int());
    ASSIGN_OR_RETURN(t.state, StateOf(state, "tasks", t.id));
    t.host = r.Text();
    ASSIGN_OR_RETURN(t.started_at, r.Time());
    ASSIGN_OR_RETURN(t.finished_at, r.Time());
    ASSIGN_OR_RETURN(int64_t exit_code, r.Int());
    t.exit_code = static_cast<int32_t>(exit_code);
    ASSIGN_OR_RETURN(int64_t signal, r.Int());
    t.signal = static_cast<int32_t>(signal);
    t.reason = r.Text();
    t.message = r.Text();
    ASSIGN_OR_RETURN(int64_t failures, r.Int());
    t.failures = static_cast<uint32_t>(failures);
    ASSIGN_OR_RETURN(t.not_before, r.Time());
    ASSIGN_OR_RETURN(int64_t restart, r.Int());
    t.restart_requested = restart != 0;
    ASSIGN_OR_RETURN(int64_t spec_version, r.Int());
    t.spec_version = static_cast<uint64_t>(spec_version);
    ASSIGN_OR_RETURN(int64_t next_spec_version, r.Int());
    t.next_spec_version = static_cast<uint64_t>(next_spec_version);
    t.volume_host = r.Text();
    out.tasks.push_back(std::move(t));
  }
  return absl::OkStatus();
}

absl::Status LoadHosts(PgConn& c, const std::string& since, records::StoreContents& out) {
  ASSIGN_OR_RETURN(PgRows rows,
                   c.Query("SELECT name, maintenance, cpu_milli, memory_bytes, disk_bytes, "
                           "gpu_milli, labels FROM hosts WHERE rev > $1 ORDER BY name",
                           {since}, "loading hosts"));
  for (int i = 0; i < rows.size(); ++i) {
    RowReader r(rows, i, "hosts");
    records::HostRecord h;
    h.name = r.Text();
    ASSIGN_OR_RETURN(int64_t maintenance, r.Int());
    h.maintenance = static_cast<records::HostMaintenance>(maintenance);
    ASSIGN_OR_RETURN(int64_t cpu, r.Int());
    ASSIGN_OR_RETURN(int64_t memory, r.Int());
    ASSIGN_OR_RETURN(int64_t disk, r.Int());
    ASSIGN_OR_RETURN(int64_t gpu, r.Int());
    h.capacity = Resources::Of(cpu, memory, disk, gpu);
    absl::StatusOr<std::map<std::string, std::string>> labels = DecodeLabels(r.Text());
    if (!labels.ok()) return BadRow("hosts", h.name, labels.status().message());
    h.labels = *std::move(labels);
    out.hosts.push_back(std::move(h));
  }
  return absl::OkStatus();
}

absl::Status LoadTokens(PgConn& c, const std::string& since, records::StoreContents& out) {
  ASSIGN_OR_RETURN(PgRows rows,
                   c.Query("SELECT id, name, user_name, group_name, role, scope, salt, hash, "
                           "created_by, created_us, expires_us, revoked_us FROM tokens "
                           "WHERE rev > $1 ORDER BY id",
                           {since}, "loading tokens"));
  for (int i = 0; i < rows.size(); ++i) {
    RowReader r(rows, i, "tokens");
    records::TokenRecord t;
    t.id = r.Text();
    t.name = r.Text();
    t.user = r.Text();
    t.group = r.Text();
    t.role = r.Text();
    t.scope = r.Text();
    t.salt = r.Text();
    t.hash = r.Text();
    t.created_by = r.Text();
    ASSIGN_OR_RETURN(t.created_at, r.Time());
    ASSIGN_OR_RETURN(t.expires_at, r.Time(absl::InfiniteFuture()));
    ASSIGN_OR_RETURN(t.revoked_at, r.Time(absl::InfiniteFuture()));
    out.tokens.push_back(std::move(t));
  }
  return absl::OkStatus();
}

// Secrets by path in byte order, as every backend sorts them, whatever the database's collation.
absl::Status LoadSecrets(PgConn& c, const std::string& since, records::StoreContents& out) {
  ASSIGN_OR_RETURN(PgRows rows,
                   c.Query("SELECT path, key_id, sealed, created_by, created_us, updated_us "
                           "FROM secrets WHERE rev > $1 ORDER BY path COLLATE \"C\"",
                           {since}, "loading secrets"));
  for (int i = 0; i < rows.size(); ++i) {
    RowReader r(rows, i, "secrets");
    records::SecretRecord s;
    s.path = r.Text();
    s.key_id = r.Text();
    s.sealed = r.Text();
    s.created_by = r.Text();
    ASSIGN_OR_RETURN(s.created_at, r.Time());
    ASSIGN_OR_RETURN(s.updated_at, r.Time());
    out.secrets.push_back(std::move(s));
  }
  return absl::OkStatus();
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
                           "(SELECT max(rev) FROM jobs), (SELECT max(rev) FROM tasks), "
                           "(SELECT max(rev) FROM hosts), (SELECT max(rev) FROM tokens), "
                           "(SELECT max(rev) FROM secrets), (SELECT max(rev) FROM deletions)), "
                           "$1)",
                           {absl::StrCat(kNoRevision)}, "reading the newest revision"));
  return rows.Int(0, 0, "the newest revision");
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
    RETURN_IF_ERROR(LoadPools(*c, after, changed));
    std::vector<std::string> spec_texts;
    RETURN_IF_ERROR(LoadJobs(*c, RowFilter{after}, changed, spec_texts));
    {
      SpecParsing parsing(std::move(spec_texts), &changed.jobs);  // while the tasks are read
      absl::Status tasks = LoadTasks(*c, RowFilter{after}, changed);
      RETURN_IF_ERROR(parsing.Wait());
      RETURN_IF_ERROR(tasks);
    }
    RETURN_IF_ERROR(LoadHosts(*c, after, changed));
    RETURN_IF_ERROR(LoadTokens(*c, after, changed));
    RETURN_IF_ERROR(LoadSecrets(*c, after, changed));
    if (since != kNoRevision) RETURN_IF_ERROR(LoadDeletions(*c, after, out));
    ASSIGN_OR_RETURN(std::string next, GetMeta("next_job_id"));
    if (!absl::SimpleAtoi(next, &changed.next_job_id)) {
      return absl::DataLossError(absl::StrCat("next_job_id '", next, "' is not a number"));
    }
    ASSIGN_OR_RETURN(changed.cluster_id, GetMeta("cluster_id"));
    return c->Exec("COMMIT", "loading");
  }();
  if (!s.ok() && c->healthy()) (void)c->Exec("ROLLBACK", "loading");
  RETURN_IF_ERROR(s);
  return out;
}

absl::StatusOr<std::vector<records::TaskEvent>> PostgresStore::ListEvents(TaskId task,
                                                                          size_t limit) {
  ASSIGN_OR_RETURN(PgConn * c, Conn());
  std::optional<std::string> lim;
  if (limit > 0) lim = absl::StrCat(limit);
  ASSIGN_OR_RETURN(PgRows rows,
                   c->Query("SELECT run, at_us, state, host, reason, message FROM events "
                            "WHERE job = $1 AND instance = $2 ORDER BY seq DESC LIMIT $3",
                            {absl::StrCat(task.job.value()), absl::StrCat(task.instance), lim},
                            "reading events"));
  std::vector<records::TaskEvent> out;
  for (int i = rows.size() - 1; i >= 0; --i) {
    RowReader r(rows, i, "events");
    ASSIGN_OR_RETURN(records::TaskEvent e, ReadEvent(r, task));
    out.push_back(std::move(e));
  }
  return out;
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
    ASSIGN_OR_RETURN(PgRows rows,
                     c->Query("SELECT instance, run, at_us, state, host, reason, message "
                              "FROM events WHERE job = $1 ORDER BY instance, seq",
                              {absl::StrCat(job.value())}, "reading a job's events"));
    for (int i = 0; i < rows.size(); ++i) {
      RowReader r(rows, i, "events");
      ASSIGN_OR_RETURN(int64_t instance, r.Int());
      ASSIGN_OR_RETURN(records::TaskEvent e,
                       ReadEvent(r, TaskId{job, static_cast<uint32_t>(instance)}));
      h.events.push_back(std::move(e));
    }
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
                            "IN ('audit', 'events', 'hosts', 'jobs', 'pools', 'secrets', "
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
  // Pages by (job, instance, seq), so that a big history is never in memory at once.
  constexpr int kPage = 10'000;
  std::string job = "-1", instance = "0", seq = "0";
  while (true) {
    ASSIGN_OR_RETURN(
        PgRows rows,
        c->Query(absl::StrCat("SELECT job, instance, seq, run, at_us, state, host, reason, "
                              "message FROM events WHERE (job, instance, seq) > ($1, $2, $3) "
                              "ORDER BY job, instance, seq LIMIT ",
                              kPage),
                 {job, instance, seq}, "reading events"));
    for (int i = 0; i < rows.size(); ++i) {
      RowReader r(rows, i, "events");
      ASSIGN_OR_RETURN(int64_t j, r.Int());
      ASSIGN_OR_RETURN(int64_t n, r.Int());
      (void)r.Int();  // seq
      ASSIGN_OR_RETURN(records::TaskEvent e, ReadEvent(r, TaskId{JobId(static_cast<uint64_t>(j)),
                                                                 static_cast<uint32_t>(n)}));
      RETURN_IF_ERROR(fn(e));
    }
    if (rows.size() < kPage) return absl::OkStatus();
    int last = rows.size() - 1;
    job = std::string(rows.Text(last, 0));
    instance = std::string(rows.Text(last, 1));
    seq = std::string(rows.Text(last, 2));
  }
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
  out.reserve(static_cast<size_t>(rows.size()));
  for (int i = 0; i < rows.size(); ++i) {
    RowReader r(rows, i, "audit");
    records::AuditRecord a;
    ASSIGN_OR_RETURN(a.seq, r.Int());
    ASSIGN_OR_RETURN(a.at, r.Time());
    a.user = r.Text();
    a.source = r.Text();
    a.action = r.Text();
    a.pool = r.Text();
    a.target = r.Text();
    a.outcome = r.Text();
    a.message = r.Text();
    a.request_id = r.Text();
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace paceline::store
