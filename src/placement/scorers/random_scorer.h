#pragma once
// Scorer "random" (random-fit): a uniform pseudo-random score from (seed, decision sequence,
// host); deterministic for a given seed and input.
//
// Thread-safety: see scorer.h.

#include "placement/scorer.h"

namespace paceline::placement {

class RandomScorer final : public Scorer {
 public:
  absl::string_view name() const override { return "random"; }
  double Score(const ScoreInput& in) const override;
};

}  // namespace paceline::placement
