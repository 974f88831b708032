#pragma once
// Scorer "gpu_packing" (the FGD paper's GPU-packing baseline): a fractional task prefers a
// device that is already partly used; every GPU task prefers hosts whose GPUs are more
// allocated; a task without GPUs prefers hosts without GPUs.
//
// Thread-safety: see scorer.h.

#include "placement/scorer.h"

namespace paceline::placement {

class GpuPackingScorer final : public Scorer {
 public:
  absl::string_view name() const override { return "gpu_packing"; }
  bool device_aware() const override { return true; }
  double Score(const ScoreInput& in) const override;
};

}  // namespace paceline::placement
