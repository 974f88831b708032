#pragma once
// Filter "gpu_devices" (dynamic): N whole GPUs need N acceptable devices with nothing allocated;
// a fraction f needs one acceptable device with at least f free (devices are shared by
// fractional tasks up to 1000 milli-GPUs each).
// Reasons: 1 = too few free whole devices (asked N, available count), 2 = no device with f free
// (asked f, available = the most free on one acceptable device).
//
// Thread-safety: stateless; see filter.h.

#include "placement/filter.h"

namespace paceline::placement {

class GpuDevicesFilter final : public Filter {
 public:
  absl::string_view name() const override { return "gpu_devices"; }
  bool is_static() const override { return false; }
  std::optional<Rejection> Check(const TaskContext& t, const HostState& h) const override;
  std::optional<Rejection> CheckEmpty(const TaskContext& t, const HostState& h) const override;
  std::string Describe(const TaskContext& t, const Rejection& r) const override;
};

}  // namespace paceline::placement
