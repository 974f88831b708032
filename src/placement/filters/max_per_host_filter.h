#pragma once
// Filter "max_per_host" (dynamic): anti-affinity. For each MaxPerHostConstraint, the host holds
// fewer than max_per_host tasks of the same job (or, with task_label, fewer tasks whose job
// has the same value of that label), counting committed tasks and this plan's holds.
// The reason code is the index of the constraint that fails.
//
// Thread-safety: stateless; see filter.h.

#include "placement/filter.h"

namespace paceline::placement {

class MaxPerHostFilter final : public Filter {
 public:
  absl::string_view name() const override { return "max_per_host"; }
  bool is_static() const override { return false; }
  std::optional<Rejection> Check(const TaskContext& t, const HostState& h) const override;
  std::optional<Rejection> CheckEmpty(const TaskContext& t, const HostState& h) const override;
  std::string Describe(const TaskContext& t, const Rejection& r) const override;
};

}  // namespace paceline::placement
