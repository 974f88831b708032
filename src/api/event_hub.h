#pragma once
// EventHub: hands job and task events to the watchers of JobService.Watch, once they are
// durable. The cluster publishes what each committed batch changed (on its loop thread); each
// watcher owns a bounded queue that its gRPC handler drains on its own thread.
//
// The loop never waits for a client: a watcher whose queue is full is closed with
// RESOURCE_EXHAUSTED and must read the state again before watching again. Publishing costs
// nothing while nobody watches (watching() is one atomic load).
//
//   EventHub hub;
//   std::shared_ptr<Watcher> w = hub.Subscribe(/*job=*/0);   // every job
//   std::vector<v1::WatchEvent> events = w->Next(absl::Milliseconds(500));
//   ... hub.Unsubscribe(w.get());
//
// Thread-safety: every method is thread-safe.

#include <atomic>
#include <deque>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "paceline/v1/job.pb.h"

namespace paceline::api {

class Watcher {
 public:
  Watcher(uint64_t job, size_t capacity) : job_(job), capacity_(capacity) {}

  uint64_t job() const { return job_; }  // 0 = every job
  // Waits up to `timeout` for events and takes all that are queued (possibly none).
  std::vector<v1::WatchEvent> Next(absl::Duration timeout);
  // OK while the watcher is open; why it was closed otherwise. Queued events are still
  // returned by Next after a close.
  absl::Status status() const;

 private:
  friend class EventHub;
  void Push(const v1::WatchEvent& event);
  void Close(absl::Status why);

  const uint64_t job_;
  const size_t capacity_;
  mutable absl::Mutex mu_;
  std::deque<v1::WatchEvent> queue_ ABSL_GUARDED_BY(mu_);
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

class EventHub {
 public:
  static constexpr size_t kDefaultCapacity = 100000;

  std::shared_ptr<Watcher> Subscribe(uint64_t job, size_t capacity = kDefaultCapacity);
  void Unsubscribe(const Watcher* watcher);
  bool watching() const { return watchers_count_.load(std::memory_order_relaxed) > 0; }
  // Queues each event on every open watcher that wants its job.
  void Publish(const std::vector<v1::WatchEvent>& events);
  // Closes every watcher (the master is stopping).
  void CloseAll(const absl::Status& why);

 private:
  absl::Mutex mu_;
  std::vector<std::shared_ptr<Watcher>> watchers_ ABSL_GUARDED_BY(mu_);
  std::atomic<size_t> watchers_count_{0};
};

}  // namespace paceline::api
