#pragma once
// RetentionFacts: what the master's retention worker (masterd/retention_worker.h) has done and
// last saw of the store, for /metrics.
//
// Thread-safety: a value type.

#include <cstdint>
#include <optional>
#include <string>

#include "store/store.h"

namespace paceline::api {

struct RetentionFacts {
  uint64_t archived_jobs = 0;   // jobs archived and removed from the store since start
  uint64_t archived_bytes = 0;  // compressed bytes written to the archive since start
  uint64_t failures = 0;        // batches that failed (full disk, store errors)
  std::string last_error;
  std::optional<store::StoreStats> store;  // the latest sample of the store's rows and size
};

}  // namespace paceline::api
