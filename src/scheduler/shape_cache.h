#pragma once
// ShapeCache: the placement engine's shape of each job's tasks (placement/placement_request.h),
// built once per job, spec version and role and shared by the role's instances; an instance with
// an override of its spec gets a shape of its own, not kept.
//
// Thread-safety: single-threaded, part of the core.

#include <cstdint>
#include <memory>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "common/ids.h"
#include "jobmgr/job.h"
#include "placement/placement_request.h"

namespace paceline::scheduler {

class ShapeCache {
 public:
  // The shape of `instance`'s current run (its run's spec version); the error of
  // placement::TaskShapeFromSpec when the spec has none.
  absl::StatusOr<std::shared_ptr<const placement::TaskShape>> ShapeOf(const jobmgr::Job& job,
                                                                      uint32_t instance);
  // Drops the shapes of `jobs` (deleted).
  void ForgetJobs(const absl::flat_hash_set<JobId>& jobs);

 private:
  // By job, spec version and role (1 + its index; 0 without roles).
  using Key = std::tuple<JobId, uint32_t, uint32_t>;
  absl::flat_hash_map<Key, std::shared_ptr<const placement::TaskShape>> shapes_;
};

}  // namespace paceline::scheduler
