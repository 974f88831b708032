#pragma once
// Filter "exclusive" (static): a host labelled paceline.exclusive=<v> only takes tasks whose
// shape asks exclusive <v>, and such a task only goes to those hosts.
// Reasons: 1 = the host is reserved for other work, 2 = the host is not reserved for the task.
//
// Thread-safety: stateless; see filter.h.

#include "placement/filter.h"

namespace paceline::placement {

class ExclusiveFilter final : public Filter {
 public:
  absl::string_view name() const override { return "exclusive"; }
  bool is_static() const override { return true; }
  std::optional<Rejection> Check(const TaskContext& t, const HostState& h) const override;
  std::optional<Rejection> CheckEmpty(const TaskContext& t, const HostState& h) const override;
  std::string Describe(const TaskContext& t, const Rejection& r) const override;
};

}  // namespace paceline::placement
