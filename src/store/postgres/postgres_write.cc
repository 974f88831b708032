// The statements of PostgresStore's commits (postgres_write.h).

#include "store/postgres/postgres_write.h"

#include <iterator>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "spec/yaml_spec.h"
#include "store/row_codec.h"

namespace paceline::store::pg {
namespace {

struct Sql {
  const char* name;
  const char* text;
};
constexpr Sql kFence{"fence", "SELECT paceline_fence($1)"};
// Every commit's revision (schema.h, version 2): the rows it writes carry currval.
constexpr Sql kNextRev{"next_rev", "SELECT nextval('changes_rev')"};
constexpr Sql kPutPool{
    "put_pool",
    "INSERT INTO pools (path, spec, rev) VALUES ($1, $2, currval('changes_rev')) "
    "ON CONFLICT (path) DO UPDATE SET spec = EXCLUDED.spec, rev = EXCLUDED.rev"};
constexpr Sql kPutJob{
    "put_job",
    "INSERT INTO jobs (id, pool, spec, version, goal, created_us, old_specs, "
    "updates, instances, owner, owner_group, rev) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, "
    "$10, $11, currval('changes_rev')) "
    "ON CONFLICT (id) DO UPDATE SET pool = EXCLUDED.pool, spec = EXCLUDED.spec, "
    "version = EXCLUDED.version, goal = EXCLUDED.goal, "
    "created_us = EXCLUDED.created_us, old_specs = EXCLUDED.old_specs, "
    "updates = EXCLUDED.updates, instances = EXCLUDED.instances, owner = EXCLUDED.owner, "
    "owner_group = EXCLUDED.owner_group, rev = EXCLUDED.rev"};
constexpr Sql kDeleteTask{"delete_task",
                          "WITH t AS (DELETE FROM tasks WHERE job = $1 AND instance = $2) "
                          "INSERT INTO deletions (rev, kind, job, instance) "
                          "VALUES (currval('changes_rev'), 'task', $1, $2)"};
constexpr Sql kPutHost{"put_host",
                       "INSERT INTO hosts (name, maintenance, cpu_milli, memory_bytes, "
                       "disk_bytes, gpu_milli, labels, rev) VALUES ($1, $2, $3, $4, $5, $6, $7, "
                       "currval('changes_rev')) "
                       "ON CONFLICT (name) DO UPDATE SET maintenance = EXCLUDED.maintenance, "
                       "cpu_milli = EXCLUDED.cpu_milli, memory_bytes = EXCLUDED.memory_bytes, "
                       "disk_bytes = EXCLUDED.disk_bytes, gpu_milli = EXCLUDED.gpu_milli, "
                       "labels = EXCLUDED.labels, rev = EXCLUDED.rev"};
constexpr Sql kDeleteJob{"delete_job",
                         "WITH t AS (DELETE FROM tasks WHERE job = $1), "
                         "e AS (DELETE FROM events WHERE job = $1), "
                         "j AS (DELETE FROM jobs WHERE id = $1) "
                         "INSERT INTO deletions (rev, kind, job) "
                         "VALUES (currval('changes_rev'), 'job', $1)"};
constexpr Sql kDeletePool{"delete_pool",
                          "WITH p AS (DELETE FROM pools WHERE path = $1) "
                          "INSERT INTO deletions (rev, kind, path) "
                          "VALUES (currval('changes_rev'), 'pool', $1)"};
constexpr Sql kPutToken{
    "put_token",
    "INSERT INTO tokens (id, name, user_name, group_name, role, scope, salt, hash, created_by, "
    "created_us, expires_us, revoked_us, rev) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, "
    "$11, $12, currval('changes_rev')) "
    "ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, user_name = EXCLUDED.user_name, "
    "group_name = EXCLUDED.group_name, role = EXCLUDED.role, scope = EXCLUDED.scope, "
    "salt = EXCLUDED.salt, hash = EXCLUDED.hash, created_by = EXCLUDED.created_by, "
    "created_us = EXCLUDED.created_us, expires_us = EXCLUDED.expires_us, "
    "revoked_us = EXCLUDED.revoked_us, rev = EXCLUDED.rev"};
constexpr Sql kDeleteSecret{"delete_secret",
                            "WITH s AS (DELETE FROM secrets WHERE path = $1) "
                            "INSERT INTO deletions (rev, kind, path) "
                            "VALUES (currval('changes_rev'), 'secret', $1)"};
constexpr Sql kPutSecret{
    "put_secret",
    "INSERT INTO secrets (path, key_id, sealed, created_by, created_us, updated_us, rev) "
    "VALUES ($1, $2, $3, $4, $5, $6, currval('changes_rev')) "
    "ON CONFLICT (path) DO UPDATE SET key_id = EXCLUDED.key_id, sealed = EXCLUDED.sealed, "
    "created_by = EXCLUDED.created_by, created_us = EXCLUDED.created_us, "
    "updated_us = EXCLUDED.updated_us, rev = EXCLUDED.rev"};
constexpr Sql kAppendAudit{"append_audit",
                           "INSERT INTO audit (at_us, user_name, source, action, pool, target, "
                           "outcome, message, request_id) "
                           "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"};
constexpr Sql kPruneAudit{"prune_audit", "DELETE FROM audit WHERE at_us < $1"};
constexpr Sql kPutMeta{"put_meta", kPutMetaSql};
constexpr Sql kAll[] = {kFence,     kNextRev,     kPutPool,    kPutJob,   kDeleteTask,
                        kPutHost,   kDeleteJob,   kDeletePool, kPutToken, kDeleteSecret,
                        kPutSecret, kAppendAudit, kPruneAudit, kPutMeta};

std::optional<std::string> Num(int64_t v) { return absl::StrCat(v); }
// NULL stands for `null_means`: InfinitePast ("never" happened), or InfiniteFuture for a
// token's expiry and revocation ("never" will).
std::optional<std::string> Time(absl::Time t, absl::Time null_means = absl::InfinitePast()) {
  if (t == null_means) return std::nullopt;
  return absl::StrCat(absl::ToUnixMicros(t));
}

PgParams TaskParams(const records::TaskRecord& t) {
  return {Num(static_cast<int64_t>(t.id.job.value())),
          Num(t.id.instance),
          Num(t.run),
          Num(static_cast<int64_t>(t.state)),
          t.host,
          Time(t.started_at),
          Time(t.finished_at),
          Num(t.exit_code),
          Num(t.signal),
          t.reason,
          t.message,
          Num(t.failures),
          Time(t.not_before),
          Num(t.restart_requested ? 1 : 0),
          Num(static_cast<int64_t>(t.spec_version)),
          Num(static_cast<int64_t>(t.next_spec_version)),
          t.volume_host};
}

PgParams EventParams(const records::TaskEvent& e) {
  return {Num(static_cast<int64_t>(e.run.task.job.value())),
          Num(e.run.task.instance),
          Num(e.run.run),
          Num(absl::ToUnixMicros(e.at)),
          Num(static_cast<int64_t>(e.state)),
          e.host,
          e.reason,
          e.message};
}

// The rows of one statement of kMultiRow task upserts or event inserts.
constexpr int kMultiRow = 64;
constexpr int kTaskColumns = 17;
constexpr int kEventColumns = 8;

// `head` (an INSERT up to VALUES), with `rows` rows of `columns` parameters each (and the revision,
// when `rev`) in one VALUES list, followed by `tail`.
std::string MultiRowSql(absl::string_view head, int columns, int rows, bool rev,
                        absl::string_view tail) {
  std::string sql(head);
  for (int r = 0; r < rows; ++r) {
    absl::StrAppend(&sql, r == 0 ? "(" : ", (");
    for (int c = 0; c < columns; ++c) {
      absl::StrAppend(&sql, c == 0 ? "$" : ", $", r * columns + c + 1);
    }
    absl::StrAppend(&sql, rev ? ", currval('changes_rev'))" : ")");
  }
  absl::StrAppend(&sql, tail);
  return sql;
}

constexpr absl::string_view kTasksHead =
    "INSERT INTO tasks (job, instance, run, state, host, started_us, finished_us, exit_code, "
    "signal, reason, message, failures, not_before_us, restart_requested, spec_version, "
    "next_spec_version, volume_host, rev) VALUES ";
constexpr absl::string_view kTasksTail =
    " ON CONFLICT (job, instance) DO UPDATE SET run = EXCLUDED.run, "
    "state = EXCLUDED.state, host = EXCLUDED.host, started_us = EXCLUDED.started_us, "
    "finished_us = EXCLUDED.finished_us, exit_code = EXCLUDED.exit_code, "
    "signal = EXCLUDED.signal, reason = EXCLUDED.reason, message = EXCLUDED.message, "
    "failures = EXCLUDED.failures, not_before_us = EXCLUDED.not_before_us, "
    "restart_requested = EXCLUDED.restart_requested, spec_version = EXCLUDED.spec_version, "
    "next_spec_version = EXCLUDED.next_spec_version, volume_host = EXCLUDED.volume_host, "
    "rev = EXCLUDED.rev";
constexpr absl::string_view kEventsHead =
    "INSERT INTO events (job, instance, run, at_us, state, host, reason, message) VALUES ";

// The task upserts and event inserts of one row and of kMultiRow rows, prepared with kAll.
constexpr const char* kPutTask = "put_task";
constexpr const char* kPutTasks = "put_tasks_64";
constexpr const char* kPutEvent = "put_event";
constexpr const char* kPutEvents = "put_events_64";
struct GeneratedSql {
  const char* name;
  std::string text;
};
const std::vector<GeneratedSql>& RowStatements() {
  static const std::vector<GeneratedSql> all = {
      {kPutTask, MultiRowSql(kTasksHead, kTaskColumns, 1, true, kTasksTail)},
      {kPutTasks, MultiRowSql(kTasksHead, kTaskColumns, kMultiRow, true, kTasksTail)},
      {kPutEvent, MultiRowSql(kEventsHead, kEventColumns, 1, false, "")},
      {kPutEvents, MultiRowSql(kEventsHead, kEventColumns, kMultiRow, false, "")},
  };
  return all;
}

// The events held at the end of a commit go by COPY, after its commands.
constexpr const char* kCopyEvents =
    "COPY events (job, instance, run, at_us, state, host, reason, message) FROM STDIN";

// The commands of one commit. Task upserts and event inserts, the bulk of every commit, are
// held back and sent kMultiRow rows per statement: a task written several times keeps its
// place and takes its last value (no deletion in between: a deletion of tasks first sends
// what is held), and events keep their order. The events held at the end go by one COPY,
// which comes after every command: nothing deletes after them.
class CommitCommands {
 public:
  explicit CommitCommands(PgWrite& out) : out_(out.commands), copies_(out.copies) {}
  ~CommitCommands() {
    Send(tasks_, kPutTasks, kPutTask);
    if (events_.empty()) return;
    PgCopy copy{kCopyEvents, {}};
    for (const PgParams& row : events_) {
      for (size_t i = 0; i < row.size(); ++i) AppendCopyField(copy.rows, row[i], i == 0);
      copy.rows.push_back('\n');
    }
    copies_.push_back(std::move(copy));
  }

  void PutTask(const records::TaskRecord& t) {
    auto [it, added] = task_index_.try_emplace(t.id, tasks_.size());
    if (added) {
      tasks_.push_back(TaskParams(t));
    } else {
      tasks_[it->second] = TaskParams(t);
    }
  }
  void PutEvent(const records::TaskEvent& e) { events_.push_back(EventParams(e)); }
  // Any other command; one that deletes tasks or events first sends what is held.
  void Add(PgCommand c, bool deletes_tasks) {
    if (deletes_tasks) Flush();
    out_.push_back(std::move(c));
  }
  void Flush() {
    Send(tasks_, kPutTasks, kPutTask);
    Send(events_, kPutEvents, kPutEvent);
    task_index_.clear();
  }

 private:
  void Send(std::vector<PgParams>& rows, const char* multi, const char* single) {
    size_t i = 0;
    for (; i + kMultiRow <= rows.size(); i += kMultiRow) {
      PgCommand c{multi, {}};
      c.params.reserve(rows[i].size() * kMultiRow);
      for (size_t r = i; r < i + kMultiRow; ++r) {
        std::move(rows[r].begin(), rows[r].end(), std::back_inserter(c.params));
      }
      out_.push_back(std::move(c));
    }
    for (; i < rows.size(); ++i) out_.push_back({single, std::move(rows[i])});
    rows.clear();
  }

  std::vector<PgCommand>& out_;
  std::vector<PgCopy>& copies_;
  std::vector<PgParams> tasks_;
  absl::flat_hash_map<TaskId, size_t> task_index_;
  std::vector<PgParams> events_;
};

void AddBatch(const records::WriteBatch& b, CommitCommands& out) {
  for (const records::PoolRecord& p : b.put_pools) {
    out.Add({kPutPool.name, {p.path, PrintPoolSpec(p.spec)}}, false);
  }
  for (const records::JobRecord& j : b.put_jobs) {
    out.Add({kPutJob.name,
             {Num(static_cast<int64_t>(j.id.value())), j.pool, PrintJobSpec(j.spec),
              Num(static_cast<int64_t>(j.version)), Num(static_cast<int64_t>(j.goal)),
              Time(j.created_at), EncodeOldSpecs(j.old_specs), EncodeUpdates(j.updates),
              Num(j.instances), j.owner, j.owner_group}},
            false);
  }
  for (const records::TaskRecord& t : b.put_tasks) out.PutTask(t);
  for (const records::TaskEvent& e : b.events) out.PutEvent(e);
  for (const TaskId& t : b.delete_tasks) {
    out.Add({kDeleteTask.name, {Num(static_cast<int64_t>(t.job.value())), Num(t.instance)}}, true);
  }
  for (const records::HostRecord& h : b.put_hosts) {
    out.Add({kPutHost.name,
             {h.name, Num(static_cast<int64_t>(h.maintenance)), Num(h.capacity.cpu_milli()),
              Num(h.capacity.memory_bytes()), Num(h.capacity.disk_bytes()),
              Num(h.capacity.gpu_milli()), EncodeLabels(h.labels)}},
            false);
  }
  for (JobId id : b.delete_jobs)
    out.Add({kDeleteJob.name, {Num(static_cast<int64_t>(id.value()))}}, true);
  for (const std::string& path : b.delete_pools) out.Add({kDeletePool.name, {path}}, false);
  for (const records::TokenRecord& t : b.put_tokens) {
    out.Add({kPutToken.name,
             {t.id, t.name, t.user, t.group, t.role, t.scope, t.salt, t.hash, t.created_by,
              Time(t.created_at), Time(t.expires_at, absl::InfiniteFuture()),
              Time(t.revoked_at, absl::InfiniteFuture())}},
            false);
  }
  for (const std::string& path : b.delete_secrets) out.Add({kDeleteSecret.name, {path}}, false);
  for (const records::SecretRecord& r : b.put_secrets) {
    out.Add({kPutSecret.name,
             {r.path, r.key_id, r.sealed, r.created_by, Time(r.created_at), Time(r.updated_at)}},
            false);
  }
  for (const records::AuditRecord& a : b.audit) {
    out.Add({kAppendAudit.name,
             {Num(absl::ToUnixMicros(a.at)), a.user, a.source, a.action, a.pool, a.target,
              a.outcome, a.message, a.request_id}},
            false);
  }
  if (b.prune_audit_before) {
    out.Add({kPruneAudit.name, {Num(absl::ToUnixMicros(*b.prune_audit_before))}}, false);
  }
  if (b.cluster_id) out.Add({kPutMeta.name, {std::string("cluster_id"), *b.cluster_id}}, false);
  if (b.next_job_id) {
    out.Add(
        {kPutMeta.name, {std::string("next_job_id"), Num(static_cast<int64_t>(*b.next_job_id))}},
        false);
  }
}

}  // namespace

absl::Status PrepareWrites(PgConn& c) {
  for (const Sql& sql : kAll) RETURN_IF_ERROR(c.Prepare(sql.name, sql.text));
  for (const GeneratedSql& sql : RowStatements()) RETURN_IF_ERROR(c.Prepare(sql.name, sql.text));
  return absl::OkStatus();
}

PgWrite WriteCommands(const std::vector<const records::WriteBatch*>& batches,
                      std::optional<uint64_t> fence_term) {
  PgWrite write;
  if (fence_term) {
    write.commands.push_back({kFence.name, {Num(static_cast<int64_t>(*fence_term))}});
  }
  write.commands.push_back({kNextRev.name, {}});
  {
    CommitCommands out(write);
    for (const records::WriteBatch* b : batches) AddBatch(*b, out);
  }
  return write;
}

}  // namespace paceline::store::pg
