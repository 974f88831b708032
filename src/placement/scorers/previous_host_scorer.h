#pragma once
// Scorer "previous_host": 1 on the previous host of an instance being restarted or updated in
// place (PlacementTask::previous, not stateful), 0 elsewhere.
//
// Thread-safety: see scorer.h.

#include "placement/scorer.h"

namespace paceline::placement {

class PreviousHostScorer final : public Scorer {
 public:
  absl::string_view name() const override { return "previous_host"; }
  double Score(const ScoreInput& in) const override;
};

}  // namespace paceline::placement
