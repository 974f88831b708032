#include "placement/scorers/image_locality_scorer.h"

#include <algorithm>

#include "placement/cluster_snapshot.h"

namespace paceline::placement {

bool ImageLocalityScorer::Applies(const TaskContext& t, const ClusterSnapshot& snapshot,
                                  const ScoreEnv&) const {
  if (t.shape.image.empty()) return false;
  int64_t size = snapshot.ImageSize(t.shape.image);
  if (size <= 0) return false;
  missing_score_ =
      1.0 - std::min(1.0, static_cast<double>(size) / static_cast<double>(kFullWeightBytes));
  return true;
}

double ImageLocalityScorer::Score(const ScoreInput& in) const {
  return in.host.images().contains(in.task.shape.image) ? 1.0 : missing_score_;
}

}  // namespace paceline::placement
