#pragma once
// JobControl: the jobs' entry points into the scheduler core (for JobService, TaskService and
// UpdateService): create, kill, restart, delete, release a volume, and rolling updates. Each call
// drives the job manager (jobmgr/job_manager.h has the semantics and the errors) and applies its
// effects to the resource manager and placement; the changes are in `out` (commit its batch
// before answering). CreateJob and UpdateJob first check that the pool is a leaf and that one
// gang of the spec could ever fit the pool's limit (FAILED_PRECONDITION otherwise).
//
// It works on the core's parts it is given: the job manager it drives, the resource manager's
// pool tree (read), the retention index (read), the Absorber that applies the effects, the
// HostUpkeep for daemon jobs, and what the core keeps on the side about jobs (WaitReasons,
// ShapeCache), which it drops when a job is deleted; CronRuns, read for DeleteJob.
//
// Thread-safety: single-threaded, like the core it belongs to (SchedulerCore::job_control()).

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "jobmgr/job_manager.h"
#include "resmgr/resource_manager.h"
#include "scheduler/absorber.h"
#include "scheduler/actions.h"
#include "scheduler/cron_runs.h"
#include "scheduler/host_upkeep.h"
#include "scheduler/retention.h"
#include "scheduler/shape_cache.h"
#include "scheduler/wait_reasons.h"
#include "spec/job_spec.h"

namespace paceline::scheduler {

class JobControl {
 public:
  JobControl(jobmgr::JobManager& jobs, const resmgr::ResourceManager& rm,
             const Retention& retention, Absorber& absorber, HostUpkeep& upkeep, WaitReasons& why,
             ShapeCache& shapes, const CronRuns& cron)
      : jobs_(jobs),
        rm_(rm),
        retention_(retention),
        absorber_(absorber),
        upkeep_(upkeep),
        why_(why),
        shapes_(shapes),
        cron_(cron) {}

  absl::StatusOr<JobId> CreateJob(JobSpec spec, const std::string& pool, absl::Time now,
                                  Actions& out, jobmgr::JobOwner owner = {});
  absl::Status KillJob(JobId id, absl::Time now, Actions& out);
  absl::Status KillInstance(TaskId task, absl::Time now, Actions& out);
  absl::Status RestartInstances(JobId id, const std::vector<uint32_t>& instances, absl::Time now,
                                Actions& out);
  // FAILED_PRECONDITION for the newest run of a cron job, which records its last tick.
  absl::Status DeleteJob(JobId id, Actions& out);
  // Stateful: let a waiting instance start elsewhere with an empty volume.
  absl::Status ReleaseVolume(TaskId task, absl::Time now, Actions& out);
  // Retention (retention.h): deletes those of `jobs` that are still finished and expired at
  // `now` (the retention worker has archived them) and returns them; a job that ran again
  // meanwhile, or is gone, is skipped.
  std::vector<JobId> PurgeExpired(const std::vector<JobId>& jobs, absl::Time now, Actions& out);

  // Rolling updates. INVALID_ARGUMENT for an update that adds or removes `schedule`.
  absl::StatusOr<uint64_t> UpdateJob(JobId id, jobmgr::UpdateRequest req, absl::Time now,
                                     Actions& out);
  absl::Status PauseUpdate(JobId id, bool paused, absl::Time now, Actions& out);
  absl::Status AbortUpdate(JobId id, absl::Time now, Actions& out);
  absl::StatusOr<uint64_t> RollbackJob(JobId id, uint64_t version, UpdateSpec options,
                                       absl::Time now, Actions& out);

 private:
  // Runs one job manager command and, when it succeeds, absorbs its effects into `out`.
  template <typename Command>
  auto Run(absl::Time now, Actions& out, Command command);
  // FAILED_PRECONDITION when one gang of `spec` exceeds the pool's limit (could never run).
  absl::Status CheckGangFits(const JobSpec& spec, PoolId pool_id, const std::string& pool) const;
  // Drops what the core keeps on the side about deleted jobs: daemon entries, shapes, reasons.
  void ForgetJobs(const absl::flat_hash_set<JobId>& jobs);

  jobmgr::JobManager& jobs_;
  const resmgr::ResourceManager& rm_;
  const Retention& retention_;
  Absorber& absorber_;
  HostUpkeep& upkeep_;
  WaitReasons& why_;
  ShapeCache& shapes_;
  const CronRuns& cron_;
};

}  // namespace paceline::scheduler
