#pragma once
// Filter "gpu_models" (static): a task asking for GPUs needs a host with enough devices
// (N for N whole GPUs, 1 for a fraction) of an acceptable model (any model when the shape
// lists none), counted on capacity, not on what is free (gpu_devices does that).
// Reasons: 1 = no device of an acceptable model, 2 = fewer such devices than asked.
//
// Thread-safety: stateless; see filter.h.

#include "placement/filter.h"

namespace paceline::placement {

class GpuModelsFilter final : public Filter {
 public:
  absl::string_view name() const override { return "gpu_models"; }
  bool is_static() const override { return true; }
  std::optional<Rejection> Check(const TaskContext& t, const HostState& h) const override;
  std::optional<Rejection> CheckEmpty(const TaskContext& t, const HostState& h) const override;
  std::string Describe(const TaskContext& t, const Rejection& r) const override;
};

}  // namespace paceline::placement
