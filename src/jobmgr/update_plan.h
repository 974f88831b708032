#pragma once
// What an update of a job to a new spec changes, instance by instance (for `job update
// --dry-run`, and the order in which an update works):
//   removed    instances at or above the new count (highest ids first)
//   updated    instances whose effective task differs from the new spec's
//   added      new instances (ids from the current count up)
//   unchanged  the others: they take the new version without a restart
//
// Thread-safety: pure functions.

#include <cstdint>
#include <vector>

#include "jobmgr/job.h"
#include "spec/job_spec.h"

namespace paceline::jobmgr {

struct UpdatePlan {
  std::vector<uint32_t> removed;
  std::vector<uint32_t> updated;
  std::vector<uint32_t> added;
  std::vector<uint32_t> unchanged;
  // The order an update works in: removed, updated, added.
  std::vector<uint32_t> Order() const;
};

UpdatePlan PlanUpdate(const Job& job, const JobSpec& next);

}  // namespace paceline::jobmgr
