#include "store/sqlite/sqlite_store.h"

#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/random_bytes.h"
#include "common/status.h"
#include "spec/yaml_spec.h"
#include "store/row_codec.h"
#include "store/spec_parsing.h"
#include "store/sql_tables.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_rows.h"
#include "store/sqlite/task_rows.h"
#include "store/task_row.h"

namespace paceline::store {
namespace {

constexpr sql::Dialect kSqlite = sql::Dialect::kSqlite;

// The statements, made at first use: the tables they are made from are globals of other files,
// which static initialization may not have reached yet.
struct Statements {
  std::string put_pool, put_job, put_task, put_host;
};
const Statements& Sql() {
  static const Statements s{sql::UpsertSql(sql::ShapeOf(kPoolTable), kSqlite),
                            sql::UpsertSql(sql::ShapeOf(kJobTable), kSqlite),
                            sql::UpsertSql(sql::ShapeOf(kTaskTable), kSqlite),
                            sql::UpsertSql(sql::ShapeOf(kHostTable), kSqlite)};
  return s;
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
      ASSIGN_OR_RETURN(std::string cluster_id, RandomHex(8));
      RETURN_IF_ERROR(PutMeta("cluster_id", cluster_id));
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
    if (version < 8) {
      RETURN_IF_ERROR(db_->Exec(kSchemaV8));
      RETURN_IF_ERROR(PutMeta("schema_version", "8"));
    }
    if (version < 9) {
      RETURN_IF_ERROR(db_->Exec(kSchemaV9));
      RETURN_IF_ERROR(PutMeta("schema_version", "9"));
    }
    RETURN_IF_ERROR(CheckTables());
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

absl::Status SqliteStore::CheckTables() {
  for (const sql::Shape& t : SqliteTableShapes()) RETURN_IF_ERROR(CheckSqliteTable(*db_, t));
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
  for (const records::PoolRecord& p : b.put_pools)
    RETURN_IF_ERROR(Put(Sql().put_pool, kPoolTable, p));
  for (const records::JobRecord& j : b.put_jobs) RETURN_IF_ERROR(Put(Sql().put_job, kJobTable, j));
  for (const records::TaskRecord& t : b.put_tasks) {
    RETURN_IF_ERROR(Put(Sql().put_task, kTaskTable, t));
  }
  for (const TaskId& t : b.delete_tasks) {
    RETURN_IF_ERROR(CountWrite());
    ASSIGN_OR_RETURN(Statement * st, Cached("DELETE FROM tasks WHERE job = ? AND instance = ?"));
    st->Reset();
    st->Bind(1, static_cast<int64_t>(t.job.value())).Bind(2, static_cast<int64_t>(t.instance));
    RETURN_IF_ERROR(st->Run());
  }
  RETURN_IF_ERROR(QueueEvents(b));
  for (const records::HostRecord& h : b.put_hosts)
    RETURN_IF_ERROR(Put(Sql().put_host, kHostTable, h));
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
  static const std::string kAll = sql::SelectSql(sql::ShapeOf(kJobTable), kSqlite);
  static const std::string kOne = sql::SelectSql(sql::ShapeOf(kJobTable), kSqlite, "WHERE id = ?");
  ASSIGN_OR_RETURN(Statement st, db_->Prepare(only ? kOne : kAll));
  if (only) st.Bind(1, static_cast<int64_t>(only->value()));
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return absl::OkStatus();
    JobRow j;
    RETURN_IF_ERROR(ReadRow(st, kJobTable, j));
    spec_texts.push_back(std::move(j.spec_text));
    out.push_back(std::move(j));
  }
}

absl::Status SqliteStore::LoadPools(records::StoreContents& c) {
  return ReadAll(kPoolTable, c.pools);
}

absl::Status SqliteStore::LoadHostsAndAccess(records::StoreContents& c) {
  RETURN_IF_ERROR(ReadAll(kHostTable, c.hosts));
  RETURN_IF_ERROR(ReadAll(kTokenTable, c.tokens));
  RETURN_IF_ERROR(ReadAll(kSecretTable, c.secrets));
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
