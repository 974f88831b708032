#pragma once
// Filter "held_hosts" (dynamic): a host held for a waiting gang (ClusterSnapshot::HoldHost,
// docs/resource-manager.md "Backfill on hosts") takes only that gang's tasks and tasks that end
// by the hold's time (PlacementTask::ends_by, from max_running_time), so that nothing placed
// meanwhile delays the gang. Never a reason to "never fit": holds end.
//
// Thread-safety: stateless; see filter.h.

#include "placement/filter.h"

namespace paceline::placement {

class HeldHostsFilter final : public Filter {
 public:
  absl::string_view name() const override { return "held_hosts"; }
  bool is_static() const override { return false; }
  std::optional<Rejection> Check(const TaskContext& t, const HostState& h) const override;
  std::optional<Rejection> CheckEmpty(const TaskContext& t, const HostState& h) const override;
  std::string Describe(const TaskContext& t, const Rejection& r) const override;
};

}  // namespace paceline::placement
