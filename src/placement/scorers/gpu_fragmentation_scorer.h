#pragma once
// Scorer "gpu_fragmentation" (Fragmentation Gradient Descent, Weng et al., USENIX ATC 2023):
// prefers the host and GPU device where the placement increases the host's fragmentation
// (GpuWorkload::Fragmentation, measured against the engine's target workload) the least; a
// placement that reduces fragmentation scores above 0.5 (workload_delta_scorer.h).
// Thread-safety: single-threaded (mutable cache); see scorer.h.

#include "placement/scorers/workload_delta_scorer.h"

namespace paceline::placement {

class GpuFragmentationScorer final : public WorkloadDeltaScorer {
 public:
  absl::string_view name() const override { return "gpu_fragmentation"; }
  bool device_aware() const override { return true; }

 protected:
  double Measure(const GpuWorkload& w, const HostState& h, const Resources& extra,
                 std::span<const GpuShare> shares) const override {
    return w.Fragmentation(h, extra, shares);
  }
};

}  // namespace paceline::placement
