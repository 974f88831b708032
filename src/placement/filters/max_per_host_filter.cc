#include "placement/filters/max_per_host_filter.h"

#include "absl/strings/str_cat.h"

namespace paceline::placement {

std::optional<Rejection> MaxPerHostFilter::Check(const TaskContext& t, const HostState& h) const {
  const auto& keys = t.keys.max_per_host;
  for (size_t i = 0; i < keys.size(); ++i) {
    const AntiAffinityKey& k = keys[i];
    uint32_t n = k.per_job ? h.JobCount(t.shape.job) : h.LabelPairCount(k.label_pair);
    if (n >= k.max_per_host) {
      Rejection r = Reject(static_cast<uint16_t>(i));
      r.asked = k.max_per_host;
      r.available = n;
      return r;
    }
  }
  return std::nullopt;
}

std::optional<Rejection> MaxPerHostFilter::CheckEmpty(const TaskContext&, const HostState&) const {
  return std::nullopt;  // an empty host holds no task of anybody
}

std::string MaxPerHostFilter::Describe(const TaskContext& t, const Rejection& r) const {
  if (r.reason >= t.shape.max_per_host.size()) return "max_per_host";
  const MaxPerHostConstraint& c = t.shape.max_per_host[r.reason];
  if (c.task_label.empty()) return absl::StrCat("max_per_host ", c.max_per_host, " of the job");
  std::string value;
  for (const auto& [k, v] : t.shape.job_labels) {
    if (k == c.task_label) value = v;
  }
  return absl::StrCat("max_per_host ", c.max_per_host, " of ", c.task_label, "=", value);
}

}  // namespace paceline::placement
