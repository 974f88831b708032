#pragma once
// TaskLifecycle: the task primitives of the job manager — a task's move from one state to the
// next (with its event, and its record when it is durable), the end of a run and the restart
// policy's decision, a new run, a kill — and the timers that wake tasks up: restart backoffs
// and max_running_time deadlines (heaps: no scan of all tasks). The JobManager, InstanceControl
// and RollingUpdates drive tasks through it; every call fills `fx` under the JobManager's
// contract (job_manager.h).
//
// Thread-safety: single-threaded (part of the JobManager).

#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "jobmgr/effects.h"
#include "jobmgr/host_names.h"
#include "jobmgr/job_table.h"
#include "jobmgr/mutable_job.h"
#include "records/records.h"

namespace paceline::jobmgr {

class TaskLifecycle {
 public:
  TaskLifecycle(JobTable& jobs, const HostNames& hosts) : jobs_(jobs), hosts_(hosts) {}

  // Moves a task to `to`, records the event, and writes the task record when `persist`.
  void Transition(MutableJob& job, uint32_t instance, TaskState to, TaskReason reason,
                  const std::string& message, absl::Time now, Effects& fx, bool persist);
  // A run ended in terminal state `ended`: decide restart, release resources.
  void EndRun(MutableJob& job, uint32_t instance, TaskState ended, TaskReason reason,
              const std::string& message, absl::Time now, Effects& fx);
  // A run ended in terminal state `ended`, and its own restart policy is not asked: the caller
  // decides what follows (the gang failure policy, gang_restarts.h). Releases its resources.
  void StopRun(MutableJob& job, uint32_t instance, TaskState ended, TaskReason reason,
               const std::string& message, absl::Time now, Effects& fx);
  // A new run, PENDING: enqueued at once, or when its backoff `not_before` is over. `why`: the
  // message of its PENDING event when it has no backoff.
  void StartNewRun(MutableJob& job, uint32_t instance, absl::Time not_before, absl::Time now,
                   Effects& fx, const std::string& why = "");
  // PENDING/READY/PLACED: KILLED at once; LAUNCHING/RUNNING/PREEMPTING: KILLING and a kill.
  // `message`: the event's.
  void KillTask(MutableJob& job, uint32_t instance, TaskReason reason, absl::Time now, Effects& fx,
                const std::string& message = "");
  records::TaskRecord Record(const Job& job, uint32_t instance, const std::string& message) const;

  // Why a PREEMPTING task is being preempted, until its run ends (soft: not stored); empty when
  // not told.
  void NotePreempting(TaskId task, const std::string& why) { preempt_why_[task] = why; }
  std::string PreemptWhy(TaskId task) const;
  // A PENDING run waits for its backoff until `at`; a RUNNING run must end by `at`.
  void ArmBackoff(absl::Time at, RunId run) { backoff_timers_.push(Timer{at, run}); }
  void ArmDeadline(absl::Time at, RunId run) { deadline_timers_.push(Timer{at, run}); }
  // The timers due by `now`: backoffs over (enqueued), deadlines passed (killed).
  void FireTimers(absl::Time now, Effects& fx);
  // The jobs whose last live task ended since the last call, in order (a job restarted since
  // is live again: callers look at its state).
  std::vector<JobId> TakeEndedJobs() { return std::exchange(ended_jobs_, {}); }

 private:
  struct Timer {
    absl::Time at;
    RunId run;
    friend bool operator>(const Timer& a, const Timer& b) { return a.at > b.at; }
  };
  using TimerHeap = std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>>;

  JobTable& jobs_;
  const HostNames& hosts_;
  TimerHeap backoff_timers_;   // PENDING runs waiting for their backoff
  TimerHeap deadline_timers_;  // RUNNING runs with a max_running_time
  absl::flat_hash_map<TaskId, std::string> preempt_why_;
  std::vector<JobId> ended_jobs_;
};

}  // namespace paceline::jobmgr
