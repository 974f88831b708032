#pragma once
// SandboxHook: a fresh working directory per run, and the agent-private run directory.
//
//   <work_dir>/sandboxes/<job>_<instance>_<run>/   the task's cwd (0700, owned by the task
//                                                 user): stdout, stderr (+ .1), peers.json
//   <work_dir>/runs/<job>_<instance>_<run>.*       agent-private (runs/ is 0700): the wrapper's
//                                                 status file (only if the agent died while the
//                                                 task ran) and the log offset files
// Creating the sandbox (mkdir) marks "launched here once": a second launch of the run fails.
// sandboxes/ is 0711: a task can reach its own sandbox but cannot list the others. One directory
// per run and no level per job or instance: a directory is an inode to allocate, which is a
// large part of a short task's cost on some file systems. (Agents before this layout made
// sandboxes/<job>/<instance>/<run>/: FindSandbox and the GC know both.) Sandboxes outlive their
// run (for `task logs`) until the retention GC removes them.
// Exports PACELINE_SANDBOX (and HOME, unless the spec sets it).
//
// Thread-safety: runtime thread only.

#include <string>

#include "agent/base/task_hook.h"

namespace paceline::agent {

class SandboxHook final : public TaskHook {
 public:
  explicit SandboxHook(std::string work_dir) : work_dir_(std::move(work_dir)) {}
  absl::string_view name() const override { return "sandbox"; }
  absl::Status Prepare(RunContext& ctx) override;
  void Cleanup(RunContext& ctx, CleanupKind kind) override;

  static std::string SandboxPath(const std::string& work_dir, const RunId& run);
  // The run's sandbox where it exists: SandboxPath, else the earlier nested layout's path; ""
  // when neither exists.
  static std::string FindSandbox(const std::string& work_dir, const RunId& run);
  // The prefix of the run's agent-private files (RunContext::run_state).
  static std::string RunStatePath(const std::string& work_dir, const RunId& run);
  static std::string StatusPath(const std::string& work_dir, const RunId& run);

 private:
  std::string work_dir_;
};

}  // namespace paceline::agent
