#pragma once
// UsageSource: usage accounting as the API reads it (records/usage.h), implemented by the master
// over its store (masterd/usage_book.h): the hourly rows of a query, for PoolService.GetUsage,
// and the per-pool totals made durable since this master started, for the counters of
// /metrics (metrics.h, RenderUsageMetrics).
//
// Thread-safety: every method may be called from any thread.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "records/records.h"

namespace paceline::api {

// One pool's usage since the master started: counters, they only grow.
struct PoolUsageCounter {
  std::string pool;
  double cpu_seconds = 0;  // cores allocated x seconds
  double memory_byte_seconds = 0;
  double gpu_seconds = 0;  // GPUs allocated x seconds
  int64_t tasks = 0;       // runs that ended
};

class UsageSource {
 public:
  virtual ~UsageSource() = default;
  // The stored hourly rows matching `query`, in key order.
  virtual absl::StatusOr<std::vector<records::UsageRecord>> ListUsage(
      const records::UsageQuery& query) = 0;
  // Every pool with usage since the master started, by path.
  virtual std::vector<PoolUsageCounter> Counters() const = 0;
};

}  // namespace paceline::api
