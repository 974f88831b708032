#pragma once
// Filter "labels" (static): every LabelConstraint of the shape must hold on the host's labels:
//   in [v...]     the label is present with one of the values
//   not_in [v...] the label is absent or has none of the values
//   exists        the label is present;  not_exists: it is absent
//   gt n / lt n   the label is present, parses as a number, and is > n / < n
// The reason code is the index of the first constraint that fails.
//
// Thread-safety: stateless; see filter.h.

#include "placement/filter.h"

namespace paceline::placement {

// Whether one constraint holds for a host whose label `c.label` has value `v` (nullopt: the
// host has no such label). Shared with the daemon jobs' choice of hosts.
bool LabelConstraintHolds(const LabelConstraint& c, std::optional<absl::string_view> v);

class LabelsFilter final : public Filter {
 public:
  absl::string_view name() const override { return "labels"; }
  bool is_static() const override { return true; }
  std::optional<Rejection> Check(const TaskContext& t, const HostState& h) const override;
  std::optional<Rejection> CheckEmpty(const TaskContext& t, const HostState& h) const override;
  std::string Describe(const TaskContext& t, const Rejection& r) const override;
};

}  // namespace paceline::placement
