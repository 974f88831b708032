#pragma once
// ShapeCache: the placement engine's shape of each job's tasks (placement/placement_request.h),
// built once per job and spec version and shared by its instances; an instance with an override of
// its spec gets a shape of its own, not kept.
//
// Thread-safety: single-threaded, part of the core.

#include <cstdint>
#include <memory>
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
  // By job and spec version.
  absl::flat_hash_map<std::pair<JobId, uint32_t>, std::shared_ptr<const placement::TaskShape>>
      shapes_;
};

}  // namespace paceline::scheduler
