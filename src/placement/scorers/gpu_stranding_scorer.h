#pragma once
// Scorer "gpu_stranding": prefers the host where the placement strands the least GPU — free
// GPU that the host's free cpu and memory can no longer serve at the target workload's own
// cpu and memory per GPU (GpuWorkload::Stranding). It steers cpu- and memory-hungry tasks, and
// tasks without GPUs, to the hosts that have cpu and memory to spare for their GPUs, and away
// from the hosts whose idle GPUs will need that cpu. Scored as workload_delta_scorer.h says.
// Thread-safety: single-threaded (mutable cache); see scorer.h.

#include "placement/scorers/workload_delta_scorer.h"

namespace paceline::placement {

class GpuStrandingScorer final : public WorkloadDeltaScorer {
 public:
  absl::string_view name() const override { return "gpu_stranding"; }

 protected:
  double Measure(const GpuWorkload& w, const HostState& h, const Resources& extra,
                 std::span<const GpuShare> shares) const override {
    return w.Stranding(h, extra, shares);
  }
};

}  // namespace paceline::placement
