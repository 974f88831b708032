#pragma once
// GroupCommitter: durability without giving up throughput. Callers Submit() write batches from
// any thread; one writer thread takes everything that queued up while the previous commit was
// being written and commits it as ONE transaction (Store::CommitAll), then calls each batch's
// `done` with the common result. A failed group fails every batch in it and leaves no partial
// state (the Store contract), so each caller sees exactly the outcome of its own changes.
//
// After a failed commit every later batch fails with the same error without reaching the
// store, until Resume(): a batch computed on top of a lost one must never be written alone.
// The owner reloads its state from the store (reads still run), then resumes.
//
// With a store that pipelines commits (Store::MaxCommitsInFlight), the writer sends the next
// group while the store commits the one before. With fewer in flight than the store allows, it
// waits for whichever comes first, a commit's outcome or a new batch (Store::CommitWaitFd and
// an eventfd that Submit signals), so a batch that arrives during a commit is sent at once and
// the store never waits for the writer; with as many in flight as allowed, it waits for the
// oldest. A read waits for every commit sent. A group sent behind one that failed fails with
// the same error (the store does not commit it).
//
// Ordering: batches are committed in Submit order; `done` callbacks run on the writer thread
// in Submit order. Callers must not block in `done` (post to their own loop instead).
//
// Thread-safety: Submit/CommitSync/stats are thread-safe. The Store is used only by the writer
// thread once the committer owns it.

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "store/store.h"

namespace paceline::store {

struct GroupCommitStats {
  static constexpr int kBuckets = 32;
  uint64_t commits = 0;  // transactions written
  uint64_t batches = 0;  // batches committed (>= commits)
  uint64_t failed_commits = 0;
  absl::Duration total_commit_time;  // sum over commits
  absl::Duration max_commit_time;
  // Commit times by power of two: bucket i counts commits of [2^i, 2^(i+1)) microseconds
  // (bucket 0 also those under 1 us).
  std::array<uint64_t, kBuckets> commit_time_buckets{};

  // The upper bound of the bucket holding the q-quantile commit time (0 < q <= 1): within a
  // factor of two, never an underestimate. Zero without commits.
  absl::Duration CommitTimeQuantile(double q) const;
};

// What a committer offers to those who write beside its owner: batches that no state of the
// owner depends on (Submit: `done` on the writer thread), and reads of the store on the writer
// thread after every earlier batch (RunOnWriter). Neither can resume a stopped committer nor
// wait for a commit.
class StoreWriter {
 public:
  using Done = std::function<void(absl::Status)>;
  virtual ~StoreWriter() = default;
  virtual void Submit(records::WriteBatch batch, Done done) = 0;
  // Runs `read` on the writer thread, after every batch submitted before it, and waits: the
  // way for other threads to read the store without racing the writer.
  virtual void RunOnWriter(const std::function<void(Store&)>& read) = 0;
};

class GroupCommitter final : public StoreWriter {
 public:
  struct Options {
    size_t max_batches_per_commit = 4096;
  };

  // `store` must outlive the committer.
  GroupCommitter(Store* store, Options options);
  explicit GroupCommitter(Store* store) : GroupCommitter(store, Options()) {}
  // Commits what is queued, then stops the writer thread.
  ~GroupCommitter();
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  void Submit(records::WriteBatch batch, Done done) override;
  // Submits and waits for the outcome.
  absl::Status CommitSync(records::WriteBatch batch);
  void RunOnWriter(const std::function<void(Store&)>& read) override;
  // The same without waiting: `read` runs on the writer thread after every earlier batch.
  void SubmitRead(std::function<void(Store&)> read);
  // Lets batches reach the store again after a failure (see above).
  void Resume();
  GroupCommitStats stats() const;
  // The store's CommittedRevision (store.h), from any thread.
  int64_t committed_revision() const { return store_->CommittedRevision(); }

 private:
  struct Pending {
    records::WriteBatch batch;
    Done done;
    std::function<void(Store&)> read;  // set for reads; batch and done are then unused
  };
  // A group handed to the store: sent (pipelined) or, with a store of one commit in flight,
  // already committed (`finished`, with its outcome in `status`).
  struct Sent {
    std::vector<Pending> group;
    absl::Time start;
    absl::Status status;
    bool finished = false;
  };
  void WriterLoop();
  // Waits for the oldest group's commit and calls its batches' `done`.
  void FinishOldest(std::deque<Sent>& sent, absl::Status& flight_failure);
  // With commits in flight and nothing to send: waits until the oldest may have finished or
  // something is submitted.
  void AwaitCommitOrWork(std::deque<Sent>& sent, absl::Status& flight_failure);
  void Wake();

  Store* const store_;
  const Options options_;
  mutable absl::Mutex mu_;
  std::deque<Pending> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status failure_ ABSL_GUARDED_BY(mu_);  // the failed commit that stops writes
  GroupCommitStats stats_ ABSL_GUARDED_BY(mu_);
  const int wake_fd_;  // an eventfd: Submit and SubmitRead signal it
  std::thread writer_;
};

}  // namespace paceline::store
