#include "placement/filters/required_host_filter.h"

#include "absl/strings/str_cat.h"

namespace paceline::placement {

std::optional<Rejection> RequiredHostFilter::Check(const TaskContext& t, const HostState& h) const {
  if (!t.task.required_host || *t.task.required_host == h.id()) return std::nullopt;
  return Reject();
}

std::optional<Rejection> RequiredHostFilter::CheckEmpty(const TaskContext& t,
                                                        const HostState& h) const {
  return Check(t, h);
}

std::string RequiredHostFilter::Describe(const TaskContext& t, const Rejection&) const {
  return absl::StrCat("not the required host ",
                      t.task.required_host ? t.task.required_host->value() : 0);
}

}  // namespace paceline::placement
