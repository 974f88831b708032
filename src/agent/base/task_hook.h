#pragma once
// TaskHook: one concern of running a task (user, sandbox, volume, ports, GPUs, gang peers,
// cgroup), in the spirit of Nomad's taskrunner hooks and Mesos' isolators. The lifecycle
// (task_lifecycle.h) calls every hook in a fixed order:
//
//   Prepare   before the process starts: acquire, create, add PACELINE_* env. On an error the
//             launch is rejected and the hooks already prepared get Cleanup(kRollback).
//   Finish    after every Prepare, once the task's environment is built (ctx.final_env): what
//             needs all the others' results (the container's bundle). On an error every hook
//             gets Cleanup(kRollback).
//   Recover   after an agent restart, for a run found in the checkpoint: re-acquire in memory
//             what Prepare acquired (e.g. mark its ports used) from the recorded context.
//   Cleanup   after every process of the run is gone (kFinished), or to undo a failed launch
//             (kRollback): release what Prepare acquired.
//
// Thread-safety: hooks are owned by the runtime and called on its thread only.

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "agent/base/run_context.h"

namespace paceline::agent {

enum class CleanupKind { kFinished, kRollback };

class TaskHook {
 public:
  virtual ~TaskHook() = default;
  virtual absl::string_view name() const = 0;
  virtual absl::Status Prepare(RunContext& ctx) = 0;
  virtual absl::Status Finish(RunContext& /*ctx*/) { return absl::OkStatus(); }
  virtual absl::Status Recover(RunContext& /*ctx*/) { return absl::OkStatus(); }
  virtual void Cleanup(RunContext& /*ctx*/, CleanupKind /*kind*/) {}
};

}  // namespace paceline::agent
