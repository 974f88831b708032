#pragma once
// TaskLifecycle: the one place where the steps of running a task are wired together.
//
//   prepare  hooks in this order: user -> container -> sandbox -> volume -> secrets -> ports ->
//            gpu -> gang -> cgroup
//            (TaskLifecycle::Prepare; on error the prepared hooks are rolled back in reverse)
//   start    the environment is built (BuildEnv), the hooks finish (the container's bundle) and
//            the wrapper is spawned (TaskRunner::Start)
//   watch    the wrapper reports the task's pid; its exit is seen through a pidfd (TaskRunner)
//   health   probes on the event loop while running (HealthMonitor)
//   stop     SIGTERM to the process group, SIGKILL at the grace deadline (TaskRunner::Kill)
//   cleanup  once every process is gone: the cgroup is emptied and removed, hooks release in
//            reverse order (TaskLifecycle::Cleanup), then the terminal event is recorded
//   recover  after an agent restart: hooks re-acquire (TaskLifecycle::Recover) and the runner
//            re-adopts the process by pid + start time (TaskRunner::Recover)
//
// Thread-safety: runtime thread only.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "agent/base/agent_config.h"
#include "agent/base/task_hook.h"

namespace paceline::agent {

class TaskLifecycle {
 public:
  explicit TaskLifecycle(const AgentConfig& config) : config_(config) {}

  // Appends a hook; Prepare runs hooks in the order they were added.
  void AddHook(std::unique_ptr<TaskHook> hook) { hooks_.push_back(std::move(hook)); }

  absl::Status Prepare(RunContext& ctx);
  // After BuildEnv: every hook's Finish; on an error all are rolled back.
  absl::Status Finish(RunContext& ctx);
  absl::Status Recover(RunContext& ctx);
  void Cleanup(RunContext& ctx, CleanupKind kind);

  // The task's environment: config base_env, then HOME/USER/LOGNAME, then the spec's env, then
  // PACELINE_JOB_ID, PACELINE_INSTANCE_ID, PACELINE_RUN_ID, PACELINE_TASK_ID and the hooks'
  // PACELINE_* variables (those always win over the spec). Sorted "K=V" strings.
  std::vector<std::string> BuildEnv(const RunContext& ctx) const;

 private:
  const AgentConfig& config_;
  std::vector<std::unique_ptr<TaskHook>> hooks_;
};

}  // namespace paceline::agent
