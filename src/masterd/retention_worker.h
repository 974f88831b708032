#pragma once
// RetentionWorker: retires the finished jobs whose retention window is over (the core's
// Retention index, scheduler/retention.h) — archives them, then removes them from the store —
// in bounded batches on a thread of its own, so that the live store does not grow without
// bound and the scheduler never waits for it.
//
// One batch (RunOnce):
//   1. asks the core (one read on the loop) for up to `batch_jobs` expired jobs, oldest first;
//   2. reads them from the store (on the store's writer thread) until `batch_tasks` tasks;
//   3. appends them to the archive and fsyncs (archive/archive_writer.h);
//   4. deletes those still expired through the core (JobControl::PurgeExpired), one commit.
// A job archived but not deleted (the master stopped, or it ran again in between) stays in the
// store and is archived again later; readers keep its later line. A failed archive write (a
// full disk) deletes nothing; the worker tries again after `period`.
//
// While there is a backlog the worker runs a batch every `pause`; otherwise it looks every
// `period`. Every `stats_period` it samples the store's rows and size (Store::Stats) for
// /metrics, on a connection of its own when it has one (`stats`). Only a master that serves (leads)
// retires jobs.
//
// Thread-safety: Start/Stop from one thread; Facts() from any.

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "api/metrics.h"
#include "archive/archive_writer.h"
#include "masterd/cluster.h"

namespace paceline::masterd {

struct RetentionOptions {
  std::string archive_dir;  // required
  size_t batch_jobs = 200;
  size_t batch_tasks = 20'000;
  absl::Duration period = absl::Seconds(10);
  absl::Duration pause = absl::Milliseconds(50);
  absl::Duration stats_period = absl::Seconds(30);
  // The store's rows and size from a connection of the worker's own (counting rows takes a
  // while on a big table: it must not hold the writer thread). Unset: through the writer.
  std::function<absl::StatusOr<store::StoreStats>()> stats;
};

// What one batch of retirement uses of a master: the worker gives its Cluster's; the retention
// benchmark gives a core and a store driven on a simulated clock.
struct RetirePorts {
  // The core's oldest expired jobs, at most `limit` (a read on the loop).
  std::function<std::vector<JobId>(size_t limit)> expired;
  // Runs a read of the store (on its writer thread).
  std::function<void(const std::function<void(store::Store&)>&)> read_store;
  // JobControl::PurgeExpired of those jobs, committed; the jobs it deleted.
  std::function<absl::StatusOr<std::vector<JobId>>(const std::vector<JobId>&)> purge;
};
struct RetiredBatch {
  size_t jobs = 0;  // archived and deleted
  size_t tasks = 0;
  int64_t bytes = 0;  // written to the archive
};
// Steps 1 to 4 above, once.
absl::StatusOr<RetiredBatch> RetireBatch(const RetirePorts& ports, archive::ArchiveWriter& writer,
                                         size_t batch_jobs, size_t batch_tasks,
                                         absl::Time archived_at);

class RetentionWorker {
 public:
  RetentionWorker(Cluster* cluster, RetentionOptions options);
  ~RetentionWorker() { Stop(); }

  void Start();
  void Stop();
  // One batch now, on the caller's thread (the worker's loop, tests, the benchmark): the number
  // of jobs retired.
  absl::StatusOr<size_t> RunOnce();
  // Samples the store's rows and size now.
  void SampleStore();
  api::RetentionFacts Facts() const;

 private:
  void Loop();

  Cluster* const cluster_;
  const RetentionOptions options_;
  archive::ArchiveWriter writer_;
  absl::Notification stop_;
  std::thread thread_;
  mutable absl::Mutex mu_;
  api::RetentionFacts facts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace paceline::masterd
