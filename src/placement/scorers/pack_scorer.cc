#include "placement/scorers/pack_scorer.h"

namespace paceline::placement {

double PackScorer::Score(const ScoreInput& in) const {
  return UtilisationAfter(in.host, in.task.shape.resources, in.task.shape.revocable);
}

}  // namespace paceline::placement
