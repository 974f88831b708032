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
// Restarts follow jobmgr/restart_policy.h; each restart is a new run (run number + 1). A gang
// with job.gang.restart: gang restarts together, and a job with completion: instance-0 ends with
// its instance 0 (jobmgr/gang_restarts.h).
//
// Its parts, each with its own state: the JobTable (the jobs, each a MutableJob that alone
// changes it; everyone else reads a Job), HostNames (hosts by index, and the tasks on each), the
// TaskLifecycle (the task primitives and the timers); InstanceControl, RollingUpdates and
// GangRestarts (what follows a run's end) are given the parts they use.
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
#include "absl/strings/string_view.h"
#include "jobmgr/dependencies.h"
#include "jobmgr/effects.h"
#include "jobmgr/gang_restarts.h"
#include "jobmgr/host_names.h"
#include "jobmgr/instance_control.h"
#include "jobmgr/job.h"
#include "jobmgr/job_table.h"
#include "jobmgr/rolling_updates.h"
#include "jobmgr/task_lifecycle.h"
#include "records/records.h"

namespace paceline::jobmgr {

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
  JobManager(const JobManager&) = delete;
  JobManager& operator=(const JobManager&) = delete;

  // The commands on single instances (instance_control.h) and the rolling updates
  // (rolling_updates.h).
  InstanceControl& instances() { return instances_; }
  RollingUpdates& updates() { return updates_; }

  // Creates a job in `pool` (validated by the caller). Its instances become PENDING; with
  // depends_on, they are held until the jobs it names have ended (dependencies.h), and the
  // entries are stored as job ids (dependency_names.h: NOT_FOUND for an unknown job).
  // `owner`: the submitting user and its group (empty without authentication).
  absl::StatusOr<JobId> CreateJob(JobSpec spec, std::string pool, absl::Time now, Effects& fx,
                                  JobOwner owner = {});
  // Kills every live task of the job (PENDING/READY: at once; others: KILLING, then a kill
  // command with the task's kill_grace). NOT_FOUND for an unknown job.
  absl::Status KillJob(JobId id, absl::Time now, Effects& fx);

  // Forgets a job whose tasks have all ended, with its tasks and events (FAILED_PRECONDITION
  // while any task is live: kill it first; or while a job is held waiting for it to end).
  absl::Status DeleteJob(JobId id, Effects& fx);

  // The resource manager admitted the task (READY); `note` goes into the task's event, e.g.
  // "backfilled ahead of gang 7" (docs/resource-manager.md "Backfill").
  void OnAdmitted(TaskId task, absl::Time now, Effects& fx, absl::string_view note = "");
  // The placement engine chose a host: PLACED, then LAUNCHING with a store write and a launch
  // that carries the placement.
  void OnPlaced(TaskId task, Placement placed, absl::Time now, Effects& fx);
  void OnStatus(const StatusReport& report, absl::Time now, Effects& fx);
  // Every live task on `host` is LOST (and restarted per policy).
  void OnHostLost(const std::string& host, absl::Time now, Effects& fx);
  // Backoff expiries, max_running_time deadlines, rolling-update progress and the jobs held for
  // jobs that ended, up to `now`.
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
    jobs_.ForEachAfter(after, fn);
  }
  const std::string& HostName(uint32_t index) const { return hosts_.Name(index); }

 private:
  // Restore's steps: the stored tasks (DATA_LOSS for one of no stored job), then what the
  // restored states ask for (PENDING runs queued or waiting for their backoff, kills).
  absl::Status RestoreTasks(const std::vector<records::TaskRecord>& tasks);
  void FinishRestore(absl::Time now, Effects& fx);

  // The parts, each with its own state, wired to the ones it uses.
  JobTable jobs_;
  HostNames hosts_{jobs_};
  TaskLifecycle life_{jobs_, hosts_};
  InstanceControl instances_{jobs_, hosts_, life_};
  RollingUpdates updates_{jobs_, life_};
  GangRestarts ends_{hosts_, life_};
  Dependencies deps_{jobs_, life_};
  uint64_t next_job_id_ = 1;
};

}  // namespace paceline::jobmgr
