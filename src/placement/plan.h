#pragma once
// Plan: what one PlacementEngine::Place() call proposes — assignments (task -> host, GPU
// devices, ports) and, for every request that could not be placed, its Explanation — and
// ApplyPlan(), the one applier that commits a plan to the snapshot.
//
// ApplyPlan verifies each assignment against the snapshot as it is now (ClusterSnapshot::
// Commit) and is all-or-nothing per request: if one member of a gang no longer fits, the
// members already committed are released and the whole gang is reported rejected.
//
// Thread-safety: value types; ApplyPlan mutates the snapshot (single-threaded).

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "common/ids.h"
#include "placement/cluster_snapshot.h"
#include "placement/explanation.h"

namespace paceline::placement {

struct PendingRequest {
  uint32_t request_index = 0;
  std::vector<TaskId> tasks;  // every task of the request (all members of a gang)
  Explanation explanation;
};

// Work counters of one Place() call, for benchmarks and /metrics.
struct PlanStats {
  uint64_t hosts_visited = 0;      // hosts looked at while collecting candidates
  uint64_t candidates_scored = 0;  // (host, device choice) pairs scored
  uint64_t explain_scans = 0;      // full scans run to explain a failure
  uint64_t class_hits = 0;         // failures answered from the per-class cache
};

struct Plan {
  std::vector<Assignment> assignments;  // in request order; a gang's members are contiguous
  std::vector<PendingRequest> pending;
  PlanStats stats;
};

struct ApplyResult {
  size_t committed = 0;  // assignments committed
  struct Rejected {
    uint32_t request_index = 0;
    TaskId task;  // the member that no longer fitted
    absl::Status status;
  };
  std::vector<Rejected> rejected;  // one per rejected request
};

ApplyResult ApplyPlan(const Plan& plan, ClusterSnapshot& snapshot);

}  // namespace paceline::placement
