#pragma once
// FaultInjectingStore: wraps any Store and makes chosen commits fail with UNAVAILABLE, as a
// full disk or a lost database connection would. A failed commit never reaches the wrapped
// store, so nothing of it is visible (the Store contract); reads and the pipelined commits of
// a store that has them pass through, and the commits sent are counted.
//
// Thread-safety: like Store, not thread-safe; FailNextCommits may be called from the thread
// that uses the store, sent_commits from any.

#include <atomic>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/store.h"

namespace paceline::store {

class FaultInjectingStore final : public Store {
 public:
  explicit FaultInjectingStore(Store* base) : base_(base) {}

  // The next `n` commits fail with `status` (UNAVAILABLE by default).
  void FailNextCommits(int n,
                       absl::Status status = absl::UnavailableError("injected store failure")) {
    failures_left_ = n;
    failure_ = std::move(status);
  }
  int failed_commits() const { return failed_commits_; }

  // Commits sent to the wrapped store (CommitAll or SendCommit), failed ones excluded.
  int sent_commits() const { return sent_commits_.load(); }

  absl::Status CommitAll(const std::vector<const records::WriteBatch*>& batches) override {
    RETURN_IF_ERROR(Inject());
    return base_->CommitAll(batches);
  }
  int MaxCommitsInFlight() const override { return base_->MaxCommitsInFlight(); }
  absl::Status SendCommit(const std::vector<const records::WriteBatch*>& batches) override {
    RETURN_IF_ERROR(Inject());
    return base_->SendCommit(batches);
  }
  absl::Status FinishCommit() override { return base_->FinishCommit(); }
  bool CommitReady() override { return base_->CommitReady(); }
  int CommitWaitFd() const override { return base_->CommitWaitFd(); }
  absl::StatusOr<records::StoreContents> Load() override { return base_->Load(); }
  absl::StatusOr<std::vector<records::TaskEvent>> ListEvents(TaskId task, size_t limit) override {
    return base_->ListEvents(task, limit);
  }
  absl::Status ForEachEvent(const EventFn& fn) override { return base_->ForEachEvent(fn); }
  absl::StatusOr<std::optional<records::JobHistory>> ReadJob(JobId job) override {
    return base_->ReadJob(job);
  }
  absl::StatusOr<StoreStats> Stats() override { return base_->Stats(); }
  absl::StatusOr<std::vector<records::AuditRecord>> ListAudit(
      const records::AuditQuery& query) override {
    return base_->ListAudit(query);
  }
  absl::StatusOr<std::vector<records::UsageRecord>> ListUsage(
      const records::UsageQuery& query) override {
    return base_->ListUsage(query);
  }
  const std::string& cluster_id() const override { return base_->cluster_id(); }
  int64_t CommittedRevision() const override { return base_->CommittedRevision(); }
  std::string Describe() const override { return "faulty(" + base_->Describe() + ")"; }

 private:
  absl::Status Inject() {
    if (failures_left_ > 0) {
      --failures_left_;
      ++failed_commits_;
      return failure_;
    }
    sent_commits_.fetch_add(1);
    return absl::OkStatus();
  }

  Store* base_;
  std::atomic<int> sent_commits_{0};
  int failures_left_ = 0;
  int failed_commits_ = 0;
  absl::Status failure_;
};

}  // namespace paceline::store
