#pragma once
// Filter "ports" (dynamic): the host has as many free ports in its ranges as the task names
// dynamic ports (asked, available = free ports).
//
// Thread-safety: stateless; see filter.h.

#include "placement/filter.h"

namespace paceline::placement {

class PortsFilter final : public Filter {
 public:
  absl::string_view name() const override { return "ports"; }
  bool is_static() const override { return false; }
  std::optional<Rejection> Check(const TaskContext& t, const HostState& h) const override;
  std::optional<Rejection> CheckEmpty(const TaskContext& t, const HostState& h) const override;
  std::string Describe(const TaskContext& t, const Rejection& r) const override;
};

}  // namespace paceline::placement
