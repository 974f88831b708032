// One-line summaries of specs for `paceline job validate` / `paceline pool validate`.

#include "absl/strings/str_cat.h"
#include "common/units.h"
#include "spec/yaml_reader.h"
#include "spec/yaml_spec.h"

namespace paceline {
namespace {

std::string DimsLine(const PoolSpec& spec, int64_t DimSpec::*field) {
  std::string out;
  for (Dim d : kAllDims) {
    absl::StrAppend(&out, out.empty() ? "" : " ", DimName(d), "=",
                    FormatQuantity(d, spec.dim(d).*field));
  }
  return out;
}

}  // namespace

std::string SummarizeJobSpec(const JobSpec& spec) {
  std::string instances =
      spec.type == JobType::kDaemon
          ? "one instance per host"
          : absl::StrCat(spec.instances, spec.instances == 1 ? " instance" : " instances");
  std::string out =
      absl::StrCat("job ", spec.name, ": ", JobTypeName(spec.type), ", ", instances, ", priority ",
                   spec.priority, ", per instance ", spec.task.resources.ToString());
  if (!spec.roles.empty()) {
    absl::StrAppend(&out, ", roles");
    for (size_t i = 0; i < spec.roles.size(); ++i) {
      absl::StrAppend(&out, i == 0 ? " " : " + ", spec.roles[i].name, " ", spec.roles[i].instances);
    }
  }
  if (spec.gang.rendezvous != Rendezvous::kNone) {
    absl::StrAppend(&out, ", gangs of ", spec.sla.min_running_instances, " meeting by ",
                    RendezvousName(spec.gang.rendezvous));
  }
  if (!spec.instance_overrides.empty()) {
    absl::StrAppend(&out, ", ", spec.instance_overrides.size(), " instance override",
                    spec.instance_overrides.size() == 1 ? "" : "s");
  }
  return out;
}

std::string SummarizePoolSpec(const PoolSpec& spec) {
  std::string out = absl::StrCat("pool: ", PoolTypeName(spec.type), ", reservation ",
                                 DimsLine(spec, &DimSpec::reservation), ", limit ",
                                 DimsLine(spec, &DimSpec::limit));
  if (spec.controller_limit_percent) {
    absl::StrAppend(&out, ", controller_limit ",
                    yaml_internal::FormatNumber(*spec.controller_limit_percent), "%");
  }
  if (spec.slack_limit_percent) {
    absl::StrAppend(&out, ", slack_limit ", yaml_internal::FormatNumber(*spec.slack_limit_percent),
                    "%");
  }
  return out;
}

}  // namespace paceline
