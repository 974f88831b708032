#pragma once
// TaskRunner: one run of a task, from the spawn of its wrapper to its terminal event.
//
//   ┌──────────┐ "started pid"  ┌─────────┐  wrapper exited  ┌──────────┐ cgroup empty ┌──────┐
//   │ STARTING │ ─────────────> │ RUNNING │ ───────────────> │ DRAINING │ ───────────> │ DONE │
//   └──────────┘                └─────────┘   (pidfd ready)  └──────────┘  cleanup,    └──────┘
//        │ "failed ..." / wrapper exited                          ^        terminal event
//        └────────────────────────────────────────────────────────┘
//   Kill(): health and readiness checks stop; SIGTERM to the task's process group (after the
//   deregistration delay, during which the task is left alone, still serving), SIGKILL (group +
//   cgroup) at the deadline, `grace` after SIGTERM.
//
// Checks: a liveness check (spec.health: HEALTH events) and a readiness check
// (spec.readiness: READINESS events, which never restart or kill the task), each a
// HealthMonitor of its own, from RUNNING until a kill or the end of the task.
//
// The runner owns the run's RunContext and keeps the checkpoint record current (Put on start,
// on RUNNING, on kill; Remove after the terminal event is in the outbox). The exit status comes
// from the wrapper's status file (wrapper_protocol.h), so a run adopted after an agent restart
// ends exactly like one the agent started. A run whose wrapper died without recording an exit
// status is reported LOST (its exit cannot be known); its leftover processes are killed.
//
// Thread-safety: runtime thread only; callbacks come from the runtime's Poller.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/base/agent_config.h"
#include "agent/base/poller.h"
#include "agent/base/run_context.h"
#include "agent/base/task_event.h"
#include "agent/container/container_hook.h"
#include "agent/health/health_monitor.h"
#include "agent/isolation/cgroup_driver.h"
#include "agent/launch/supervisor_pool.h"
#include "agent/launch/wrapper_protocol.h"
#include "agent/recovery/checkpoint.h"
#include "agent/task_lifecycle.h"

namespace paceline::agent {

// What runners need from the runtime (all owned by the runtime, which outlives its runners).
struct RuntimeServices {
  const AgentConfig* config = nullptr;
  std::string wrapper_path;
  std::string boot_id;
  Poller* poller = nullptr;
  CgroupDriver* cgroups = nullptr;
  Checkpoint* checkpoint = nullptr;
  TaskLifecycle* lifecycle = nullptr;
  std::function<void(TaskEvent)> emit;           // into the outbox
  std::function<void(const RunId&)> reschedule;  // the runner's NextDeadline() changed
  std::function<void(UniqueFd pidfd)> reap;      // waits for and reaps an exiting wrapper
  SupervisorPool* supervisors = nullptr;
  const OciRuntime* oci = nullptr;  // containers: the runtime's command lines
  absl::Time now;                   // time of the current runtime call
};

class TaskRunner {
 public:
  enum class State { kStarting, kRunning, kDraining, kDone };

  // Takes a supervisor for a prepared context, checkpoints it, then sends it the run request.
  // Takes `ctx` on success; on error nothing runs and `ctx` is left for the caller's rollback.
  static absl::StatusOr<std::unique_ptr<TaskRunner>> Start(RuntimeServices& services,
                                                           RunContext& ctx);
  // Re-adopts a checkpointed run after an agent restart (hooks already recovered).
  static std::unique_ptr<TaskRunner> Recover(RuntimeServices& services, RunContext ctx);

  // Leaves the processes alone (they are recovered by the next agent).
  ~TaskRunner();
  TaskRunner(const TaskRunner&) = delete;
  TaskRunner& operator=(const TaskRunner&) = delete;

  // Requests a stop: SIGTERM after `delay` (the deregistration delay: the task is left alone
  // until then), SIGKILL `grace` after SIGTERM (0 = SIGKILL instead of SIGTERM). The checks stop
  // at once. A second Kill never moves SIGTERM (the first kill's delay stands: the master
  // re-sends kills without it after a failover); it can only shorten the grace, counted from
  // SIGTERM. No effect once the run is ending.
  void Kill(absl::Duration grace, absl::Duration delay = absl::ZeroDuration());
  void OnTimer(absl::Time now);
  absl::Time NextDeadline() const;

  State state() const { return state_; }
  bool done() const { return state_ == State::kDone; }
  const RunContext& context() const { return ctx_; }
  HealthState health() const { return health_ ? health_->state() : HealthState::kUnknown; }
  ReadinessState readiness() const {
    return readiness_ ? ReadinessFromHealth(readiness_->state()) : ReadinessState::kUnknown;
  }

  // Scheduled-timer bookkeeping for the runtime's timer queue.
  absl::Time scheduled = absl::InfiniteFuture();

 private:
  TaskRunner(RuntimeServices& services, RunContext ctx);

  absl::Status Watch(int pidfd, int control_fd);
  void OnControlReadable();
  void HandleControlLine(const std::string& line);
  void OnWrapperExit();
  static bool IsFinal(const wrapper::ExitStatus& s);
  // The wrapper's status file (written only when it lost the agent).
  static wrapper::ExitStatus ReadStatusFile(const RunContext& c);
  // The task and its descendants are gone (exit record or wrapper exit): drain and finish.
  void EndOfTask();
  // Reports RUNNING; `live`: the task may still run (else it already ended).
  void MarkRunning(int pid, uint64_t start_ticks, bool live);
  void SignalTask(int sig);
  // The kill's SIGTERM (its deregistration delay is over, or it had none).
  void TerminateTask();
  void EscalateKill();
  // The kill's next step that is due at `now`: SIGKILL at the deadline, else SIGTERM at the end
  // of the deregistration delay.
  void AdvanceKill(absl::Time now);
  void TryFinish();
  // The run's terminal event from the wrapper's exit record and the cgroup's OOM-kill count.
  TaskEvent TerminalEvent(uint64_t oom_kills) const;
  // Starts the health and readiness checks the spec has (once running, without a kill).
  void StartChecks();
  std::unique_ptr<HealthMonitor> StartMonitor(const HealthSpec& spec, TaskEventType type);
  void Checkpoint();
  void Unwatch();

  RuntimeServices& s_;
  RunContext ctx_;
  std::vector<std::string> health_env_;  // command checks' environment (the task's)
  State state_ = State::kStarting;
  UniqueFd pidfd_;
  UniqueFd control_;
  uint64_t pidfd_watch_ = 0;
  uint64_t control_watch_ = 0;
  std::string control_buf_;
  std::string control_record_;    // complete status lines received from the wrapper
  bool reading_control_ = false;  // in OnControlReadable: checkpoints wait for its end
  bool checkpoint_deferred_ = false;
  wrapper::ExitStatus status_;
  std::unique_ptr<HealthMonitor> health_;
  std::unique_ptr<HealthMonitor> readiness_;
  absl::Time retry_at_ = absl::InfiniteFuture();  // draining: next attempt; starting: status poll
  int drain_attempts_ = 0;
};

}  // namespace paceline::agent
