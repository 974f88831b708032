#pragma once
// IdentityHook: gives a task with an identity (task.identity, or a controller) its credential
// (docs/security.md "Task credentials"), so that it may call the master about its own job.
//
//   <sandbox>/identity/          0700, owned by the task user
//     token                      the credential, 0400, owned by the task user
//     ca.pem                     the cluster's CA (only when the agent speaks TLS to the master)
//   PACELINE_TASK_TOKEN_FILE     the token file
//   PACELINE_ADDR, PACELINE_MASTER   the masters' gRPC addresses, as the agent reaches them
//   PACELINE_CA                  the CA file (with TLS)
//
// The master renews the credential before it expires (MasterMessage.renew_credential): the
// agent replaces the file (ReplaceToken: written beside it, then renamed over it, with the same
// owner), so a reader sees the old token or the new one, whole. A run recovered after an agent
// restart keeps its file, and the renewals find it through the run's sandbox. Cleanup removes
// the directory: a finished run's sandbox holds no credential.
//
// Thread-safety: runtime thread only (ReplaceToken too: the agent loop).

#include <string>

#include "agent/base/task_hook.h"

namespace paceline::agent {

class IdentityHook final : public TaskHook {
 public:
  // `master_addr`: HOST:PORT[,HOST:PORT...]; `ca_pem`: "" when the agent speaks plain text.
  IdentityHook(std::string master_addr, std::string ca_pem)
      : master_addr_(std::move(master_addr)), ca_pem_(std::move(ca_pem)) {}
  absl::string_view name() const override { return "identity"; }
  absl::Status Prepare(RunContext& ctx) override;
  void Cleanup(RunContext& ctx, CleanupKind kind) override;

  // The token file of a run whose sandbox is `sandbox`.
  static std::string TokenPath(const std::string& sandbox);
  // Replaces the token file of the run whose sandbox is `sandbox` with `token`, keeping its
  // owner; NOT_FOUND when the run has no token file (it has no identity).
  static absl::Status ReplaceToken(const std::string& sandbox, const std::string& token);

 private:
  const std::string master_addr_;
  const std::string ca_pem_;
};

}  // namespace paceline::agent
