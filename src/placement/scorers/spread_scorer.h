#pragma once
// Scorer "spread": prefers the emptiest host after the placement (1 - pack's utilisation).
//
// Thread-safety: see scorer.h.

#include "placement/scorer.h"

namespace paceline::placement {

class SpreadScorer final : public Scorer {
 public:
  absl::string_view name() const override { return "spread"; }
  double Score(const ScoreInput& in) const override;
};

}  // namespace paceline::placement
