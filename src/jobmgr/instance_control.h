#pragma once
// InstanceControl: the commands on single instances of a job — kill, restart, stop, preempt, run
// again, add, release a stateful instance's volume. Part of the JobManager
// (`JobManager::instances()`): it finds jobs in the JobTable, names hosts with HostNames and
// drives tasks through the TaskLifecycle it is given; every command fills `fx` under the
// JobManager's contract (job_manager.h): commit fx.batch before acting on its launches and
// kills.
//
// Callers: the job API (through scheduler::JobControl), host maintenance and daemon fan-out
// (hostmgr), the resource manager's preemptions and the reclaim of revocable work (scheduler).
//
// Thread-safety: single-threaded, as the JobManager.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "jobmgr/effects.h"
#include "jobmgr/host_names.h"
#include "jobmgr/job_table.h"
#include "jobmgr/reasons.h"
#include "jobmgr/task_lifecycle.h"

namespace paceline::jobmgr {

class InstanceControl {
 public:
  InstanceControl(JobTable& jobs, const HostNames& hosts, TaskLifecycle& life)
      : jobs_(jobs), hosts_(hosts), life_(life) {}

  // Kills one instance (KILLED_BY_USER); it stays KILLED. NOT_FOUND for an unknown task.
  absl::Status Kill(TaskId task, absl::Time now, Effects& fx);
  // Starts a new run of each instance: a live run is killed first (with its kill_grace) and
  // the new run starts when it has ended; an ended one starts again at once. A killed job
  // wants to run again. NOT_FOUND for an unknown job, INVALID_ARGUMENT for an instance out of
  // range (nothing changes then).
  absl::Status Restart(JobId id, const std::vector<uint32_t>& instances, absl::Time now,
                       Effects& fx);
  // Stops one instance for good (reason e.g. kScaledDown): a live run is killed with its grace
  // and not restarted. Nothing happens to an instance that has ended.
  void Stop(TaskId task, TaskReason reason, absl::Time now, Effects& fx);
  // Preempts a task (from the resource manager; `reason` kHostDraining or kRevoked from the
  // scheduler): PREEMPTING and a kill, or straight back to PENDING when it had not been placed
  // yet. `why` is the message of the PREEMPTING event and of the KILLED event that ends the run;
  // the task then runs again at once (no backoff).
  void Preempt(TaskId task, const std::string& why, absl::Time now, Effects& fx,
               TaskReason reason = TaskReason::kPreempted);
  // Stateful: forgets where an instance's volume is, so that it may start on another host with
  // an empty volume (the old one stays on its host). FAILED_PRECONDITION while it runs there.
  absl::Status ReleaseVolume(TaskId task, absl::Time now, Effects& fx);
  // Daemon jobs: a new run of an ended instance now, or `n` more instances (PENDING, enqueued).
  void Rerun(TaskId task, absl::Time now, Effects& fx);
  void Add(JobId id, uint32_t n, absl::Time now, Effects& fx);

 private:
  JobTable& jobs_;
  const HostNames& hosts_;
  TaskLifecycle& life_;
};

}  // namespace paceline::jobmgr
