// The statements of PostgresStore's commits (postgres_write.h).

#include "store/postgres/postgres_write.h"

#include <iterator>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "store/postgres/pg_rows.h"
#include "store/sql_tables.h"
#include "store/usage_sql.h"

namespace paceline::store::pg {
namespace {

struct Sql {
  const char* name;
  const char* text;
};
constexpr Sql kFence{"fence", "SELECT paceline_fence($1)"};
constexpr Sql kChain{"chain", "SELECT paceline_chain($1, $2)"};
// Every commit's revision (schema.h, version 2): the rows it writes carry currval.
constexpr Sql kNextRev{"next_rev", "SELECT nextval('changes_rev')"};
constexpr Sql kDeleteTask{"delete_task",
                          "WITH t AS (DELETE FROM tasks WHERE job = $1 AND instance = $2) "
                          "INSERT INTO deletions (rev, kind, job, instance) "
                          "VALUES (currval('changes_rev'), 'task', $1, $2)"};
constexpr Sql kDeleteJob{"delete_job",
                         "WITH t AS (DELETE FROM tasks WHERE job = $1), "
                         "e AS (DELETE FROM events WHERE job = $1), "
                         "b AS (DELETE FROM event_blocks WHERE job = $1), "
                         "j AS (DELETE FROM jobs WHERE id = $1) "
                         "INSERT INTO deletions (rev, kind, job) "
                         "VALUES (currval('changes_rev'), 'job', $1)"};
constexpr Sql kDeletePool{"delete_pool",
                          "WITH p AS (DELETE FROM pools WHERE path = $1) "
                          "INSERT INTO deletions (rev, kind, path) "
                          "VALUES (currval('changes_rev'), 'pool', $1)"};
constexpr Sql kDeleteSecret{"delete_secret",
                            "WITH s AS (DELETE FROM secrets WHERE path = $1) "
                            "INSERT INTO deletions (rev, kind, path) "
                            "VALUES (currval('changes_rev'), 'secret', $1)"};
// The keys of the tasks a commit wrote (schema.h, version 10), as two arrays: '{1,1,2}'.
constexpr Sql kTaskChanges{"task_changes",
                           "INSERT INTO task_changes (rev, jobs, instances) "
                           "VALUES (currval('changes_rev'), $1, $2)"};
// Compaction of the change feed (change_compaction.h): what is older than $1 goes but each
// table's newest row, and changes_from records the oldest revision whose changes are all kept.
constexpr Sql kCompactChanges{
    "compact_changes",
    "WITH t AS (DELETE FROM task_changes WHERE rev < $1::bigint "
    "AND rev < (SELECT max(rev) FROM task_changes)), "
    "d AS (DELETE FROM deletions WHERE rev < $1::bigint "
    "AND rev < (SELECT max(rev) FROM deletions)) "
    "INSERT INTO meta (key, value) VALUES ('changes_from', $1::bigint::text) "
    "ON CONFLICT (key) DO UPDATE SET value = GREATEST(meta.value::bigint, "
    "EXCLUDED.value::bigint)::text"};
constexpr Sql kPruneAudit{"prune_audit", "DELETE FROM audit WHERE at_us < $1"};
constexpr Sql kPutMeta{"put_meta", kPutMetaSql};
constexpr Sql kPruneUsage{"prune_usage", "DELETE FROM usage_hours WHERE hour_us < $1"};
constexpr Sql kAll[] = {kFence,          kChain,      kNextRev,      kDeleteTask,
                        kDeleteJob,      kDeletePool, kDeleteSecret, kTaskChanges,
                        kCompactChanges, kPruneAudit, kPutMeta,      kPruneUsage};

std::optional<std::string> Num(int64_t v) { return absl::StrCat(v); }

// The rows of one statement of kMultiRow task upserts or event inserts.
constexpr int kMultiRow = 64;

// The writes of described records (sql_tables.h), prepared with kAll: an upsert or insert of
// one row each, and of kMultiRow rows for tasks and events.
constexpr const char* kPutPool = "put_pool";
constexpr const char* kPutJob = "put_job";
constexpr const char* kPutHost = "put_host";
constexpr const char* kPutToken = "put_token";
constexpr const char* kPutSecret = "put_secret";
constexpr const char* kAppendAudit = "append_audit";
constexpr const char* kPutTask = "put_task";
constexpr const char* kPutTasks = "put_tasks_64";
constexpr const char* kPutEventBlock = "put_event_block";
constexpr const char* kAddUsage = "add_usage";
struct GeneratedSql {
  const char* name;
  std::string text;
};
const std::vector<GeneratedSql>& RowStatements() {
  using sql::ShapeOf;
  constexpr sql::Dialect kPg = sql::Dialect::kPostgres;
  static const std::vector<GeneratedSql> all = {
      {kPutPool, sql::UpsertSql(ShapeOf(kPoolTable), kPg)},
      {kPutJob, sql::UpsertSql(ShapeOf(kJobTable), kPg)},
      {kPutHost, sql::UpsertSql(ShapeOf(kHostTable), kPg)},
      {kPutToken, sql::UpsertSql(ShapeOf(kTokenTable), kPg)},
      {kPutSecret, sql::UpsertSql(ShapeOf(kSecretTable), kPg)},
      {kAppendAudit, sql::InsertSql(ShapeOf(kAuditTable), kPg)},
      {kPutTask, sql::UpsertSql(ShapeOf(kTaskTable), kPg)},
      {kPutTasks, sql::UpsertSql(ShapeOf(kTaskTable), kPg, kMultiRow)},
      {kPutEventBlock, sql::InsertSql(ShapeOf(kPgEventBlockTable), kPg)},
      {kAddUsage, AddUsageSql(kPg)},
  };
  return all;
}

// The commands of one commit. Task upserts, the bulk of every commit, are held back and sent
// kMultiRow rows per statement: a task written several times keeps its place and takes its
// last value (no deletion in between: a deletion of tasks first sends what is held). Events
// are held by job, in order, and become one block per job (store/event_block.h), inserted at
// a deletion of tasks or jobs and at the end. The keys of every task written go last, as the
// commit's row of task_changes.
class CommitCommands {
 public:
  explicit CommitCommands(PgWrite& out) : out_(out.commands) {}
  ~CommitCommands() {
    Flush();
    if (changed_.empty()) return;
    std::string jobs = "{", instances = "{";
    for (const TaskId& id : changed_) {
      absl::StrAppend(&jobs, jobs.size() > 1 ? "," : "", static_cast<int64_t>(id.job.value()));
      absl::StrAppend(&instances, instances.size() > 1 ? "," : "", id.instance);
    }
    out_.push_back({kTaskChanges.name, {jobs + "}", instances + "}"}});
  }

  void PutTask(const records::TaskRecord& t) {
    changed_.insert(t.id);
    auto [it, added] = task_index_.try_emplace(t.id, tasks_.size());
    if (added) {
      tasks_.push_back(ParamsOf(kTaskTable, t));
    } else {
      tasks_[it->second] = ParamsOf(kTaskTable, t);
    }
  }
  // `e` must outlive this object (it is a batch's, and the batches outlive WriteCommands).
  void PutEvent(const records::TaskEvent& e) { events_[e.run.task.job.value()].push_back(&e); }
  // Any other command; one that deletes tasks or events first sends what is held.
  void Add(PgCommand c, bool deletes_tasks) {
    if (deletes_tasks) Flush();
    out_.push_back(std::move(c));
  }
  void Flush() {
    Send(tasks_, kPutTasks, kPutTask);
    for (PgParams& row : TakeBlocks()) out_.push_back({kPutEventBlock, std::move(row)});
    task_index_.clear();
  }

 private:
  // The held events as the rows of their blocks, one per job; holds none after.
  std::vector<PgParams> TakeBlocks() {
    std::vector<PgParams> rows;
    rows.reserve(events_.size());
    for (const auto& [job, events] : events_) {
      rows.push_back(ParamsOf(kPgEventBlockTable, EventBlock{static_cast<int64_t>(job), &events}));
    }
    events_.clear();
    return rows;
  }

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
  absl::btree_set<TaskId> changed_;  // every task written, in key order
  std::vector<PgParams> tasks_;
  absl::flat_hash_map<TaskId, size_t> task_index_;
  // By job, each job's in the order written.
  absl::btree_map<uint64_t, std::vector<const records::TaskEvent*>> events_;
};

void AddBatch(const records::WriteBatch& b, CommitCommands& out) {
  for (const records::PoolRecord& p : b.put_pools) {
    out.Add({kPutPool, ParamsOf(kPoolTable, p)}, false);
  }
  for (const records::JobRecord& j : b.put_jobs) out.Add({kPutJob, ParamsOf(kJobTable, j)}, false);
  for (const records::TaskRecord& t : b.put_tasks) out.PutTask(t);
  for (const records::TaskEvent& e : b.events) out.PutEvent(e);
  for (const TaskId& t : b.delete_tasks) {
    out.Add({kDeleteTask.name, {Num(static_cast<int64_t>(t.job.value())), Num(t.instance)}}, true);
  }
  for (const records::HostRecord& h : b.put_hosts) {
    out.Add({kPutHost, ParamsOf(kHostTable, h)}, false);
  }
  for (JobId id : b.delete_jobs)
    out.Add({kDeleteJob.name, {Num(static_cast<int64_t>(id.value()))}}, true);
  for (const std::string& path : b.delete_pools) out.Add({kDeletePool.name, {path}}, false);
  for (const records::TokenRecord& t : b.put_tokens) {
    out.Add({kPutToken, ParamsOf(kTokenTable, t)}, false);
  }
  for (const std::string& path : b.delete_secrets) out.Add({kDeleteSecret.name, {path}}, false);
  for (const records::SecretRecord& r : b.put_secrets) {
    out.Add({kPutSecret, ParamsOf(kSecretTable, r)}, false);
  }
  for (const records::AuditRecord& a : b.audit) {
    out.Add({kAppendAudit, ParamsOf(kAuditTable, a)}, false);
  }
  if (b.prune_audit_before) {
    out.Add({kPruneAudit.name, {Num(absl::ToUnixMicros(*b.prune_audit_before))}}, false);
  }
  for (const records::UsageRecord& u : b.add_usage) {
    out.Add({kAddUsage, ParamsOf(kUsageTable, u)}, false);
  }
  if (b.prune_usage_before) {
    out.Add({kPruneUsage.name, {Num(absl::ToUnixMicros(*b.prune_usage_before))}}, false);
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

bool WritesFollowedRows(const records::WriteBatch& b) {
  return !b.put_pools.empty() || !b.delete_pools.empty() || !b.put_jobs.empty() ||
         !b.delete_jobs.empty() || !b.put_tasks.empty() || !b.delete_tasks.empty() ||
         !b.put_hosts.empty() || !b.put_tokens.empty() || !b.delete_secrets.empty() ||
         !b.put_secrets.empty();
}

PgWrite WriteCommands(const std::vector<const records::WriteBatch*>& batches,
                      std::optional<uint64_t> fence_term, const ChainLink& link,
                      std::optional<int64_t> compact_before) {
  PgWrite write;
  if (fence_term) {
    write.commands.push_back({kFence.name, {Num(static_cast<int64_t>(*fence_term))}});
  }
  write.commands.push_back({kChain.name, {link.after, link.self}});
  write.revision_command = write.commands.size();
  write.commands.push_back({kNextRev.name, {}});
  {
    CommitCommands out(write);
    for (const records::WriteBatch* b : batches) AddBatch(*b, out);
  }
  if (compact_before) write.commands.push_back({kCompactChanges.name, {Num(*compact_before)}});
  return write;
}

}  // namespace paceline::store::pg
