#pragma once
// CronRuns: the cron jobs of the core (docs/specs.md "Cron jobs"). A cron job is a batch job
// with a `schedule`: a template that never runs itself (the Absorber never enqueues its tasks,
// which stay PENDING). At each of its ticks CronRuns decides with DecideCron (cron_policy.h)
// and applies the decision through JobControl: a run is a batch job of its own, made from the
// template without `schedule`, named "<name>-YYYYMMDDhhmm[ss]" (the tick in the schedule's
// zone), in the template's pool, by its owner, labelled with the cron job's id and the tick
// (spec/schedule_spec.h). Runs are kept by the cron job's keep_succeeded / keep_failed, not by
// the pool's retention window; the finished runs of a deleted cron job are deleted with it
// (its live runs once they end).
//
// Never twice: the last tick handled lives in memory and, after a restart or a failover, is
// rebuilt from the runs in the store (the newest run's tick label; the cron job's creation
// when it has none). A run and its label are one job record, committed in one batch, so a
// master killed at a tick either committed the run, and its successor sees the tick as
// handled, or did not, and its successor creates it. The newest run is therefore never
// purged, and JobControl::DeleteJob refuses to delete it (IsNewestRun). A tick skipped in
// memory (forbid, suspended) may be looked at again by a successor, which applies the same
// rules (and the starting deadline) to it.
//
// Cost per cycle: O(cron jobs) comparisons, plus the jobs created since the last cycle; a cron
// job is looked at closely only at its ticks, or when it has more finished runs than it keeps.
//
// Thread-safety: single-threaded, part of the core.

#include <optional>
#include <string>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "cron/cron_expression.h"
#include "jobmgr/job_manager.h"
#include "scheduler/actions.h"

namespace paceline::scheduler {

class JobControl;

class CronRuns {
 public:
  // `control` may still be under construction: it is used from Tick on.
  CronRuns(const jobmgr::JobManager& jobs, JobControl& control) : jobs_(jobs), control_(control) {}
  CronRuns(const CronRuns&) = delete;
  CronRuns& operator=(const CronRuns&) = delete;

  // Forgets everything and reads the cron jobs and their runs from the job manager (after
  // SchedulerCore::Restore).
  void Rebuild();
  // Creates, skips, replaces and purges the runs due at `now`.
  void Tick(absl::Time now, Actions& out);

  // A cron job's state in one line (its next tick, what its last tick did); empty for a job
  // that is not a live cron job.
  std::string Describe(JobId job) const;
  // Whether `job` is the run with the newest tick of an existing cron job.
  bool IsNewestRun(JobId job) const;
  // The last tick handled for cron job `job` (tests and descriptions).
  std::optional<absl::Time> Handled(JobId job) const;

 private:
  struct Template {
    absl::Time handled;
    uint64_t version = 0;  // the spec version expr, zone and error come from
    std::optional<cron::CronExpression> expr;
    absl::TimeZone zone;
    std::string error;  // why the schedule cannot tick (a zone missing on this master)
    std::optional<absl::Time> next;
    absl::btree_map<JobId, absl::Time> runs;  // run -> its tick
    std::string last;                         // what the last tick handled did
  };
  // Indexes the jobs created since the last call: cron jobs and runs.
  void Discover();
  // Reads the template's schedule again when its spec changed.
  void Refresh(const jobmgr::Job& job, Template& t);
  void Step(const jobmgr::Job& job, Template& t, absl::Time now, Actions& out);
  void CreateRun(const jobmgr::Job& job, Template& t, absl::Time tick, absl::Time now,
                 Actions& out);
  // Deletes the orphans (runs of deleted cron jobs) that have finished.
  void DropOrphans(Actions& out);

  const jobmgr::JobManager& jobs_;
  JobControl& control_;
  absl::btree_map<JobId, Template> templates_;
  absl::flat_hash_map<JobId, JobId> run_of_;  // run -> its cron job
  absl::btree_map<JobId, bool> orphans_;      // runs whose cron job was deleted
  JobId seen_{0};                             // jobs up to this one are indexed
};

}  // namespace paceline::scheduler
