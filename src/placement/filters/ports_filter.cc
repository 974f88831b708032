#include "placement/filters/ports_filter.h"

#include "absl/strings/str_cat.h"

namespace paceline::placement {

std::optional<Rejection> PortsFilter::Check(const TaskContext& t, const HostState& h) const {
  uint32_t n = t.shape.num_ports();
  if (n == 0 || h.free_ports() >= n) return std::nullopt;
  Rejection r = Reject();
  r.asked = n;
  r.available = h.free_ports();
  return r;
}

std::optional<Rejection> PortsFilter::CheckEmpty(const TaskContext& t, const HostState& h) const {
  if (h.port_capacity() >= t.shape.num_ports()) return std::nullopt;
  Rejection r = Reject();
  r.asked = t.shape.num_ports();
  r.available = h.port_capacity();
  return r;
}

std::string PortsFilter::Describe(const TaskContext& t, const Rejection&) const {
  return absl::StrCat("fewer than ", t.shape.num_ports(), " free ports");
}

}  // namespace paceline::placement
