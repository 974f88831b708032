#include "placement/scorers/spread_scorer.h"

namespace paceline::placement {

double SpreadScorer::Score(const ScoreInput& in) const {
  return 1.0 - UtilisationAfter(in.host, in.task.shape.resources, in.task.shape.revocable);
}

}  // namespace paceline::placement
