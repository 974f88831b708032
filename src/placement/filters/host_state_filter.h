#pragma once
// Filter "host_state" (static): only UP hosts take new work; DRAINING, DRAINED, DOWN and LOST
// hosts are rejected (reason = the HostStatus). A host may come back, so it never makes a task
// never-fitting.
//
// Thread-safety: stateless; see filter.h.

#include "placement/filter.h"

namespace paceline::placement {

class HostStateFilter final : public Filter {
 public:
  absl::string_view name() const override { return "host_state"; }
  bool is_static() const override { return true; }
  std::optional<Rejection> Check(const TaskContext& t, const HostState& h) const override;
  std::optional<Rejection> CheckEmpty(const TaskContext& t, const HostState& h) const override;
  std::string Describe(const TaskContext& t, const Rejection& r) const override;
};

}  // namespace paceline::placement
