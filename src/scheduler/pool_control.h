#pragma once
// PoolControl: the pool tree's entry points into the scheduler core (for PoolService): create,
// update and delete pools. Each change is validated by the resource manager and, when it holds,
// recorded in the Actions' batch (commit it before answering). It works on the core's resource
// manager, and tells the core's retention index when a pool's retention window changes. After a
// restart, SeedUsage gives the resource manager the decayed usage of fair share with memory.
//
// Thread-safety: single-threaded, like the core it belongs to (SchedulerCore::pools()).

#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "records/usage.h"
#include "resmgr/resource_manager.h"
#include "scheduler/actions.h"
#include "scheduler/retention.h"
#include "spec/pool_spec.h"

namespace paceline::scheduler {

class PoolControl {
 public:
  PoolControl(resmgr::ResourceManager& rm, Retention& retention) : rm_(rm), retention_(retention) {}

  absl::Status CreatePool(const std::string& path, const PoolSpec& spec, Actions& out);
  // Returns what the change breaks when `force` lets it through (see ResourceManager).
  absl::StatusOr<std::vector<std::string>> UpdatePool(const std::string& path, const PoolSpec& spec,
                                                      bool force, Actions& out);
  absl::Status DeletePool(const std::string& path, Actions& out);
  // Fair share with memory after a restart (fair_share_seed.h): seeds the resource manager's
  // decayed usage from the stored hours of usage, converted with the cluster's `capacity`.
  // Returns how many pools were seeded; nothing is written.
  size_t SeedUsage(std::span<const records::UsageRecord> hours, const Resources& capacity,
                   absl::Time now);

 private:
  resmgr::ResourceManager& rm_;
  Retention& retention_;
};

}  // namespace paceline::scheduler
