#pragma once
// Fair share with memory after a restart: the decayed usage of each pool whose parent has a
// fair_share policy, made from the usage the store keeps by hour (records/usage.h), so that a
// new leader does not start from zero (resmgr/usage_decay.h).
//
// An hour's usage of a pool's subtree is counted as the resource manager counts allocation: as
// its dominant share of the cluster (cpu millicore·seconds / the capacity's millicores, memory
// byte·seconds / its bytes, gpu milli-GPU·seconds / its milli-GPUs: the largest), in
// cluster-seconds (at most 3,600 an hour), decayed from the middle of its hour to `now` with
// the parent's half-life. The store holds the runs that ended; the runs still running at the
// restart count from the restart on, as the leader sees them.
//
// Pure functions of their arguments.

#include <optional>
#include <span>
#include <vector>

#include "absl/time/time.h"
#include "common/ids.h"
#include "common/resources.h"
#include "records/usage.h"
#include "resmgr/pool_tree.h"

namespace paceline::scheduler {

// The oldest hour worth reading: `now` − 10 of the longest half-life in the tree (older usage
// weighs less than 1/1000); nullopt when no pool has the policy (nothing to read).
std::optional<absl::Time> UsageSeedSince(const resmgr::PoolTree& tree, absl::Time now);

struct UsageSeed {
  PoolId pool;
  double usage = 0;  // cluster-seconds, decayed to `now`
};

// One seed per pool under a fair_share parent that has usage in `hours`, in the tree's
// breadth-first order. Rows of pools that no longer exist are skipped; an empty capacity
// dimension is not counted.
std::vector<UsageSeed> DecayedUsageFromHours(const resmgr::PoolTree& tree,
                                             std::span<const records::UsageRecord> hours,
                                             const Resources& capacity, absl::Time now);

}  // namespace paceline::scheduler
