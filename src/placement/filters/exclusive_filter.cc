#include "placement/filters/exclusive_filter.h"

#include "absl/strings/str_cat.h"

namespace paceline::placement {

std::optional<Rejection> ExclusiveFilter::Check(const TaskContext& t, const HostState& h) const {
  if (h.exclusive() == t.shape.exclusive) return std::nullopt;
  return Reject(h.exclusive().empty() ? 2 : 1);
}

std::optional<Rejection> ExclusiveFilter::CheckEmpty(const TaskContext& t,
                                                     const HostState& h) const {
  return Check(t, h);
}

std::string ExclusiveFilter::Describe(const TaskContext& t, const Rejection& r) const {
  if (r.reason == 1) return "host reserved (exclusive)";
  return absl::StrCat("not an exclusive=", t.shape.exclusive, " host");
}

}  // namespace paceline::placement
