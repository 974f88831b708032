#include "placement/filters/gpu_devices_filter.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/units.h"

namespace paceline::placement {

std::optional<Rejection> GpuDevicesFilter::Check(const TaskContext& t, const HostState& h) const {
  int64_t ask = t.shape.gpu_milli();
  if (ask == 0) return std::nullopt;
  const auto& models = t.shape.gpu_models;
  bool whole = ask >= kMilliPerGpu;
  int64_t full = 0;
  int64_t best = 0;
  if (models.empty()) {
    // Fast path: the host's summary answers without looking at devices.
    full = h.full_free_gpus();
    best = full > 0 ? kMilliPerGpu : h.max_partial_free_gpu();
  } else {
    for (const GpuDevice& d : h.gpus()) {
      if (!std::binary_search(models.begin(), models.end(), d.model)) continue;
      full += d.whole_free() ? 1 : 0;
      best = std::max(best, d.free_milli());
    }
  }
  if (whole ? full * kMilliPerGpu >= ask : best >= ask) return std::nullopt;
  Rejection r = Reject(whole ? 1 : 2);
  r.dimension = Dim::kGpu;
  r.asked = whole ? ask / kMilliPerGpu : ask;
  r.available = whole ? full : best;
  return r;
}

std::optional<Rejection> GpuDevicesFilter::CheckEmpty(const TaskContext& t,
                                                      const HostState& h) const {
  int64_t needed = t.shape.gpu_devices_needed();
  if (needed == 0) return std::nullopt;
  int64_t have = 0;
  for (const GpuDevice& d : h.gpus()) have += t.shape.AcceptsGpuModel(d.model) ? 1 : 0;
  if (have >= needed) return std::nullopt;
  Rejection r = Reject(1);
  r.dimension = Dim::kGpu;
  r.asked = needed;
  r.available = have;
  return r;
}

std::string GpuDevicesFilter::Describe(const TaskContext& t, const Rejection& r) const {
  if (r.reason == 1) return absl::StrCat("fewer than ", r.asked, " free GPUs");
  return absl::StrCat("no GPU with ", FormatGpu(t.shape.gpu_milli()), " free");
}

}  // namespace paceline::placement
