#include "store/group_commit.h"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/duration_histogram.h"

namespace paceline::store {

GroupCommitter::GroupCommitter(Store* store, Options options)
    : store_(store),
      options_(options),
      wake_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
      writer_([this] {
        pthread_setname_np(pthread_self(), "pl-store-writer");  // in top, perf, /proc
        WriterLoop();
      }) {}

GroupCommitter::~GroupCommitter() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  Wake();
  writer_.join();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void GroupCommitter::Wake() {
  if (wake_fd_ < 0) return;
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);  // EAGAIN: already signalled enough
}

void GroupCommitter::Submit(records::WriteBatch batch, Done done) {
  {
    absl::MutexLock lock(&mu_);
    queue_.push_back(Pending{std::move(batch), std::move(done)});
  }
  Wake();
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
  {
    absl::MutexLock lock(&mu_);
    queue_.push_back(Pending{records::WriteBatch(), nullptr, std::move(read)});
  }
  Wake();
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
  const size_t depth = static_cast<size_t>(std::max(1, store_->MaxCommitsInFlight()));
  std::deque<Sent> sent;        // oldest first
  absl::Status flight_failure;  // the first failure among those sent together
  while (true) {
    while (!sent.empty() && !sent.front().finished && store_->CommitReady()) {
      FinishOldest(sent, flight_failure);  // already finished: answered before more is sent
    }
    if (sent.size() >= depth) {
      FinishOldest(sent, flight_failure);
      continue;
    }
    std::vector<Pending> group;
    std::function<void(Store&)> read;
    absl::Status failed;
    {
      absl::MutexLock lock(&mu_);
      if (sent.empty()) {
        mu_.Await(absl::Condition(
            +[](GroupCommitter* c) ABSL_EXCLUSIVE_LOCKS_REQUIRED(c->mu_) {
              return c->stopping_ || !c->queue_.empty();
            },
            this));
        if (queue_.empty()) return;  // stopping, and everything is committed
      }
      if (queue_.empty()) {
        // Nothing new: wait for the oldest commit below.
      } else if (queue_.front().read) {
        if (sent.empty()) {  // a read runs after every earlier batch is committed
          read = std::move(queue_.front().read);
          queue_.pop_front();
        }
      } else {
        // Consecutive write batches, up to the first read.
        while (!queue_.empty() && !queue_.front().read &&
               group.size() < options_.max_batches_per_commit) {
          group.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      }
      failed = failure_;
    }
    if (read) {
      read(*store_);
      continue;
    }
    if (group.empty()) {
      AwaitCommitOrWork(sent, flight_failure);
      continue;
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
    Sent s{std::move(group), absl::Now(), absl::OkStatus(), depth == 1};
    s.status = depth == 1 ? store_->CommitAll(batches) : store_->SendCommit(batches);
    sent.push_back(std::move(s));
  }
}

void GroupCommitter::AwaitCommitOrWork(std::deque<Sent>& sent, absl::Status& flight_failure) {
  const int fd = store_->CommitWaitFd();
  if (fd < 0 || wake_fd_ < 0 || sent.front().finished) {
    FinishOldest(sent, flight_failure);
    return;
  }
  pollfd fds[2] = {{fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  // The bound only guards against a missed wake-up; either descriptor ends the wait.
  if (poll(fds, 2, /*timeout_ms=*/100) > 0 && (fds[1].revents & POLLIN) != 0) {
    uint64_t n = 0;
    (void)!read(wake_fd_, &n, sizeof n);
  }
}

void GroupCommitter::FinishOldest(std::deque<Sent>& sent, absl::Status& flight_failure) {
  Sent s = std::move(sent.front());
  sent.pop_front();
  absl::Status result = s.status;
  if (!s.finished && result.ok()) result = store_->FinishCommit();
  absl::Duration took = absl::Now() - s.start;
  // Those sent behind a failed commit failed with it (Store::SendCommit): the first failure
  // is the one to report.
  if (!flight_failure.ok()) result = flight_failure;
  if (!result.ok()) flight_failure = result;
  if (sent.empty()) flight_failure = absl::OkStatus();
  {
    absl::MutexLock lock(&mu_);
    if (!result.ok()) failure_ = result;
    ++stats_.commits;
    stats_.batches += s.group.size();
    if (!result.ok()) ++stats_.failed_commits;
    stats_.total_commit_time += took;
    stats_.max_commit_time = std::max(stats_.max_commit_time, took);
    ++stats_.commit_time_buckets[DurationBucket(took, GroupCommitStats::kBuckets)];
  }
  for (Pending& p : s.group) {
    if (p.done) p.done(result);
  }
}

}  // namespace paceline::store
