#pragma once
// Scorer "pack" (bin-packing, best-fit): prefers the host that is fullest after the placement —
// the mean over the host's dimensions of (allocated + asked) / capacity.
//
// Thread-safety: see scorer.h.

#include "placement/scorer.h"

namespace paceline::placement {

class PackScorer final : public Scorer {
 public:
  absl::string_view name() const override { return "pack"; }
  double Score(const ScoreInput& in) const override;
};

}  // namespace paceline::placement
