#pragma once
// Store: the narrow, domain-level interface to durable state. Backends: MemoryStore (tests,
// sim), SqliteStore (embedded default), PostgresStore (postgres/postgres_store.h: several
// masters sharing one cluster state). One conformance suite (store_conformance_test.cc) runs
// against every backend, and FaultInjectingStore wraps any of them to make writes fail.
//
// Contract:
//   - CommitAll(batches) applies the batches in order, atomically: when it returns OK every
//     change is durable; when it returns an error none is visible, ever. UNAVAILABLE means the
//     store cannot be written right now. Commit(batch) is CommitAll of one batch.
//   - Load() returns the committed state (not events), its tasks by (job, instance).
//   - LoadInto(sink) is Load() handed over in parts (LoadSink): everything but the tasks,
//     then the tasks in batches as they are read, so that a restart rebuilds while it reads
//     and never holds the records of millions of tasks at once. The default hands over Load()
//     in one batch; SqliteStore streams.
//   - ListEvents(task) returns that task's events in commit order, at most `limit` of the
//     newest when limit > 0.
//   - ForEachEvent(fn) calls fn on every event, by task (job, then instance) and in commit
//     order within a task, including the events of instances a scale-down removed; it stops
//     at the first error of fn and returns it.
//   - ReadJob(job) returns the job with its tasks and events (records::JobHistory), or nullopt
//     when the store has no such job.
//   - Stats() returns the live rows of each table and the store's size in bytes (-1 when the
//     backend cannot tell); it may scan every table: call it rarely.
//   - ListAudit(query) returns the audit records matching `query`, newest (highest seq) first.
//   - ListUsage(query) returns the hourly usage rows matching `query` (records/usage.h), in key
//     order (hour, pool, job, owner, user): a batch's add_usage adds to the row of its key.
//   - ReadChanges(since) returns what changed after revision `since` (store_mirror.h), in one
//     consistent snapshot: for a backend that several masters share, so that a standby can
//     follow it. Others answer UNIMPLEMENTED.
//   - cluster_id() is a random id given to the cluster when its store was created; stable
//     across restarts and kept by `paceline store migrate`.
//
// Thread-safety: implementations are not thread-safe; the master uses a store from its one
// writer thread (see group_commit.h) and reads it only at start-up.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "records/records.h"
#include "store/store_mirror.h"

namespace paceline::store {

struct StoreStats {
  std::vector<std::pair<std::string, int64_t>> rows;  // (table, live rows), by table name
  int64_t bytes = -1;
};

// Receives a streaming load (Store::LoadInto).
class LoadSink {
 public:
  virtual ~LoadSink() = default;
  // Everything but the tasks (`contents.tasks` is empty); once, before any batch.
  virtual void Head(records::StoreContents contents) = 0;
  // The next batch of task records, by (job, instance) within the batch; batches come in any
  // order, and from up to two threads at once. False: the receiver gave up, stop reading.
  virtual bool Tasks(std::vector<records::TaskRecord> batch) = 0;
  // A batch the receiver is done with, emptied, to fill next: its memory is already touched, so
  // that millions of records do not fault in fresh pages batch after batch. Empty when none.
  virtual std::vector<records::TaskRecord> TakeSpare() { return {}; }
};

// What LoadInto answers when the sink gave up (LoadSink::Tasks returned false).
absl::Status LoadAbandoned();

class Store {
 public:
  virtual ~Store() = default;
  virtual absl::Status CommitAll(const std::vector<const records::WriteBatch*>& batches) = 0;
  absl::Status Commit(const records::WriteBatch& batch) { return CommitAll({&batch}); }
  // Pipelined commits, in a store that has them (MaxCommitsInFlight() > 1): SendCommit sends
  // the batches as one commit and returns without waiting for it (the batches may go then);
  // FinishCommit waits for the oldest commit sent and returns its outcome, as CommitAll would
  // have. A commit sent behind one that fails does not commit. While a commit is in flight
  // only SendCommit (up to MaxCommitsInFlight), FinishCommit and CommittedRevision may be
  // called. Stores without them answer UNIMPLEMENTED.
  // CommitReady says, without waiting, whether the oldest commit sent has finished (then
  // FinishCommit returns at once); CommitWaitFd is a descriptor that becomes readable when it
  // may have (-1: none; FinishCommit is then the only way to wait).
  virtual int MaxCommitsInFlight() const { return 1; }
  virtual absl::Status SendCommit(const std::vector<const records::WriteBatch*>& batches);
  virtual absl::Status FinishCommit();
  virtual bool CommitReady() { return true; }
  virtual int CommitWaitFd() const { return -1; }
  virtual absl::StatusOr<records::StoreContents> Load() = 0;
  // CANCELLED when the sink gave up.
  virtual absl::Status LoadInto(LoadSink& sink);
  virtual absl::StatusOr<std::vector<records::TaskEvent>> ListEvents(TaskId task, size_t limit) = 0;
  using EventFn = std::function<absl::Status(const records::TaskEvent&)>;
  virtual absl::Status ForEachEvent(const EventFn& fn) = 0;
  virtual absl::StatusOr<std::optional<records::JobHistory>> ReadJob(JobId job) = 0;
  virtual absl::StatusOr<StoreStats> Stats() = 0;
  virtual absl::StatusOr<std::vector<records::AuditRecord>> ListAudit(
      const records::AuditQuery& query) = 0;
  virtual absl::StatusOr<std::vector<records::UsageRecord>> ListUsage(
      const records::UsageQuery& query) = 0;
  virtual absl::StatusOr<StoreChanges> ReadChanges(int64_t since) {
    (void)since;
    return absl::UnimplementedError(Describe() + " cannot be followed by a standby");
  }
  virtual const std::string& cluster_id() const = 0;
  // The revision of the newest commit of this object that wrote rows standbys follow
  // (store_mirror.h), kNoRevision before any or when the backend has no revisions: a standby
  // whose followed state reaches it has seen every such commit. Unlike the rest of the Store,
  // callable from any thread.
  virtual int64_t CommittedRevision() const { return kNoRevision; }
  // "memory", "sqlite:data/paceline.db", ...
  virtual std::string Describe() const = 0;
};

}  // namespace paceline::store
