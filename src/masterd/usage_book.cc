#include "masterd/usage_book.h"

#include <iostream>
#include <optional>

#include "absl/time/clock.h"

namespace paceline::masterd {

UsageBook::UsageBook(Cluster* cluster, absl::Duration retention)
    : cluster_(cluster), retention_(retention) {
  cluster_->OnUsage(
      [this](const std::vector<records::UsageRecord>& rows) { Committed(rows, absl::Now()); });
}

absl::StatusOr<std::vector<records::UsageRecord>> UsageBook::ListUsage(
    const records::UsageQuery& query) {
  absl::StatusOr<std::vector<records::UsageRecord>> result;
  cluster_->committer().RunOnWriter([&](store::Store& s) { result = s.ListUsage(query); });
  return result;
}

std::vector<api::PoolUsageCounter> UsageBook::Counters() const {
  absl::MutexLock lock(&mu_);
  std::vector<api::PoolUsageCounter> out;
  out.reserve(counters_.size());
  for (const auto& [pool, c] : counters_) out.push_back(c);
  return out;
}

void UsageBook::Committed(const std::vector<records::UsageRecord>& rows, absl::Time now) {
  if (rows.empty()) return;
  std::optional<absl::Time> prune;
  {
    absl::MutexLock lock(&mu_);
    for (const records::UsageRecord& r : rows) {
      api::PoolUsageCounter& c = counters_[r.pool];
      c.pool = r.pool;
      c.cpu_seconds += static_cast<double>(r.cpu_milli_seconds) / 1000.0;
      c.memory_byte_seconds += static_cast<double>(r.memory_byte_seconds);
      c.gpu_seconds += static_cast<double>(r.gpu_milli_seconds) / 1000.0;
      c.tasks += r.tasks;
    }
    if (retention_ > absl::ZeroDuration() && now >= next_prune_) {
      prune = records::HourOf(now - retention_);
      next_prune_ = now + absl::Hours(1);
    }
  }
  if (!prune) return;
  // Straight to the committer, like the audit log's pruning: the core keeps no usage.
  records::WriteBatch batch;
  batch.prune_usage_before = prune;
  cluster_->committer().Submit(std::move(batch), [](absl::Status s) {
    if (!s.ok()) std::cerr << "master: old usage was not deleted: " << s << std::endl;
  });
}

}  // namespace paceline::masterd
