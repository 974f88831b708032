#pragma once
// Retention: which finished jobs have outlived their pool's retention window, oldest first.
//
// A job is finished when none of its instances is live and it will not start one by itself: a
// batch job whose tasks all ended, or any job killed by its user whose tasks all ended (a
// daemon job that still wants to run is never finished: new hosts add instances to it; nor is
// a job with no instances that still wants to run, nor one with an update in flight, nor a
// run of a cron job, which its cron job's keep limits purge: cron_runs.h). It
// finished at the moment the last of its instances ended. It expires `window` after that,
// where `window` is its pool's retain_terminal, inherited down the pool tree, and at the root
// the master's --retain-terminal; a job whose window is forever never expires.
//
// The core keeps this index up to date as its jobs change (Absorber::Absorb calls Update
// for every job a batch touched, Forget for every job it deleted); the master's retention
// worker asks for the expired ones in bounded batches, archives them, then deletes them through
// JobControl::PurgeExpired (docs/operations.md, "Retention and archive").
//
// Cost: Update and Forget O(log n); Expired O(k log n) for k jobs returned; Rewindow
// O(n log n) over the finished jobs (pool retention changes are rare).
//
// Thread-safety: single-threaded, part of the core.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "jobmgr/job.h"

namespace paceline::scheduler {

class Retention {
 public:
  // The window of a pool's finished jobs (InfiniteDuration: forever).
  using WindowFn = std::function<absl::Duration(const std::string& pool)>;

  explicit Retention(WindowFn window) : window_(std::move(window)) {}

  // Whether `job` counts as finished (see above).
  static bool Finished(const jobmgr::Job& job);
  // When a finished job ended: the latest end of its instances' current runs, or its creation
  // when none ran.
  static absl::Time FinishedAt(const jobmgr::Job& job);

  // Notes a job that may have changed at `now`: one that has just finished is indexed as
  // finished at `now` (or at `finished_at` when given, after a restart); one that runs again
  // leaves the index.
  void Update(const jobmgr::Job& job, absl::Time now);
  void Restore(const jobmgr::Job& job) { Update(job, FinishedAt(job)); }
  void Forget(JobId job);
  // Computes every finished job's expiry again (after a pool's retain_terminal changed).
  void Rewindow();

  // The finished jobs whose expiry is at or before `now`, earliest first, at most `limit`.
  std::vector<JobId> Expired(absl::Time now, size_t limit) const;
  bool IsExpired(JobId job, absl::Time now) const;
  // How far behind the archive is: `now` minus the earliest expiry, when that is past; zero
  // otherwise.
  absl::Duration Lag(absl::Time now) const;
  size_t finished() const { return entries_.size(); }

 private:
  struct Entry {
    std::string pool;
    absl::Time finished_at;
    absl::Time expires_at;
  };
  void Index(JobId job, Entry e);

  WindowFn window_;
  absl::flat_hash_map<JobId, Entry> entries_;
  absl::btree_set<std::pair<absl::Time, JobId>> by_expiry_;  // expiries before InfiniteFuture
};

}  // namespace paceline::scheduler
