#pragma once
// PoolControl: the pool tree's entry points into the scheduler core (for PoolService): create,
// update and delete pools. Each change is validated by the resource manager and, when it holds,
// recorded in the Actions' batch (commit it before answering). Jobs run only in leaf pools, and
// a pool never goes away under its jobs: a pool with a live job (not SUCCEEDED, FAILED or KILLED)
// gets no child and is not deleted. That is checked against the jobs themselves, not only the
// resource manager's gangs, which lack the runs not adopted yet after a restart or a takeover
// (their hosts not registered again) and the jobs held by their dependencies. It works on the
// core's resource manager, and tells the core's retention index when a pool's retention window
// changes. After a restart, SeedUsage gives the resource manager the decayed usage of fair share
// with memory.
//
// Thread-safety: single-threaded, like the core it belongs to (SchedulerCore::pools()).

#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "jobmgr/job_manager.h"
#include "records/usage.h"
#include "resmgr/resource_manager.h"
#include "scheduler/actions.h"
#include "scheduler/retention.h"
#include "spec/pool_spec.h"

namespace paceline::scheduler {

class PoolControl {
 public:
  PoolControl(resmgr::ResourceManager& rm, const jobmgr::JobManager& jobs, Retention& retention)
      : rm_(rm), jobs_(jobs), retention_(retention) {}

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
  // OK, or FAILED_PRECONDITION when `pool` has a live job: "pool P has N live job(s) (job J is
  // STATE) and `why`". O(jobs): pool changes are rare.
  absl::Status NoLiveJobs(absl::string_view pool, absl::string_view why) const;

  resmgr::ResourceManager& rm_;
  const jobmgr::JobManager& jobs_;
  Retention& retention_;
};

}  // namespace paceline::scheduler
