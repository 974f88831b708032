#pragma once
// AccessBook: the master's api::AccessRecords (api/access_control.h) over its Cluster — the
// tokens in memory, loaded from the store whenever the cluster is (CoreKeeper::OnRecords), and
// written through the cluster like any change (durable before used; refused by a standby);
// the audit log appended straight through the group committer without waiting (no turn of the
// loop), read from the store.
//
// Whether a task credential's run still lives is TaskCredentials' answer (task_credentials.h).
//
// Audit records older than `retention` are deleted, at most once an hour, with the next record
// written (zero retention: kept forever).
//
// Thread-safety: every method is thread-safe.

#include <map>

#include "absl/synchronization/mutex.h"
#include "api/access_control.h"
#include "masterd/cluster.h"
#include "masterd/task_credentials.h"

namespace paceline::masterd {

class AccessBook final : public api::AccessRecords {
 public:
  // `tasks` may be null: task credentials are then refused.
  AccessBook(Cluster* cluster, absl::Duration retention, const TaskCredentials* tasks = nullptr);

  // Replaces the tokens with the store's (`all`), or adds or replaces these (a standby's read
  // of what the leader wrote: revocations reach it too).
  void Take(const std::vector<records::TokenRecord>& tokens, bool all);

  std::optional<records::TokenRecord> FindToken(const std::string& id) const override;
  std::vector<records::TokenRecord> ListTokens() const override;
  absl::Status PutToken(records::TokenRecord token) override;
  void Audit(records::AuditRecord record) override;
  absl::StatusOr<std::vector<records::AuditRecord>> ListAudit(
      const records::AuditQuery& query) override;
  absl::Status CheckRunLive(uint64_t job, uint32_t instance, uint32_t run) const override;

 private:
  Cluster* const cluster_;
  const TaskCredentials* const tasks_;
  const absl::Duration retention_;
  mutable absl::Mutex mu_;
  std::map<std::string, records::TokenRecord> tokens_ ABSL_GUARDED_BY(mu_);
  absl::Time next_prune_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace paceline::masterd
