#pragma once
// SecretsHook: gives a task the secrets its spec names (docs/security.md "Secrets").
//
//   variables  `env:` secrets join the task's environment (RunContext::secret_env), which is
//              never persisted: not in the checkpoint, not in any log.
//   files      `file:` secrets are written, mode 0400 and owned by the task user, into
//              <sandbox>/secrets, exported as PACELINE_SECRETS. When the agent may mount
//              (root), that directory is a tmpfs of its own (1 MiB, nosuid, nodev, noexec),
//              so the values never reach a disk; otherwise a 0700 directory of the sandbox.
// Cleanup, whatever the outcome, removes the files and unmounts the tmpfs: a finished run's
// sandbox (kept for its logs) holds no secret.
//
// Thread-safety: runtime thread only.

#include "agent/base/task_hook.h"

namespace paceline::agent {

class SecretsHook final : public TaskHook {
 public:
  absl::string_view name() const override { return "secrets"; }
  absl::Status Prepare(RunContext& ctx) override;
  void Cleanup(RunContext& ctx, CleanupKind kind) override;
};

}  // namespace paceline::agent
