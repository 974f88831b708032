#include "masterd/access_book.h"

#include <iostream>

namespace paceline::masterd {

AccessBook::AccessBook(Cluster* cluster, absl::Duration retention, const TaskCredentials* tasks)
    : cluster_(cluster), tasks_(tasks), retention_(retention) {}

absl::Status AccessBook::CheckRunLive(uint64_t job, uint32_t instance, uint32_t run) const {
  if (tasks_ == nullptr) return AccessRecords::CheckRunLive(job, instance, run);
  return tasks_->CheckRunLive(job, instance, run);
}

void AccessBook::Take(const std::vector<records::TokenRecord>& tokens, bool all) {
  absl::MutexLock lock(&mu_);
  if (all) tokens_.clear();
  for (const records::TokenRecord& t : tokens) tokens_[t.id] = t;
}

std::optional<records::TokenRecord> AccessBook::FindToken(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  auto it = tokens_.find(id);
  if (it == tokens_.end()) return std::nullopt;
  return it->second;
}

std::vector<records::TokenRecord> AccessBook::ListTokens() const {
  absl::MutexLock lock(&mu_);
  std::vector<records::TokenRecord> out;
  out.reserve(tokens_.size());
  for (const auto& [id, t] : tokens_) out.push_back(t);
  return out;
}

absl::Status AccessBook::PutToken(records::TokenRecord token) {
  absl::Status s =
      cluster_->Mutate([&](scheduler::SchedulerCore&, absl::Time, scheduler::Actions& out) {
        out.batch.put_tokens.push_back(token);
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  absl::MutexLock lock(&mu_);
  tokens_[token.id] = std::move(token);
  return absl::OkStatus();
}

void AccessBook::Audit(records::AuditRecord record) {
  std::optional<absl::Time> prune;
  if (retention_ > absl::ZeroDuration()) {
    absl::MutexLock lock(&mu_);
    if (record.at >= next_prune_) {
      prune = record.at - retention_;
      next_prune_ = record.at + absl::Hours(1);
    }
  }
  // Straight to the committer: the core has no part in it, and the group commit joins it to
  // the batches of the same moment.
  records::WriteBatch batch;
  batch.audit.push_back(std::move(record));
  batch.prune_audit_before = prune;
  cluster_->committer().Submit(std::move(batch), [](absl::Status s) {
    if (!s.ok()) std::cerr << "master: an audit record was not written: " << s << std::endl;
  });
}

absl::StatusOr<std::vector<records::AuditRecord>> AccessBook::ListAudit(
    const records::AuditQuery& query) {
  absl::StatusOr<std::vector<records::AuditRecord>> result;
  cluster_->committer().RunOnWriter([&](store::Store& s) { result = s.ListAudit(query); });
  return result;
}

}  // namespace paceline::masterd
