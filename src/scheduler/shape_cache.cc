#include "scheduler/shape_cache.h"

#include "common/status.h"

namespace paceline::scheduler {

absl::StatusOr<std::shared_ptr<const placement::TaskShape>> ShapeCache::ShapeOf(
    const jobmgr::Job& job, uint32_t instance) {
  uint32_t version = job.task(instance).spec_version;
  const JobSpec* spec = job.SpecOf(version);
  if (spec == nullptr) spec = &job.spec();
  bool overridden = spec->instance_overrides.contains(instance);
  const RoleSpec* role = spec->roles.empty() ? nullptr : spec->RoleOf(instance);
  Key key{job.id(), version,
          role == nullptr ? 0 : static_cast<uint32_t>(role - spec->roles.data()) + 1};
  if (!overridden) {
    auto it = shapes_.find(key);
    if (it != shapes_.end()) return it->second;
  }
  ASSIGN_OR_RETURN(std::shared_ptr<const placement::TaskShape> shape,
                   placement::TaskShapeFromSpec(job.id(), *spec, instance));
  if (!overridden) shapes_[key] = shape;
  return shape;
}

void ShapeCache::ForgetJobs(const absl::flat_hash_set<JobId>& jobs) {
  for (auto it = shapes_.begin(); it != shapes_.end();) {
    if (jobs.contains(std::get<0>(it->first))) {
      shapes_.erase(it++);
    } else {
      ++it;
    }
  }
}

}  // namespace paceline::scheduler
