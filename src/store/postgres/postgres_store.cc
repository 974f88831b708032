#include "store/postgres/postgres_store.h"

#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status.h"
#include "spec/yaml_spec.h"
#include "store/postgres/schema.h"
#include "store/row_codec.h"

namespace paceline::store {
namespace {

// Any fixed number: the advisory lock that serialises migrations of masters starting together.
constexpr int64_t kMigrationLock = 0x7061'6365'6c69'6e65;  // "paceline"

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
    "updates, instances, rev) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, "
    "currval('changes_rev')) "
    "ON CONFLICT (id) DO UPDATE SET pool = EXCLUDED.pool, spec = EXCLUDED.spec, "
    "version = EXCLUDED.version, goal = EXCLUDED.goal, "
    "created_us = EXCLUDED.created_us, old_specs = EXCLUDED.old_specs, "
    "updates = EXCLUDED.updates, instances = EXCLUDED.instances, rev = EXCLUDED.rev"};
constexpr Sql kPutTask{
    "put_task",
    "INSERT INTO tasks (job, instance, run, state, host, started_us, finished_us, exit_code, "
    "signal, reason, message, failures, not_before_us, restart_requested, spec_version, "
    "next_spec_version, volume_host, rev) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, "
    "$12, $13, $14, $15, $16, $17, currval('changes_rev')) ON CONFLICT (job, instance) DO UPDATE "
    "SET run = EXCLUDED.run, "
    "state = EXCLUDED.state, host = EXCLUDED.host, started_us = EXCLUDED.started_us, "
    "finished_us = EXCLUDED.finished_us, exit_code = EXCLUDED.exit_code, "
    "signal = EXCLUDED.signal, reason = EXCLUDED.reason, message = EXCLUDED.message, "
    "failures = EXCLUDED.failures, not_before_us = EXCLUDED.not_before_us, "
    "restart_requested = EXCLUDED.restart_requested, spec_version = EXCLUDED.spec_version, "
    "next_spec_version = EXCLUDED.next_spec_version, volume_host = EXCLUDED.volume_host, "
    "rev = EXCLUDED.rev"};
constexpr Sql kDeleteTask{"delete_task",
                          "WITH t AS (DELETE FROM tasks WHERE job = $1 AND instance = $2) "
                          "INSERT INTO deletions (rev, kind, job, instance) "
                          "VALUES (currval('changes_rev'), 'task', $1, $2)"};
constexpr Sql kPutEvent{"put_event",
                        "INSERT INTO events (job, instance, run, at_us, state, host, reason, "
                        "message) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"};
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
constexpr Sql kPutMeta{"put_meta",
                       "INSERT INTO meta (key, value) VALUES ($1, $2) "
                       "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"};
constexpr Sql kAll[] = {kFence,    kNextRev, kPutPool,   kPutJob,     kPutTask, kDeleteTask,
                        kPutEvent, kPutHost, kDeleteJob, kDeletePool, kPutMeta};

std::optional<std::string> Num(int64_t v) { return absl::StrCat(v); }
std::optional<std::string> Time(absl::Time t) {
  if (t == absl::InfinitePast()) return std::nullopt;
  return absl::StrCat(absl::ToUnixMicros(t));
}

void AddBatch(const records::WriteBatch& b, std::vector<PgCommand>& out) {
  for (const records::PoolRecord& p : b.put_pools) {
    out.push_back({kPutPool.name, {p.path, PrintPoolSpec(p.spec)}});
  }
  for (const records::JobRecord& j : b.put_jobs) {
    out.push_back({kPutJob.name,
                   {Num(static_cast<int64_t>(j.id.value())), j.pool, PrintJobSpec(j.spec),
                    Num(static_cast<int64_t>(j.version)), Num(static_cast<int64_t>(j.goal)),
                    Time(j.created_at), EncodeOldSpecs(j.old_specs), EncodeUpdates(j.updates),
                    Num(j.instances)}});
  }
  for (const records::TaskRecord& t : b.put_tasks) {
    out.push_back(
        {kPutTask.name,
         {Num(static_cast<int64_t>(t.id.job.value())), Num(t.id.instance), Num(t.run),
          Num(static_cast<int64_t>(t.state)), t.host, Time(t.started_at), Time(t.finished_at),
          Num(t.exit_code), Num(t.signal), t.reason, t.message, Num(t.failures), Time(t.not_before),
          Num(t.restart_requested ? 1 : 0), Num(static_cast<int64_t>(t.spec_version)),
          Num(static_cast<int64_t>(t.next_spec_version)), t.volume_host}});
  }
  for (const records::TaskEvent& e : b.events) {
    out.push_back({kPutEvent.name,
                   {Num(static_cast<int64_t>(e.run.task.job.value())), Num(e.run.task.instance),
                    Num(e.run.run), Num(absl::ToUnixMicros(e.at)),
                    Num(static_cast<int64_t>(e.state)), e.host, e.reason, e.message}});
  }
  for (const TaskId& t : b.delete_tasks) {
    out.push_back({kDeleteTask.name, {Num(static_cast<int64_t>(t.job.value())), Num(t.instance)}});
  }
  for (const records::HostRecord& h : b.put_hosts) {
    out.push_back({kPutHost.name,
                   {h.name, Num(static_cast<int64_t>(h.maintenance)), Num(h.capacity.cpu_milli()),
                    Num(h.capacity.memory_bytes()), Num(h.capacity.disk_bytes()),
                    Num(h.capacity.gpu_milli()), EncodeLabels(h.labels)}});
  }
  for (JobId id : b.delete_jobs) {
    out.push_back({kDeleteJob.name, {Num(static_cast<int64_t>(id.value()))}});
  }
  for (const std::string& path : b.delete_pools) out.push_back({kDeletePool.name, {path}});
  if (b.cluster_id) out.push_back({kPutMeta.name, {std::string("cluster_id"), *b.cluster_id}});
  if (b.next_job_id) {
    out.push_back(
        {kPutMeta.name, {std::string("next_job_id"), Num(static_cast<int64_t>(*b.next_job_id))}});
  }
}

std::string RandomHexId() {
  std::random_device rd;
  return absl::StrFormat("%08x%08x", rd(), rd());
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresStore>> PostgresStore::Open(const std::string& url,
                                                                   const PostgresOptions& options) {
  std::unique_ptr<PostgresStore> store(new PostgresStore(url, options));
  RETURN_IF_ERROR(store->Conn().status());
  RETURN_IF_ERROR(WithContext(store->Migrate(), absl::StrCat("store ", store->Describe())));
  return store;
}

std::string PostgresStore::Describe() const { return RedactPassword(url_); }

absl::StatusOr<PgConn*> PostgresStore::Conn() {
  if (conn_ != nullptr && conn_->healthy()) return conn_.get();
  conn_.reset();
  ASSIGN_OR_RETURN(std::unique_ptr<PgConn> c, PgConn::Connect(url_, options_.connect_timeout));
  // A transaction left open by a paused or partitioned master must not hold the lease row (or
  // any other) for long: PostgreSQL ends such a session after this.
  RETURN_IF_ERROR(
      c->Exec("SET client_min_messages = warning; "
              "SET idle_in_transaction_session_timeout = '5s'",
              "configuring the session"));
  conn_ = std::move(c);
  return conn_.get();
}

absl::StatusOr<std::string> PostgresStore::GetMeta(const std::string& key) {
  ASSIGN_OR_RETURN(PgConn * c, Conn());
  ASSIGN_OR_RETURN(PgRows rows, c->Query("SELECT value FROM meta WHERE key = $1", {key},
                                         absl::StrCat("reading ", key)));
  return rows.size() == 0 ? std::string() : std::string(rows.Text(0, 0));
}

absl::Status PostgresStore::Migrate() {
  ASSIGN_OR_RETURN(PgConn * c, Conn());
  RETURN_IF_ERROR(c->Exec("BEGIN", "migrating the schema"));
  absl::Status s = [&]() -> absl::Status {
    RETURN_IF_ERROR(c->Query("SELECT pg_advisory_xact_lock($1)", {Num(kMigrationLock)},
                             "waiting for other masters' migrations")
                        .status());
    ASSIGN_OR_RETURN(PgRows exists, c->Query("SELECT to_regclass('meta') IS NOT NULL", {},
                                             "looking for the schema"));
    int version = 0;
    if (exists.Text(0, 0) == "t") {
      ASSIGN_OR_RETURN(std::string text, GetMeta("schema_version"));
      if (!text.empty() && !absl::SimpleAtoi(text, &version)) {
        return absl::DataLossError(absl::StrCat("schema_version '", text, "' is not a number"));
      }
    }
    if (version > pg::kSchemaVersion) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the database has schema version ", version, " but this paceline knows up to ",
          pg::kSchemaVersion, "; run a newer paceline"));
    }
    auto put = [&](const std::string& key, const std::string& value) {
      return c->Query(kPutMeta.text, {key, value}, absl::StrCat("writing ", key)).status();
    };
    if (version < 1) {
      RETURN_IF_ERROR(c->Exec(pg::kSchemaV1, "creating the schema (version 1)"));
      RETURN_IF_ERROR(put("cluster_id", RandomHexId()));
      RETURN_IF_ERROR(put("next_job_id", "1"));
    }
    for (const pg::Migration& m : pg::kMigrations) {
      if (version >= m.version) continue;
      RETURN_IF_ERROR(c->Exec(m.sql, absl::StrCat("migrating to schema version ", m.version)));
    }
    RETURN_IF_ERROR(put("schema_version", absl::StrCat(pg::kSchemaVersion)));
    ASSIGN_OR_RETURN(std::string opens, GetMeta("open_count"));
    int64_t n = 0;
    if (!opens.empty() && !absl::SimpleAtoi(opens, &n)) {
      return absl::DataLossError(absl::StrCat("open_count '", opens, "' is not a number"));
    }
    open_count_ = n + 1;
    RETURN_IF_ERROR(put("open_count", absl::StrCat(open_count_)));
    ASSIGN_OR_RETURN(cluster_id_, GetMeta("cluster_id"));
    return c->Exec("COMMIT", "committing the schema");
  }();
  if (!s.ok() && c->healthy()) (void)c->Exec("ROLLBACK", "rolling back the migration");
  return s;
}

absl::Status PostgresStore::CommitAll(const std::vector<const records::WriteBatch*>& batches) {
  ASSIGN_OR_RETURN(PgConn * c, Conn());
  for (const Sql& sql : kAll) RETURN_IF_ERROR(c->Prepare(sql.name, sql.text));
  std::vector<PgCommand> commands;
  if (fence_term_) commands.push_back({kFence.name, {Num(static_cast<int64_t>(*fence_term_))}});
  commands.push_back({kNextRev.name, {}});
  for (const records::WriteBatch* b : batches) AddBatch(*b, commands);
  RETURN_IF_ERROR(c->Transaction(commands, "committing to the store"));
  for (const records::WriteBatch* b : batches) {
    if (b->cluster_id) cluster_id_ = *b->cluster_id;
  }
  return absl::OkStatus();
}

}  // namespace paceline::store
