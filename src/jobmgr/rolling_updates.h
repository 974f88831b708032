#pragma once
// RollingUpdates: moves a job from one spec version to the next in batches. Part of the
// JobManager (`JobManager::updates()`): it finds jobs in the JobTable and drives their tasks
// through the TaskLifecycle it is given; it keeps the jobs with an update in flight and
// advances them on every JobManager::Tick (ProgressAll).
//
// An update replaces the job's spec with a new version and moves the instances over in
// batches: at most `batch_size` instances are in flight (being removed, restarted on the new
// version, or started) at once. An instance is done when its new run is RUNNING and healthy
// (or RUNNING, without a health check) for `min_healthy_time`; batch instances when they have
// started. It has failed when its new runs failed more than its restart policy's
// max_failures. More than `max_failures` failed instances fail the update, which then rolls
// back (as a new version with the old spec) when `rollback_on_failure` is set.
//
//   ROLLING_FORWARD ──all done──> SUCCEEDED
//        │ too many failures ──> FAILED, or ROLLING_BACK ──all done──> ROLLED_BACK
//        └─ abort / a newer update that overrides ──> ABORTED
//
// Every call fills `fx` under the JobManager's contract (job_manager.h).
// Thread-safety: single-threaded, as the JobManager.

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "jobmgr/effects.h"
#include "jobmgr/job_table.h"
#include "jobmgr/mutable_job.h"
#include "jobmgr/task_lifecycle.h"
#include "records/records.h"
#include "spec/job_spec.h"

namespace paceline::jobmgr {

struct UpdateRequest {
  JobSpec spec;
  uint64_t expected_version = 0;  // the version the update replaces (stale: ABORTED)
  UpdateSpec options;
  bool paused = false;           // start paused
  bool override_active = false;  // abort an update in flight instead of refusing
};

class RollingUpdates {
 public:
  RollingUpdates(JobTable& jobs, TaskLifecycle& life) : jobs_(jobs), life_(life) {}
  RollingUpdates(const RollingUpdates&) = delete;
  RollingUpdates& operator=(const RollingUpdates&) = delete;

  // Starts an update; returns its id. INVALID_ARGUMENT when the spec changes the job's type or
  // its depends_on (set at creation only, so that no update can make a cycle),
  // ABORTED for a stale version, FAILED_PRECONDITION for a killed job or while another update
  // is in flight (unless override_active), NOT_FOUND for an unknown job.
  absl::StatusOr<uint64_t> Start(JobId id, UpdateRequest req, absl::Time now, Effects& fx);
  // Pause stops starting new instances (those in flight finish); resume goes on; abort stops
  // the update where it is. FAILED_PRECONDITION when the job has no update in flight.
  absl::Status Pause(JobId id, bool paused, absl::Time now, Effects& fx);
  absl::Status Abort(JobId id, absl::Time now, Effects& fx);
  // Rolls back to `version` (0: the one before the current) with an update to a copy of it.
  absl::StatusOr<uint64_t> Rollback(JobId id, uint64_t version, UpdateSpec options, absl::Time now,
                                    Effects& fx);

  // Advances every update in flight (the JobManager's Tick).
  void ProgressAll(absl::Time now, Effects& fx);
  // A job restored with an update in flight (the JobManager's Restore).
  void Track(JobId id);

 private:
  // The job, or NOT_FOUND / FAILED_PRECONDITION when it has no update in flight.
  absl::StatusOr<MutableJob*> JobWithActiveUpdate(JobId id);
  void Progress(MutableJob& job, absl::Time now, Effects& fx);
  void BeginEntry(MutableJob& job, records::UpdateRecord& u, size_t entry, absl::Time now,
                  Effects& fx);
  records::EntryProgress CheckEntry(const Job& job, const records::UpdateRecord& u, size_t entry,
                                    absl::Time now) const;
  void StartRollingBack(MutableJob& job, records::UpdateRecord& u, absl::Time now, Effects& fx);
  void FinishUpdate(MutableJob& job, records::UpdateRecord& u, records::UpdateState end,
                    absl::Time now, Effects& fx);
  // A new current version `version` of `job` with `spec`; instances whose task does not change
  // move to it at once. Returns the plan.
  std::vector<uint32_t> AdoptVersion(MutableJob& job, std::shared_ptr<const JobSpec> spec,
                                     absl::Time now, Effects& fx);

  JobTable& jobs_;
  TaskLifecycle& life_;
  std::vector<JobId> updating_;  // jobs with an update in flight
};

}  // namespace paceline::jobmgr
