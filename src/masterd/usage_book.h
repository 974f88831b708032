#pragma once
// UsageBook: the master's api::UsageSource (api/usage_source.h) over its Cluster. The core puts
// the usage of every run that ends into the batch that ends it (scheduler/accounting.h), so
// usage is durable exactly when the end is; this book
//   - reads the stored usage on the store's writer thread (ListUsage), for PoolService.GetUsage
//     and for whoever needs past usage by pool and hour (decayed fair share after a restart);
//   - counts, per pool, the usage whose commit completed since this master started
//     (Committed, which the commit path calls on the loop), for the counters of /metrics;
//   - deletes usage of the hours older than `retention`, at most once an hour, with the next
//     usage committed (zero retention: kept forever).
//
// Thread-safety: every method is thread-safe.

#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "api/usage_source.h"
#include "masterd/cluster.h"

namespace paceline::masterd {

class UsageBook final : public api::UsageSource {
 public:
  // Tells `cluster`'s commit path to call Committed; `cluster` must outlive the book.
  UsageBook(Cluster* cluster, absl::Duration retention);

  absl::StatusOr<std::vector<records::UsageRecord>> ListUsage(
      const records::UsageQuery& query) override;
  std::vector<api::PoolUsageCounter> Counters() const override;
  // `rows` were made durable at `now`.
  void Committed(const std::vector<records::UsageRecord>& rows, absl::Time now);

 private:
  Cluster* const cluster_;
  const absl::Duration retention_;
  mutable absl::Mutex mu_;
  std::map<std::string, api::PoolUsageCounter> counters_ ABSL_GUARDED_BY(mu_);
  absl::Time next_prune_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace paceline::masterd
