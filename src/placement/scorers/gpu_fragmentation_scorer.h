#pragma once
// Scorer "gpu_fragmentation" (Fragmentation Gradient Descent, Weng et al., USENIX ATC 2023):
// prefers the host and GPU device where the placement increases the host's fragmentation
// (GpuWorkload::Fragmentation, measured against the engine's target workload) the least.
// Score = 0.5 - 0.5 * tanh(delta / 1000), delta in milli-GPUs: strictly decreasing in delta,
// in (0, 1), 0.5 for no change, about +-0.38 away from it for one whole GPU of change; a
// placement that reduces fragmentation scores above 0.5.
//
// Caches each host's current fragmentation by (host version, workload generation).
// Thread-safety: single-threaded (mutable cache); see scorer.h.

#include <vector>

#include "placement/scorer.h"

namespace paceline::placement {

class GpuFragmentationScorer final : public Scorer {
 public:
  absl::string_view name() const override { return "gpu_fragmentation"; }
  bool device_aware() const override { return true; }
  double Score(const ScoreInput& in) const override;
  void ResetCaches() const override { cache_.clear(); }

 private:
  struct Entry {
    uint64_t version = ~uint64_t{0};
    uint64_t generation = 0;
    double fragmentation = 0;
  };
  mutable std::vector<Entry> cache_;
};

}  // namespace paceline::placement
