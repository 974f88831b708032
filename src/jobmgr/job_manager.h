#pragma once
// JobManager: the jobs and tasks of the cluster and the goal-state engine that drives every
// task from its actual state to its goal. Pure and single-threaded: it takes `now` and returns
// Effects; it never touches the network, the disk or the wall clock. The master applies the
// Effects (store first, then the resource manager, then agents); `paceline sim` applies them to
// simulated hosts.
//
// The caller's side of the contract:
//   1. Every call fills `fx`. Commit fx.batch durably BEFORE acting on fx.launches / fx.kills
//      and before answering the client (durable before acknowledged).
//   2. fx.enqueue: tasks now PENDING and ready to be admitted (their backoff, if any, is over).
//      fx.withdraw: PENDING/READY tasks the resource manager must forget (not placed).
//      fx.release: tasks whose admitted resources are free again.
//   3. Report what happens: OnAdmitted, OnPlaced (host chosen: the task becomes LAUNCHING and a
//      launch is emitted), OnStatus (from agents), OnHostLost; call Tick regularly for backoff
//      expiry and max_running_time deadlines (timer heaps: no scan of all tasks).
//
// Task life (see common/task_state.h for the diagram): PENDING → READY → PLACED → LAUNCHING →
// RUNNING → SUCCEEDED | FAILED | KILLED | LOST; a kill moves live tasks to KILLING (pending
// ones straight to KILLED); preemption to PREEMPTING, then back to PENDING as a new run.
// Restarts follow jobmgr/restart_policy.h; each restart is a new run (run number + 1).
//
// Thread-safety: single-threaded; not thread-safe.

#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "jobmgr/job.h"
#include "records/records.h"

namespace paceline::jobmgr {

struct LaunchCommand {
  RunId run;
  std::string host;
};

struct KillCommand {
  RunId run;
  std::string host;
  absl::Duration grace;
  TaskReason reason;
};

struct Effects {
  records::WriteBatch batch;
  std::vector<TaskId> enqueue;
  std::vector<TaskId> withdraw;
  std::vector<TaskId> release;
  std::vector<LaunchCommand> launches;
  std::vector<KillCommand> kills;
};

// What an agent reported about one run.
struct StatusReport {
  RunId run;
  std::string host;                       // the host that reported
  TaskState state = TaskState::kRunning;  // RUNNING or a terminal state
  int32_t exit_code = -1;
  int32_t signal = 0;
  TaskReason reason = TaskReason::kNone;  // kOomKilled, kLaunchFailed, ... when known
  std::string message;
};

class JobManager {
 public:
  JobManager() = default;

  // Creates a job in `pool` (validated by the caller). Its instances become PENDING.
  absl::StatusOr<JobId> CreateJob(JobSpec spec, std::string pool, absl::Time now, Effects& fx);
  // Kills every live task of the job (PENDING/READY: at once; others: KILLING, then a kill
  // command with the task's kill_grace). NOT_FOUND for an unknown job.
  absl::Status KillJob(JobId id, absl::Time now, Effects& fx);

  // Kills one instance (KILLED_BY_USER); it stays KILLED. NOT_FOUND for an unknown task.
  absl::Status KillInstance(TaskId task, absl::Time now, Effects& fx);
  // Starts a new run of each instance: a live run is killed first (with its kill_grace) and
  // the new run starts when it has ended; an ended one starts again at once. A killed job
  // wants to run again. NOT_FOUND for an unknown job, INVALID_ARGUMENT for an instance out of
  // range (nothing changes then).
  absl::Status RestartInstances(JobId id, const std::vector<uint32_t>& instances, absl::Time now,
                                Effects& fx);
  // Forgets a job whose tasks have all ended, with its tasks and events (FAILED_PRECONDITION
  // while any task is live: kill it first).
  absl::Status DeleteJob(JobId id, Effects& fx);

  void OnAdmitted(TaskId task, absl::Time now, Effects& fx);
  // The placement engine chose `host`: PLACED, then LAUNCHING with a store write and a launch.
  void OnPlaced(TaskId task, const std::string& host, absl::Time now, Effects& fx);
  void OnStatus(const StatusReport& report, absl::Time now, Effects& fx);
  // Preempts a task (from the resource manager; `reason` kHostDraining or kRevoked from the
  // scheduler): PREEMPTING and a kill, or straight back to PENDING when it had not been placed
  // yet. `why` is the message of the PREEMPTING event and of the KILLED event that ends the run;
  // the task then runs again at once (no backoff).
  void Preempt(TaskId task, const std::string& why, absl::Time now, Effects& fx,
               TaskReason reason = TaskReason::kPreempted);
  // Stops one instance for good (reason e.g. kScaledDown): a live run is killed with its grace
  // and not restarted. Nothing happens to an instance that has ended.
  void StopInstance(TaskId task, TaskReason reason, absl::Time now, Effects& fx);
  // Stateful: forgets where an instance's volume is, so that it may start on another host with
  // an empty volume (the old one stays on its host). FAILED_PRECONDITION while it runs there.
  absl::Status ReleaseVolume(TaskId task, absl::Time now, Effects& fx);
  // Daemon jobs: a new run of an ended instance now, or `n` more instances (PENDING, enqueued).
  void RerunInstance(TaskId task, absl::Time now, Effects& fx);
  void AddInstances(JobId id, uint32_t n, absl::Time now, Effects& fx);
  // Every live task on `host` is LOST (and restarted per policy).
  void OnHostLost(const std::string& host, absl::Time now, Effects& fx);
  // Backoff expiries, max_running_time deadlines and rolling-update progress up to `now`.
  void Tick(absl::Time now, Effects& fx);

  // --- rolling updates (job_manager_update.cc) ---
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
  struct UpdateRequest {
    JobSpec spec;
    uint64_t expected_version = 0;  // the version the update replaces (stale: ABORTED)
    UpdateSpec options;
    bool paused = false;           // start paused
    bool override_active = false;  // abort an update in flight instead of refusing
  };
  // Starts an update; returns its id. INVALID_ARGUMENT when the spec changes the job's type,
  // ABORTED for a stale version, FAILED_PRECONDITION for a killed job or while another update
  // is in flight (unless override_active), NOT_FOUND for an unknown job.
  absl::StatusOr<uint64_t> StartUpdate(JobId id, UpdateRequest req, absl::Time now, Effects& fx);
  // Pause stops starting new instances (those in flight finish); resume goes on; abort stops
  // the update where it is. FAILED_PRECONDITION when the job has no update in flight.
  absl::Status PauseUpdate(JobId id, bool paused, absl::Time now, Effects& fx);
  absl::Status AbortUpdate(JobId id, absl::Time now, Effects& fx);
  // Rolls back to `version` (0: the one before the current) with an update to a copy of it.
  absl::StatusOr<uint64_t> Rollback(JobId id, uint64_t version, UpdateSpec options, absl::Time now,
                                    Effects& fx);

  // Rebuilds jobs and tasks from the store after a restart. PENDING tasks whose backoff is
  // over go to fx.enqueue; LAUNCHING/RUNNING/KILLING tasks wait for their agents to report.
  absl::Status Restore(const records::StoreContents& contents, absl::Time now, Effects& fx);

  // The runs this master believes may have a process on `host` (LAUNCHING, RUNNING,
  // PREEMPTING, KILLING). O(tasks): for host registration, not for hot paths.
  std::vector<RunId> LiveRunsOnHost(const std::string& host) const;

  const Job* GetJob(JobId id) const;
  std::vector<const Job*> ListJobs() const;  // by id
  // The jobs with an id above `after`, by id, until `fn` returns false: O(visited), for paging.
  template <typename Fn>
  void ForEachJobAfter(JobId after, Fn fn) const {
    for (auto it = ids_.upper_bound(after); it != ids_.end(); ++it) {
      if (!fn(*GetJob(*it))) return;
    }
  }
  const std::string& HostName(uint32_t index) const { return hosts_[index]; }

 private:
  struct Timer {
    absl::Time at;
    RunId run;
    friend bool operator>(const Timer& a, const Timer& b) { return a.at > b.at; }
  };
  using TimerHeap = std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>>;

  Job* FindJob(JobId id);
  uint32_t InternHost(const std::string& host);
  // Moves a task to `to`, records the event, and writes the task record when `persist`.
  void Transition(Job& job, uint32_t instance, TaskState to, TaskReason reason,
                  const std::string& message, absl::Time now, Effects& fx, bool persist);
  // A run ended in terminal state `ended`: decide restart, release resources.
  void EndRun(Job& job, uint32_t instance, TaskState ended, TaskReason reason,
              const std::string& message, absl::Time now, Effects& fx);
  void StartNewRun(Job& job, uint32_t instance, absl::Time not_before, absl::Time now, Effects& fx);
  void KillTask(Job& job, uint32_t instance, TaskReason reason, absl::Time now, Effects& fx);
  records::TaskRecord Record(const Job& job, uint32_t instance, const std::string& message) const;
  // Update steps (job_manager_update.cc).
  // The job, or NOT_FOUND / FAILED_PRECONDITION when it has no update in flight.
  absl::StatusOr<Job*> JobWithActiveUpdate(JobId id);
  void ProgressUpdate(Job& job, absl::Time now, Effects& fx);
  void BeginEntry(Job& job, records::UpdateRecord& u, size_t entry, absl::Time now, Effects& fx);
  char CheckEntry(const Job& job, const records::UpdateRecord& u, size_t entry,
                  absl::Time now) const;
  void StartRollingBack(Job& job, records::UpdateRecord& u, absl::Time now, Effects& fx);
  void FinishUpdate(Job& job, records::UpdateRecord& u, records::UpdateState end, absl::Time now,
                    Effects& fx);
  // A new current version `version` of `job` with `spec`; instances whose task does not change
  // move to it at once. Returns the plan.
  std::vector<uint32_t> AdoptVersion(Job& job, std::shared_ptr<const JobSpec> spec, absl::Time now,
                                     Effects& fx);

  // The tasks whose current run is on host `h` (index in hosts_), so that a host's runs are
  // found without scanning every task: a task is appended when a run is placed (or restored)
  // there, and entries of tasks that moved on are dropped when the list is read or has doubled
  // since it was last compacted (amortised O(1) per placement).
  void NoteOnHost(uint32_t h, TaskId task);
  const std::vector<TaskId>& TasksOnHost(uint32_t h) const;  // compacts; t.host == h for each
  void CompactHost(uint32_t h) const;

  absl::flat_hash_map<JobId, std::unique_ptr<Job>> jobs_;
  absl::btree_set<JobId> ids_;  // the keys of jobs_, in order
  uint64_t next_job_id_ = 1;
  std::vector<std::string> hosts_;
  absl::flat_hash_map<std::string, uint32_t> host_index_;
  mutable std::vector<std::vector<TaskId>> on_host_;  // by host index
  mutable std::vector<uint32_t> on_host_compacted_;   // its size after the last compaction
  TimerHeap backoff_timers_;                          // PENDING runs waiting for their backoff
  TimerHeap deadline_timers_;                         // RUNNING runs with a max_running_time
  std::vector<JobId> updating_;                       // jobs with an update in flight
  // Why each PREEMPTING task is being preempted, until its run ends (soft: not stored).
  absl::flat_hash_map<TaskId, std::string> preempt_why_;
};

}  // namespace paceline::jobmgr
