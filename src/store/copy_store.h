#pragma once
// CopyStore: moves a cluster's state from one store to another (`paceline store migrate`):
// pools, jobs, tasks with their run history (every event, also of removed instances), hosts,
// API tokens, secrets (still sealed, as they are: the masters of the target need the same
// keyring), the whole audit log (oldest first: the target numbers it again from 1), the usage
// sums by hour (records/usage.h), the job id
// counter and the cluster id (agents and masters know the cluster by it). The target must be
// empty; everything is written in one transaction, so a failed copy leaves the target as empty
// as it was. CompareStores then reads both back and names the first difference (audit records
// are compared in order, by everything but their seq).
//
// Thread-safety: free functions over stores used by the calling thread only.

#include <cstdint>

#include "absl/status/statusor.h"
#include "store/store.h"

namespace paceline::store {

struct CopyReport {
  uint64_t pools = 0, jobs = 0, tasks = 0, hosts = 0, events = 0, tokens = 0, secrets = 0,
           audit = 0;
};

absl::StatusOr<CopyReport> CopyStore(Store& from, Store& to);
// OK when both hold the same records, events and audit log; FAILED_PRECONDITION naming the first
// difference otherwise.
absl::Status CompareStores(Store& a, Store& b);

}  // namespace paceline::store
