#include "placement/scorers/avoid_reclaim_scorer.h"

namespace paceline::placement {

double AvoidReclaimScorer::Score(const ScoreInput& in) const {
  if (in.task.shape.revocable || in.host.revocable_allocated().IsZero()) return 1.0;
  return in.task.shape.resources.FitsIn(in.host.FreeFor(true)) ? 1.0 : 0.0;
}

}  // namespace paceline::placement
