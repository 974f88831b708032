#include "placement/filters/held_hosts_filter.h"

#include <string>

namespace paceline::placement {

std::optional<Rejection> HeldHostsFilter::Check(const TaskContext& t, const HostState& h) const {
  if (h.held_for() == 0 || h.held_for() == t.task.gang || t.task.ends_by <= h.held_until()) {
    return std::nullopt;
  }
  return Reject();
}

std::optional<Rejection> HeldHostsFilter::CheckEmpty(const TaskContext&, const HostState&) const {
  return std::nullopt;
}

std::string HeldHostsFilter::Describe(const TaskContext&, const Rejection&) const {
  return "held for a waiting gang (the task would end after the gang's start)";
}

}  // namespace paceline::placement
