#pragma once
// PostgresStore: the Store on a PostgreSQL database, for several masters sharing one cluster
// state (high availability). Same contract as every backend; the conformance suite runs
// against it on a real server.
//
// Open(url) connects (postgres://user[:password]@host[:port]/database), applies the schema
// migrations of schema.h in one transaction and refuses a database written by a newer
// Paceline. CommitAll() writes all its batches in one transaction, pipelined (pg_conn.h), so
// group commit (group_commit.h) costs one round trip per ~1,000 writes; it returns once
// PostgreSQL has committed (synchronous_commit as the server is configured: durable with the
// default). A lost connection is UNAVAILABLE; the next call connects again, so the store comes
// back by itself when the database does.
//
// Revisions: every commit takes the next revision and marks what it writes or deletes with it
// (schema.h, version 2), so ReadChanges(since) reads only what changed after `since`, tokens
// and secrets (written and deleted) included; the audit log is not among the changes (ListAudit
// reads it). What a commit sends is in postgres_write.h.
//
// Pipelined commits (store.h): up to two commits in flight on the one connection, so that the
// server runs one while the writer prepares and sends the next. Each commit's transaction is a
// link of the connection's chain (paceline_chain, schema.h): it commits only if the commit sent
// before it did, so a batch computed on top of a lost one is never written.
//
// Fencing: after FenceWith(term), every commit first calls paceline_fence(term) in the same
// transaction (schema.h): once another master has taken the lease, commits fail with
// FAILED_PRECONDITION and change nothing.
//
// Thread-safety: not thread-safe (like every Store); the master's writer thread uses it.

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "store/postgres/change_compaction.h"
#include "store/postgres/pg_conn.h"
#include "store/store.h"

namespace paceline::store {

struct PostgresOptions {
  absl::Duration connect_timeout = absl::Seconds(5);
  // How long the changes standbys follow are kept (change_compaction.h): a standby whose copy
  // is older reads the store whole again.
  absl::Duration changes_kept = absl::Minutes(10);
};

class PostgresStore final : public Store {
 public:
  static absl::StatusOr<std::unique_ptr<PostgresStore>> Open(const std::string& url,
                                                             const PostgresOptions& options = {});

  absl::Status CommitAll(const std::vector<const records::WriteBatch*>& batches) override;
  int MaxCommitsInFlight() const override { return 2; }
  absl::Status SendCommit(const std::vector<const records::WriteBatch*>& batches) override;
  absl::Status FinishCommit() override;
  bool CommitReady() override { return in_flight_.empty() || conn_->TransactionReady(); }
  int CommitWaitFd() const override { return conn_ == nullptr ? -1 : conn_->socket(); }
  absl::StatusOr<records::StoreContents> Load() override;
  absl::StatusOr<StoreChanges> ReadChanges(int64_t since) override;
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
  int64_t CommittedRevision() const override {
    return committed_revision_.load(std::memory_order_acquire);
  }

  // Fences every later commit by `term` (see above); nullopt: unfenced (one master, tools).
  void FenceWith(std::optional<uint64_t> term) { fence_term_ = term; }
  // How many times a master has opened this store (1 on a fresh store).
  int64_t open_count() const { return open_count_; }
  // The next commit also compacts the changes older than `revision` (as the leader's store
  // does by itself once they are options.changes_kept old).
  void CompactChangesBefore(int64_t revision) { compact_before_ = revision; }

 private:
  PostgresStore(std::string url, PostgresOptions options)
      : url_(std::move(url)),
        options_(options),
        compaction_(options.changes_kept, options.changes_kept / 20) {}
  // The connection, opened again (statements prepared) when it broke.
  absl::StatusOr<PgConn*> Conn();
  absl::Status Migrate();
  absl::StatusOr<std::string> GetMeta(const std::string& key);

  // A commit sent and not yet finished.
  struct InFlight {
    uint64_t link = 0;      // its link in the chain
    std::string revision;   // the commit's revision, once read
    bool followed = false;  // whether it writes rows standbys follow
    std::optional<std::string> cluster_id;
  };

  std::string url_;
  PostgresOptions options_;
  std::unique_ptr<PgConn> conn_;
  std::deque<std::unique_ptr<InFlight>> in_flight_;  // oldest first
  uint64_t committed_link_ = 0;  // the connection's last committed link (0: none yet)
  uint64_t next_link_ = 0;
  std::string cluster_id_;
  int64_t open_count_ = 0;
  std::optional<uint64_t> fence_term_;
  std::atomic<int64_t> committed_revision_{kNoRevision};
  pg::ChangeCompaction compaction_;
  std::optional<int64_t> compact_before_;
};

}  // namespace paceline::store
