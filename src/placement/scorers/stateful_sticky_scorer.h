#pragma once
// Scorer "stateful_sticky": 1 on the previous host of a stateful instance (its volume lives
// there), 0 elsewhere. Weighted above everything else in every profile.
//
// Thread-safety: see scorer.h.

#include "placement/scorer.h"

namespace paceline::placement {

class StatefulStickyScorer final : public Scorer {
 public:
  absl::string_view name() const override { return "stateful_sticky"; }
  double Score(const ScoreInput& in) const override;
};

}  // namespace paceline::placement
