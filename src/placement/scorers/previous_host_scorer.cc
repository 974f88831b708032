#include "placement/scorers/previous_host_scorer.h"

namespace paceline::placement {

double PreviousHostScorer::Score(const ScoreInput& in) const {
  const auto& prev = in.task.task.previous;
  return prev && !prev->stateful && prev->host == in.host.id() ? 1.0 : 0.0;
}

}  // namespace paceline::placement
