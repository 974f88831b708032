#include "placement/plan.h"

#include "common/check.h"

namespace paceline::placement {

ApplyResult ApplyPlan(const Plan& plan, ClusterSnapshot& snapshot) {
  ApplyResult result;
  const std::vector<Assignment>& as = plan.assignments;
  size_t i = 0;
  while (i < as.size()) {
    size_t end = i;
    while (end < as.size() && as[end].request_index == as[i].request_index) ++end;
    size_t done = i;
    absl::Status status;
    for (; done < end; ++done) {
      status = snapshot.Commit(as[done]);
      if (!status.ok()) break;
    }
    if (done == end) {
      result.committed += end - i;
    } else {
      for (size_t k = i; k < done; ++k) {
        absl::Status s = snapshot.Release(as[k].task);
        PL_CHECK(s.ok()) << s;
      }
      result.rejected.push_back({as[i].request_index, as[done].task, status});
      snapshot.MarkRelaxed();  // the engine's failures of this plan counted these holds
    }
    i = end;
  }
  return result;
}

}  // namespace paceline::placement
