#include "placement/filters/gpu_models_filter.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace paceline::placement {

std::optional<Rejection> GpuModelsFilter::Check(const TaskContext& t, const HostState& h) const {
  int64_t needed = t.shape.gpu_devices_needed();
  if (needed == 0) return std::nullopt;
  const auto& models = t.shape.gpu_models;
  int64_t have = 0;
  if (models.empty()) {
    have = static_cast<int64_t>(h.gpus().size());
  } else {
    for (const GpuDevice& d : h.gpus()) {
      have += std::binary_search(models.begin(), models.end(), d.model) ? 1 : 0;
    }
  }
  if (have >= needed) return std::nullopt;
  Rejection r = Reject(have == 0 ? 1 : 2);
  r.dimension = Dim::kGpu;
  r.asked = needed;
  r.available = have;
  return r;
}

std::optional<Rejection> GpuModelsFilter::CheckEmpty(const TaskContext& t,
                                                     const HostState& h) const {
  return Check(t, h);
}

std::string GpuModelsFilter::Describe(const TaskContext& t, const Rejection& r) const {
  std::string of = t.shape.gpu_models.empty()
                       ? std::string()
                       : absl::StrCat(" of model [", absl::StrJoin(t.shape.gpu_models, " "), "]");
  if (r.reason == 1) return absl::StrCat("no GPU", of);
  return absl::StrCat("fewer than ", t.shape.gpu_devices_needed(), " GPUs", of);
}

}  // namespace paceline::placement
