#pragma once
// Gangs: how the core hands a job's tasks to the resource manager — as gangs of
// sla.min_running_instances consecutive instances, aligned on multiples of the gang size
// (scheduler_core.h), each under a fresh gang id. A gang the resource manager refuses (it could
// never fit) gets the reason on each of its tasks (WaitReasons).
//
// Thread-safety: single-threaded, part of the core.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/ids.h"
#include "jobmgr/job_manager.h"
#include "resmgr/resource_manager.h"
#include "scheduler/wait_reasons.h"

namespace paceline::scheduler {

class Gangs {
 public:
  Gangs(const jobmgr::JobManager& jobs, resmgr::ResourceManager& rm, WaitReasons& why)
      : jobs_(jobs), rm_(rm), why_(why) {}

  // Queues `tasks` (grouped by job and instance, as the job manager lists them) as gangs.
  void Enqueue(const std::vector<TaskId>& tasks, absl::Time now);
  // Accounts `task` of `job` as running, a gang of one, without admission (after a restart);
  // the resource manager's answer (ALREADY_EXISTS: accounted already).
  absl::Status Adopt(const jobmgr::Job& job, TaskId task, absl::Time now);
  // The id the next gang gets.
  uint64_t next_id() const { return next_; }

 private:
  // The resource manager's request for `tasks` of one job, as gang `gid`.
  resmgr::GangRequest RequestOf(const jobmgr::Job& job, absl::Span<const TaskId> tasks,
                                uint64_t gid) const;

  const jobmgr::JobManager& jobs_;
  resmgr::ResourceManager& rm_;
  WaitReasons& why_;
  uint64_t next_ = 1;
};

}  // namespace paceline::scheduler
