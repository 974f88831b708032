#include "jobmgr/update_plan.h"

#include <algorithm>

namespace paceline::jobmgr {

std::vector<uint32_t> UpdatePlan::Order() const {
  std::vector<uint32_t> out = removed;
  out.insert(out.end(), updated.begin(), updated.end());
  out.insert(out.end(), added.begin(), added.end());
  return out;
}

UpdatePlan PlanUpdate(const Job& job, const JobSpec& next) {
  UpdatePlan p;
  uint32_t now = job.instances();
  uint32_t target = next.instances;
  for (uint32_t i = now; i > target; --i) p.removed.push_back(i - 1);
  for (uint32_t i = 0; i < std::min(now, target); ++i) {
    const TaskRuntime& t = job.task(i);
    // A pending update's version counts as what the instance runs.
    const JobSpec* runs =
        job.SpecOf(t.next_spec_version != 0 ? t.next_spec_version : t.spec_version);
    bool same = runs != nullptr && runs->TaskRef(i) == next.TaskRef(i);  // no copies
    (same ? p.unchanged : p.updated).push_back(i);
  }
  for (uint32_t i = now; i < target; ++i) p.added.push_back(i);
  return p;
}

}  // namespace paceline::jobmgr
