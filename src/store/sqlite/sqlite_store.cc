#include "store/sqlite/sqlite_store.h"

#include <filesystem>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status.h"
#include "spec/yaml_spec.h"
#include "store/row_codec.h"
#include "store/spec_parsing.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/task_rows.h"
#include "store/task_row.h"

namespace paceline::store {
namespace {

std::string RandomHexId() {
  std::random_device rd;
  return absl::StrFormat("%08x%08x", rd(), rd());
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& data_dir) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot create data directory ", data_dir, ": ", ec.message()));
  }
  std::string path = (std::filesystem::path(data_dir) / kFileName).string();
  ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(path));
  std::unique_ptr<SqliteStore> store(new SqliteStore(std::move(db)));
  RETURN_IF_ERROR(WithContext(store->Migrate(), absl::StrCat("store ", path)));
  return store;
}

std::string SqliteStore::Describe() const { return absl::StrCat("sqlite:", db_->path()); }

absl::Status SqliteStore::Migrate() {
  RETURN_IF_ERROR(
      db_->Exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"));
  ASSIGN_OR_RETURN(std::string version_text, GetMeta("schema_version"));
  int version = 0;
  if (!version_text.empty() && !absl::SimpleAtoi(version_text, &version)) {
    return absl::DataLossError(absl::StrCat("schema_version '", version_text, "' is not a number"));
  }
  if (version > kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat("the store has schema version ", version,
                                                      " but this paceline knows up to ",
                                                      kSchemaVersion, "; run a newer paceline"));
  }
  RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE"));
  absl::Status s = [&]() -> absl::Status {
    if (version < 1) {
      RETURN_IF_ERROR(db_->Exec(kSchemaV1));
      RETURN_IF_ERROR(PutMeta("cluster_id", RandomHexId()));
      RETURN_IF_ERROR(PutMeta("next_job_id", "1"));
      RETURN_IF_ERROR(PutMeta("schema_version", "1"));
    }
    if (version < 2) {
      RETURN_IF_ERROR(db_->Exec(kSchemaV2));
      RETURN_IF_ERROR(PutMeta("schema_version", "2"));
    }
    if (version < 3) {
      RETURN_IF_ERROR(db_->Exec(kSchemaV3));
      RETURN_IF_ERROR(PutMeta("schema_version", "3"));
    }
    if (version < 4) {
      RETURN_IF_ERROR(db_->Exec(kSchemaV4));
      RETURN_IF_ERROR(PutMeta("schema_version", "4"));
    }
    if (version < 5) {
      RETURN_IF_ERROR(db_->Exec(kSchemaV5));
      RETURN_IF_ERROR(PutMeta("schema_version", "5"));
    }
    if (version < 6) {
      RETURN_IF_ERROR(MigrateEventsToBlocks());
      RETURN_IF_ERROR(PutMeta("schema_version", "6"));
    }
    if (version < 7) {
      RETURN_IF_ERROR(MigrateTaskColumnsToRows(*db_));
      RETURN_IF_ERROR(PutMeta("schema_version", "7"));
    }
    ASSIGN_OR_RETURN(std::string opens, GetMeta("open_count"));
    int64_t n = 0;
    if (!opens.empty() && !absl::SimpleAtoi(opens, &n)) {
      return absl::DataLossError(absl::StrCat("open_count '", opens, "' is not a number"));
    }
    open_count_ = n + 1;
    return PutMeta("open_count", absl::StrCat(open_count_));
  }();
  if (!s.ok()) {
    (void)db_->Exec("ROLLBACK");
    return s;
  }
  RETURN_IF_ERROR(db_->Exec("COMMIT"));
  ASSIGN_OR_RETURN(cluster_id_, GetMeta("cluster_id"));
  return absl::OkStatus();
}

absl::StatusOr<std::string> SqliteStore::GetMeta(absl::string_view key) {
  ASSIGN_OR_RETURN(Statement * stmt, Cached("SELECT value FROM meta WHERE key = ?"));
  stmt->Reset();
  stmt->Bind(1, key);
  ASSIGN_OR_RETURN(bool row, stmt->Step());
  std::string value = row ? stmt->ColumnText(0) : std::string();
  stmt->Reset();
  return value;
}

absl::Status SqliteStore::PutMeta(absl::string_view key, absl::string_view value) {
  ASSIGN_OR_RETURN(Statement * stmt,
                   Cached("INSERT INTO meta (key, value) VALUES (?, ?) "
                          "ON CONFLICT(key) DO UPDATE SET value = excluded.value"));
  stmt->Reset();
  stmt->Bind(1, key).Bind(2, value);
  return stmt->Run();
}

absl::StatusOr<Statement*> SqliteStore::Cached(absl::string_view sql) {
  auto it = statements_.find(sql);
  if (it != statements_.end()) return it->second.get();
  ASSIGN_OR_RETURN(Statement stmt, db_->Prepare(sql));
  auto owned = std::make_unique<Statement>(std::move(stmt));
  Statement* raw = owned.get();
  statements_.emplace(std::string(sql), std::move(owned));
  return raw;
}

absl::Status SqliteStore::CountWrite() {
  if (fail_after_writes_ < 0) return absl::OkStatus();
  if (fail_after_writes_ == 0) {
    fail_after_writes_ = -1;
    return absl::UnavailableError("injected store failure");
  }
  --fail_after_writes_;
  return absl::OkStatus();
}

absl::Status SqliteStore::CommitAll(const std::vector<const records::WriteBatch*>& batches) {
  RETURN_IF_ERROR(db_->Exec("BEGIN IMMEDIATE"));
  absl::Status s;
  for (const records::WriteBatch* b : batches) {
    s = Apply(*b);
    if (!s.ok()) break;
  }
  if (s.ok()) s = FlushEvents();
  if (s.ok()) s = db_->Exec("COMMIT");
  if (!s.ok()) {
    pending_events_.clear();
    (void)db_->Exec("ROLLBACK");
    return s;
  }
  for (const records::WriteBatch* b : batches) {
    if (b->cluster_id) cluster_id_ = *b->cluster_id;
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::Apply(const records::WriteBatch& b) {
  for (const records::PoolRecord& p : b.put_pools) {
    RETURN_IF_ERROR(CountWrite());
    ASSIGN_OR_RETURN(Statement * st, Cached("INSERT OR REPLACE INTO pools (path, spec) "
                                            "VALUES (?, ?)"));
    st->Reset();
    st->Bind(1, p.path).Bind(2, PrintPoolSpec(p.spec));
    RETURN_IF_ERROR(st->Run());
  }
  for (const records::JobRecord& j : b.put_jobs) {
    RETURN_IF_ERROR(CountWrite());
    ASSIGN_OR_RETURN(Statement * st,
                     Cached("INSERT OR REPLACE INTO jobs (id, pool, spec, version, goal, "
                            "created_us, old_specs, updates, instances, owner, owner_group) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    st->Reset();
    st->Bind(1, static_cast<int64_t>(j.id.value()))
        .Bind(2, j.pool)
        .Bind(3, PrintJobSpec(j.spec))
        .Bind(4, static_cast<int64_t>(j.version))
        .Bind(5, static_cast<int64_t>(j.goal));
    st->BindTime(6, j.created_at);
    st->Bind(7, EncodeOldSpecs(j.old_specs))
        .Bind(8, EncodeUpdates(j.updates))
        .Bind(9, static_cast<int64_t>(j.instances))
        .Bind(10, j.owner)
        .Bind(11, j.owner_group);
    RETURN_IF_ERROR(st->Run());
  }
  for (const records::TaskRecord& t : b.put_tasks) {
    RETURN_IF_ERROR(CountWrite());
    ASSIGN_OR_RETURN(Statement * st,
                     Cached("INSERT OR REPLACE INTO tasks (job, instance, data) VALUES (?, ?, ?)"));
    st->Reset();
    st->Bind(1, static_cast<int64_t>(t.id.job.value()))
        .Bind(2, static_cast<int64_t>(t.id.instance))
        .BindBlob(3, EncodeTaskRow(t));
    RETURN_IF_ERROR(st->Run());
  }
  for (const TaskId& t : b.delete_tasks) {
    RETURN_IF_ERROR(CountWrite());
    ASSIGN_OR_RETURN(Statement * st, Cached("DELETE FROM tasks WHERE job = ? AND instance = ?"));
    st->Reset();
    st->Bind(1, static_cast<int64_t>(t.job.value())).Bind(2, static_cast<int64_t>(t.instance));
    RETURN_IF_ERROR(st->Run());
  }
  RETURN_IF_ERROR(QueueEvents(b));
  for (const records::HostRecord& h : b.put_hosts) {
    RETURN_IF_ERROR(CountWrite());
    ASSIGN_OR_RETURN(Statement * st,
                     Cached("INSERT OR REPLACE INTO hosts (name, maintenance, cpu_milli, "
                            "memory_bytes, disk_bytes, gpu_milli, labels) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?)"));
    st->Reset();
    st->Bind(1, h.name)
        .Bind(2, static_cast<int64_t>(h.maintenance))
        .Bind(3, h.capacity.cpu_milli())
        .Bind(4, h.capacity.memory_bytes())
        .Bind(5, h.capacity.disk_bytes())
        .Bind(6, h.capacity.gpu_milli())
        .Bind(7, EncodeLabels(h.labels));
    RETURN_IF_ERROR(st->Run());
  }
  if (!b.delete_jobs.empty()) RETURN_IF_ERROR(FlushEvents());
  for (JobId id : b.delete_jobs) {
    RETURN_IF_ERROR(CountWrite());
    for (const char* sql : {"DELETE FROM jobs WHERE id = ?", "DELETE FROM tasks WHERE job = ?",
                            "DELETE FROM event_blocks WHERE job = ?"}) {
      ASSIGN_OR_RETURN(Statement * st, Cached(sql));
      st->Reset();
      st->Bind(1, static_cast<int64_t>(id.value()));
      RETURN_IF_ERROR(st->Run());
    }
  }
  for (const std::string& path : b.delete_pools) {
    RETURN_IF_ERROR(CountWrite());
    ASSIGN_OR_RETURN(Statement * st, Cached("DELETE FROM pools WHERE path = ?"));
    st->Reset();
    st->Bind(1, path);
    RETURN_IF_ERROR(st->Run());
  }
  RETURN_IF_ERROR(ApplyAccess(b));
  if (b.next_job_id) {
    RETURN_IF_ERROR(CountWrite());
    RETURN_IF_ERROR(PutMeta("next_job_id", absl::StrCat(*b.next_job_id)));
  }
  if (b.cluster_id) RETURN_IF_ERROR(PutMeta("cluster_id", *b.cluster_id));
  return absl::OkStatus();
}

absl::Status SqliteStore::LoadJobs(std::optional<JobId> only, std::vector<records::JobRecord>& out,
                                   std::vector<std::string>& spec_texts) {
  ASSIGN_OR_RETURN(Statement st,
                   db_->Prepare(absl::StrCat("SELECT id, pool, spec, version, goal, created_us, "
                                             "old_specs, updates, instances, owner, "
                                             "owner_group FROM jobs",
                                             only ? " WHERE id = ?" : "", " ORDER BY id")));
  if (only) st.Bind(1, static_cast<int64_t>(only->value()));
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    records::JobRecord j;
    j.id = JobId(static_cast<uint64_t>(st.ColumnInt(0)));
    j.pool = st.ColumnText(1);
    spec_texts.push_back(st.ColumnText(2));
    j.version = static_cast<uint64_t>(st.ColumnInt(3));
    j.goal = static_cast<records::JobGoal>(st.ColumnInt(4));
    j.created_at = st.ColumnTime(5);
    absl::StatusOr<std::map<uint64_t, JobSpec>> old = DecodeOldSpecs(st.ColumnText(6));
    if (!old.ok()) return BadRow("jobs", j.id.ToString(), old.status().message());
    j.old_specs = *std::move(old);
    absl::StatusOr<std::vector<records::UpdateRecord>> updates = DecodeUpdates(st.ColumnText(7));
    if (!updates.ok()) return BadRow("jobs", j.id.ToString(), updates.status().message());
    j.updates = *std::move(updates);
    j.instances = static_cast<uint32_t>(st.ColumnInt(8));
    j.owner = st.ColumnText(9);
    j.owner_group = st.ColumnText(10);
    out.push_back(std::move(j));
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::LoadPools(records::StoreContents& c) {
  ASSIGN_OR_RETURN(Statement st, db_->Prepare("SELECT path, spec FROM pools ORDER BY path"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    records::PoolRecord p;
    p.path = st.ColumnText(0);
    absl::StatusOr<PoolSpec> spec = ParsePoolSpec(st.ColumnText(1), "stored pool spec");
    if (!spec.ok()) return BadRow("pools", p.path, spec.status().message());
    p.spec = *std::move(spec);
    c.pools.push_back(std::move(p));
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::LoadHostsAndAccess(records::StoreContents& c) {
  ASSIGN_OR_RETURN(Statement st,
                   db_->Prepare("SELECT name, maintenance, cpu_milli, memory_bytes, disk_bytes, "
                                "gpu_milli, labels FROM hosts ORDER BY name"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    records::HostRecord h;
    h.name = st.ColumnText(0);
    h.maintenance = static_cast<records::HostMaintenance>(st.ColumnInt(1));
    h.capacity = Resources::Of(st.ColumnInt(2), st.ColumnInt(3), st.ColumnInt(4), st.ColumnInt(5));
    absl::StatusOr<std::map<std::string, std::string>> labels = DecodeLabels(st.ColumnText(6));
    if (!labels.ok()) return BadRow("hosts", h.name, labels.status().message());
    h.labels = *std::move(labels);
    c.hosts.push_back(std::move(h));
  }
  RETURN_IF_ERROR(LoadTokens(c));
  RETURN_IF_ERROR(LoadSecrets(c));
  ASSIGN_OR_RETURN(std::string next, GetMeta("next_job_id"));
  if (!absl::SimpleAtoi(next, &c.next_job_id)) {
    return absl::DataLossError(absl::StrCat("next_job_id '", next, "' is not a number"));
  }
  c.cluster_id = cluster_id_;
  return absl::OkStatus();
}

absl::StatusOr<records::StoreContents> SqliteStore::Load() {
  records::StoreContents c;
  RETURN_IF_ERROR(LoadPools(c));
  std::vector<std::string> spec_texts;
  RETURN_IF_ERROR(LoadJobs(std::nullopt, c.jobs, spec_texts));
  {
    SpecParsing parsing(std::move(spec_texts), &c.jobs);  // while the tasks are read
    absl::Status tasks = ReadTaskRows(*db_, std::nullopt, c.tasks);
    RETURN_IF_ERROR(parsing.Wait());
    RETURN_IF_ERROR(tasks);
  }
  RETURN_IF_ERROR(LoadHostsAndAccess(c));
  return c;
}

absl::Status SqliteStore::LoadInto(LoadSink& sink) {
  records::StoreContents c;
  RETURN_IF_ERROR(LoadPools(c));
  std::vector<std::string> spec_texts;
  RETURN_IF_ERROR(LoadJobs(std::nullopt, c.jobs, spec_texts));
  {
    // The head waits for the specs: parsed on two threads, while the rest of it is read.
    SpecParsing parsing(std::move(spec_texts), &c.jobs, /*threads=*/2);
    absl::Status rest = LoadHostsAndAccess(c);
    RETURN_IF_ERROR(parsing.Wait());
    RETURN_IF_ERROR(rest);
  }
  const int64_t split = SplitJob(c.jobs);
  sink.Head(std::move(c));
  return StreamAllTaskRows(*db_, split, sink);
}

absl::StatusOr<std::optional<records::JobHistory>> SqliteStore::ReadJob(JobId job) {
  std::vector<records::JobRecord> jobs;
  std::vector<std::string> spec_texts;
  RETURN_IF_ERROR(LoadJobs(job, jobs, spec_texts));
  if (jobs.empty()) return std::nullopt;
  RETURN_IF_ERROR(ParseStoredSpecs(spec_texts, jobs));
  records::JobHistory h;
  h.job = std::move(jobs.front());
  RETURN_IF_ERROR(ReadTaskRows(*db_, job, h.tasks));
  RETURN_IF_ERROR(ReadJobEvents(job, h.events));
  return h;
}

absl::StatusOr<StoreStats> SqliteStore::Stats() {
  StoreStats s;
  for (const char* table :
       {"audit", "events", "hosts", "jobs", "pools", "secrets", "tasks", "tokens"}) {
    // The events are counted in their blocks.
    const std::string count = absl::string_view(table) == "events"
                                  ? "SELECT COALESCE(SUM(count), 0) FROM event_blocks"
                                  : absl::StrCat("SELECT COUNT(*) FROM ", table);
    ASSIGN_OR_RETURN(Statement st, db_->Prepare(count));
    ASSIGN_OR_RETURN(bool row, st.Step());
    s.rows.emplace_back(table, row ? st.ColumnInt(0) : 0);
  }
  ASSIGN_OR_RETURN(Statement st, db_->Prepare("SELECT page_count * page_size FROM "
                                              "pragma_page_count(), pragma_page_size()"));
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (row) s.bytes = st.ColumnInt(0);
  return s;
}

}  // namespace paceline::store
