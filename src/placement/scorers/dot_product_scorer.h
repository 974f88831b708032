#pragma once
// Scorer "dot_product" (Tetris-style alignment, the FGD paper's baseline): prefers the host
// whose free vector has the smallest dot product with the task's demand, both normalised by
// the host's capacity and averaged over the host's dimensions — the task goes where what it
// asks is scarcest, like best-fit weighted by the task's own shape.
//
// Thread-safety: see scorer.h.

#include "placement/scorer.h"

namespace paceline::placement {

class DotProductScorer final : public Scorer {
 public:
  absl::string_view name() const override { return "dot_product"; }
  double Score(const ScoreInput& in) const override;
};

}  // namespace paceline::placement
