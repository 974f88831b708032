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
#include "jobmgr/instance_control.h"
#include "jobmgr/job.h"
#include "jobmgr/rolling_updates.h"
#include "records/records.h"

namespace paceline::jobmgr {

// The placement engine's decision for one run, as one value from the engine to the launch
// message: the host, the named ports it holds there and the GPU devices it was given.
struct Placement {
  std::string host;
  std::vector<std::pair<std::string, uint32_t>> ports;  // port name -> host port
  std::vector<uint32_t> gpu_devices;                    // device indexes on the host
};

struct LaunchCommand {
  RunId run;
  Placement placed;
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
  JobManager() : instances_(*this), updates_(*this) {}
  JobManager(const JobManager&) = delete;
  JobManager& operator=(const JobManager&) = delete;

  // The commands on single instances (instance_control.h) and the rolling updates
  // (rolling_updates.h).
  InstanceControl& instances() { return instances_; }
  RollingUpdates& updates() { return updates_; }

  // Creates a job in `pool` (validated by the caller). Its instances become PENDING.
  // `owner`: the submitting user and its group (empty without authentication).
  absl::StatusOr<JobId> CreateJob(JobSpec spec, std::string pool, absl::Time now, Effects& fx,
                                  JobOwner owner = {});
  // Kills every live task of the job (PENDING/READY: at once; others: KILLING, then a kill
  // command with the task's kill_grace). NOT_FOUND for an unknown job.
  absl::Status KillJob(JobId id, absl::Time now, Effects& fx);

  // Forgets a job whose tasks have all ended, with its tasks and events (FAILED_PRECONDITION
  // while any task is live: kill it first).
  absl::Status DeleteJob(JobId id, Effects& fx);

  void OnAdmitted(TaskId task, absl::Time now, Effects& fx);
  // The placement engine chose a host: PLACED, then LAUNCHING with a store write and a launch
  // that carries the placement.
  void OnPlaced(TaskId task, Placement placed, absl::Time now, Effects& fx);
  void OnStatus(const StatusReport& report, absl::Time now, Effects& fx);
  // Every live task on `host` is LOST (and restarted per policy).
  void OnHostLost(const std::string& host, absl::Time now, Effects& fx);
  // Backoff expiries, max_running_time deadlines and rolling-update progress up to `now`.
  void Tick(absl::Time now, Effects& fx);

  // Rebuilds jobs and tasks from the store after a restart: the tasks of `contents`, then those
  // `more` hands over (a streaming load's batches; any order). PENDING tasks whose backoff is
  // over go to fx.enqueue; LAUNCHING/RUNNING/KILLING tasks wait for their agents to report.
  absl::Status Restore(const records::StoreContents& contents, absl::Time now, Effects& fx,
                       const records::TaskBatches& more = nullptr);

  // The runs this master believes may have a process on `host` (LAUNCHING, RUNNING,
  // PREEMPTING, KILLING). O(tasks): for host registration, not for hot paths.
  std::vector<RunId> LiveRunsOnHost(const std::string& host) const;

  const Job* GetJob(JobId id) const;
  // The jobs with an id above `after`, by id, until `fn` returns false: O(visited), for paging.
  template <typename Fn>
  void ForEachJobAfter(JobId after, Fn fn) const {
    for (auto it = ids_.upper_bound(after); it != ids_.end(); ++it) {
      if (!fn(*GetJob(*it))) return;
    }
  }
  const std::string& HostName(uint32_t index) const { return hosts_[index]; }

 private:
  friend class InstanceControl;
  friend class RollingUpdates;

  struct Timer {
    absl::Time at;
    RunId run;
    friend bool operator>(const Timer& a, const Timer& b) { return a.at > b.at; }
  };
  using TimerHeap = std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>>;

  Job* FindJob(JobId id);
  uint32_t InternHost(const std::string& host);
  // Restore's steps: the stored tasks (DATA_LOSS for one of no stored job), then what the
  // restored states ask for (PENDING runs queued or waiting for their backoff, kills).
  absl::Status RestoreTasks(const std::vector<records::TaskRecord>& tasks);
  void FinishRestore(absl::Time now, Effects& fx);
  // Moves a task to `to`, records the event, and writes the task record when `persist`.
  void Transition(Job& job, uint32_t instance, TaskState to, TaskReason reason,
                  const std::string& message, absl::Time now, Effects& fx, bool persist);
  // A run ended in terminal state `ended`: decide restart, release resources.
  void EndRun(Job& job, uint32_t instance, TaskState ended, TaskReason reason,
              const std::string& message, absl::Time now, Effects& fx);
  void StartNewRun(Job& job, uint32_t instance, absl::Time not_before, absl::Time now, Effects& fx);
  void KillTask(Job& job, uint32_t instance, TaskReason reason, absl::Time now, Effects& fx);
  records::TaskRecord Record(const Job& job, uint32_t instance, const std::string& message) const;
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
  // Why each PREEMPTING task is being preempted, until its run ends (soft: not stored).
  absl::flat_hash_map<TaskId, std::string> preempt_why_;
  InstanceControl instances_;
  RollingUpdates updates_;
};

}  // namespace paceline::jobmgr
