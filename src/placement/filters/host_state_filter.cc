#include "placement/filters/host_state_filter.h"

#include "absl/strings/str_cat.h"

namespace paceline::placement {

std::optional<Rejection> HostStateFilter::Check(const TaskContext&, const HostState& h) const {
  if (h.status() == HostStatus::kUp) return std::nullopt;
  return Reject(static_cast<uint16_t>(h.status()));
}

std::optional<Rejection> HostStateFilter::CheckEmpty(const TaskContext&, const HostState&) const {
  return std::nullopt;  // a host that is not UP may come back
}

std::string HostStateFilter::Describe(const TaskContext&, const Rejection& r) const {
  return absl::StrCat("host ", HostStatusName(static_cast<HostStatus>(r.reason)));
}

}  // namespace paceline::placement
