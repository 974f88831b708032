#include "store/group_commit.h"

#include <pthread.h>

#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/duration_histogram.h"

namespace paceline::store {

GroupCommitter::GroupCommitter(Store* store, Options options)
    : store_(store), options_(options), writer_([this] {
        pthread_setname_np(pthread_self(), "pl-store-writer");  // in top, perf, /proc
        WriterLoop();
      }) {}

GroupCommitter::~GroupCommitter() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  writer_.join();
}

void GroupCommitter::Submit(records::WriteBatch batch, Done done) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(Pending{std::move(batch), std::move(done)});
}

absl::Status GroupCommitter::CommitSync(records::WriteBatch batch) {
  absl::Notification finished;
  absl::Status result;
  Submit(std::move(batch), [&](absl::Status s) {
    result = std::move(s);
    finished.Notify();
  });
  finished.WaitForNotification();
  return result;
}

void GroupCommitter::RunOnWriter(const std::function<void(Store&)>& read) {
  absl::Notification finished;
  SubmitRead([&](Store& s) {
    read(s);
    finished.Notify();
  });
  finished.WaitForNotification();
}

void GroupCommitter::SubmitRead(std::function<void(Store&)> read) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(Pending{records::WriteBatch(), nullptr, std::move(read)});
}

void GroupCommitter::Resume() {
  absl::MutexLock lock(&mu_);
  failure_ = absl::OkStatus();
}

GroupCommitStats GroupCommitter::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

absl::Duration GroupCommitStats::CommitTimeQuantile(double q) const {
  return BucketQuantile(commit_time_buckets, q, max_commit_time);
}

void GroupCommitter::WriterLoop() {
  while (true) {
    std::vector<Pending> group;
    std::function<void(Store&)> read;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](GroupCommitter* c)
               ABSL_EXCLUSIVE_LOCKS_REQUIRED(c->mu_) { return c->stopping_ || !c->queue_.empty(); },
          this));
      if (queue_.empty()) return;  // stopping, and everything is committed
      if (queue_.front().read) {
        read = std::move(queue_.front().read);
        queue_.pop_front();
      } else {
        // Consecutive write batches, up to the first read.
        while (!queue_.empty() && !queue_.front().read &&
               group.size() < options_.max_batches_per_commit) {
          group.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      }
    }
    if (read) {
      read(*store_);
      continue;
    }
    absl::Status failed;
    {
      absl::MutexLock lock(&mu_);
      failed = failure_;
    }
    if (!failed.ok()) {  // after a failure nothing reaches the store until Resume()
      for (Pending& p : group) {
        if (p.done) p.done(failed);
      }
      continue;
    }
    std::vector<const records::WriteBatch*> batches;
    batches.reserve(group.size());
    for (const Pending& p : group) batches.push_back(&p.batch);
    absl::Time start = absl::Now();
    absl::Status s = store_->CommitAll(batches);
    absl::Duration took = absl::Now() - start;
    {
      absl::MutexLock lock(&mu_);
      if (!s.ok()) failure_ = s;
      ++stats_.commits;
      stats_.batches += group.size();
      if (!s.ok()) ++stats_.failed_commits;
      stats_.total_commit_time += took;
      stats_.max_commit_time = std::max(stats_.max_commit_time, took);
      ++stats_.commit_time_buckets[DurationBucket(took, GroupCommitStats::kBuckets)];
    }
    for (Pending& p : group) {
      if (p.done) p.done(s);
    }
  }
}

}  // namespace paceline::store
