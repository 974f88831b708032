#pragma once
// SqliteStore: the embedded, durable Store of the master (the default backend).
//
// Lives in one file, <data_dir>/paceline.db, in WAL mode with synchronous=FULL, so a commit that
// returned is on disk. Open() creates the directory and the database when missing and migrates
// the schema forward (the version is kept in the `meta` table); a database written by a newer
// Paceline is refused rather than guessed at. CommitAll() runs all its batches in one
// transaction with cached prepared statements: group commit (group_commit.h) makes one
// transaction of everything that queued up while the previous one was being written.
//
// Task events are kept in blocks, one row per job per commit (store/event_block.h); their
// writing and reading is in sqlite_store_events.cc.
//
// Specs are stored as their canonical YAML (spec/yaml_spec.h), so the stored form is readable
// with the sqlite3 shell and is exactly what `paceline job validate` accepts.
//
// The columns of pools, jobs, hosts, tokens, secrets, the audit log and the key and blob of
// tasks and event blocks are described once (store/sql_tables.h): the statements are made from
// those descriptions, and Open() checks that the database has exactly those columns.
//
// API tokens, secrets and the audit log are written and listed by sqlite_store_access.cc.
//
// Thread-safety: not thread-safe; the master gives it to one writer thread.

#include <memory>
#include <string>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "store/sql_table.h"
#include "store/sqlite/db.h"
#include "store/sqlite/sqlite_rows.h"
#include "store/store.h"

namespace paceline::store {

class SqliteStore final : public Store {
 public:
  static constexpr int kSchemaVersion = 9;
  static constexpr const char* kFileName = "paceline.db";

  // Opens (creating when missing) the store under `data_dir`.
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(const std::string& data_dir);

  absl::Status CommitAll(const std::vector<const records::WriteBatch*>& batches) override;
  absl::StatusOr<records::StoreContents> Load() override;
  // Streams: the task rows are read by two connections at once (task_rows.h).
  absl::Status LoadInto(LoadSink& sink) override;
  absl::StatusOr<std::vector<records::TaskEvent>> ListEvents(TaskId task, size_t limit) override;
  absl::Status ForEachEvent(const EventFn& fn) override;
  absl::StatusOr<std::optional<records::JobHistory>> ReadJob(JobId job) override;
  absl::StatusOr<StoreStats> Stats() override;
  absl::StatusOr<std::vector<records::AuditRecord>> ListAudit(
      const records::AuditQuery& query) override;
  absl::StatusOr<std::vector<records::UsageRecord>> ListUsage(
      const records::UsageQuery& query) override;
  std::string Describe() const override;
  const std::string& cluster_id() const override { return cluster_id_; }
  // How many times a master has opened this store (1 on a fresh store).
  int64_t open_count() const { return open_count_; }

  // Testing: the next commit fails with UNAVAILABLE after `writes` row writes (then rolls back).
  void FailAfterWritesForTesting(int writes) { fail_after_writes_ = writes; }

 private:
  explicit SqliteStore(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}
  absl::Status Migrate();
  absl::StatusOr<std::string> GetMeta(absl::string_view key);
  absl::Status PutMeta(absl::string_view key, absl::string_view value);
  // A prepared statement cached by its SQL text.
  absl::StatusOr<Statement*> Cached(absl::string_view sql);
  absl::Status Apply(const records::WriteBatch& batch);
  // The tokens, secrets (deletions, then puts) and audit records of `batch`, and its pruning of
  // the audit log, in that order.
  absl::Status ApplyAccess(const records::WriteBatch& batch);
  // The jobs (`only` when given), by id; their tasks are read by task_rows.h.
  // The jobs' specs are left to parse (spec_parsing.h): their texts go to `spec_texts`.
  absl::Status LoadJobs(std::optional<JobId> only, std::vector<records::JobRecord>& out,
                        std::vector<std::string>& spec_texts);
  absl::Status LoadPools(records::StoreContents& out);
  // The hosts, tokens, secrets, next job id and cluster id.
  absl::Status LoadHostsAndAccess(records::StoreContents& out);
  absl::Status CountWrite();
  // Writes `r` with `sql`, an insert or upsert of `t`'s columns (sql_text.h).
  template <typename Record, typename Row>
  absl::Status Put(const std::string& sql, const sql::Table<Record, Row>& t, const Record& r);
  // Appends every row of `t`, in its order.
  template <typename Record>
  absl::Status ReadAll(const sql::Table<Record>& t, std::vector<Record>& out);
  // Whether every described table has its described columns (sql_tables.h).
  absl::Status CheckTables();
  // Events (sqlite_store_events.cc): a batch's events wait by job until FlushEvents writes a block
  // of each job's, before the transaction ends or anything deletes events.
  absl::Status QueueEvents(const records::WriteBatch& batch);
  absl::Status FlushEvents();
  // Calls fn on each block of `job`'s events, in commit order or newest first, until it
  // answers false.
  absl::Status ForEachBlock(JobId job, bool newest_first,
                            const std::function<bool(absl::string_view)>& fn);
  // Appends `job`'s events, by instance and in commit order within one.
  absl::Status ReadJobEvents(JobId job, std::vector<records::TaskEvent>& out);
  // Version 5 to 6: the events table into blocks.
  absl::Status MigrateEventsToBlocks();

  std::unique_ptr<SqliteDb> db_;
  absl::flat_hash_map<std::string, std::unique_ptr<Statement>> statements_;
  std::string cluster_id_;
  int64_t open_count_ = 0;
  int fail_after_writes_ = -1;
  // The events of the commit in progress, by job (they point into its batches).
  absl::btree_map<uint64_t, std::vector<const records::TaskEvent*>> pending_events_;
};

template <typename Record, typename Row>
absl::Status SqliteStore::Put(const std::string& sql, const sql::Table<Record, Row>& t,
                              const Record& r) {
  if (absl::Status s = CountWrite(); !s.ok()) return s;
  absl::StatusOr<Statement*> st = Cached(sql);
  if (!st.ok()) return st.status();
  (*st)->Reset();
  BindRow(**st, t, r);
  return (*st)->Run();
}

template <typename Record>
absl::Status SqliteStore::ReadAll(const sql::Table<Record>& t, std::vector<Record>& out) {
  absl::StatusOr<Statement> st =
      db_->Prepare(sql::SelectSql(sql::ShapeOf(t), sql::Dialect::kSqlite));
  if (!st.ok()) return st.status();
  while (true) {
    absl::StatusOr<bool> row = st->Step();
    if (!row.ok() || !*row) return row.status();
    Record r;
    if (absl::Status s = ReadRow(*st, t, r); !s.ok()) return s;
    out.push_back(std::move(r));
  }
}

}  // namespace paceline::store
