#pragma once
// Scorer "gpu_stranding": prefers the host where the placement strands the least GPU — free
// GPU that the host's free cpu and memory can no longer serve at the target workload's own
// cpu and memory per GPU (GpuWorkload::Stranding). It steers cpu- and memory-hungry tasks, and
// tasks without GPUs, to the hosts that have cpu and memory to spare for their GPUs, and away
// from the hosts whose idle GPUs will need that cpu.
// Score = 0.5 - 0.5 * tanh(delta / 1000), delta in milli-GPUs stranded (as gpu_fragmentation).
//
// Caches each host's current stranding by (host version, workload generation).
// Thread-safety: single-threaded (mutable cache); see scorer.h.

#include <vector>

#include "placement/scorer.h"

namespace paceline::placement {

class GpuStrandingScorer final : public Scorer {
 public:
  absl::string_view name() const override { return "gpu_stranding"; }
  double Score(const ScoreInput& in) const override;
  void ResetCaches() const override { cache_.clear(); }

 private:
  struct Entry {
    uint64_t version = ~uint64_t{0};
    uint64_t generation = 0;
    double stranding = 0;
  };
  mutable std::vector<Entry> cache_;
};

}  // namespace paceline::placement
