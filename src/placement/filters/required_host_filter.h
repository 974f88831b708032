#pragma once
// Filter "required_host" (dynamic, per task): a task with PlacementTask::required_host only
// goes to that host. The engine looks at that host alone for such a task; the filter makes the
// explanation count the other hosts.
//
// Thread-safety: stateless; see filter.h.

#include "placement/filter.h"

namespace paceline::placement {

class RequiredHostFilter final : public Filter {
 public:
  absl::string_view name() const override { return "required_host"; }
  bool is_static() const override { return false; }
  std::optional<Rejection> Check(const TaskContext& t, const HostState& h) const override;
  std::optional<Rejection> CheckEmpty(const TaskContext& t, const HostState& h) const override;
  std::string Describe(const TaskContext& t, const Rejection& r) const override;
};

}  // namespace paceline::placement
