#include "placement/scorers/avoid_reclaim_scorer.h"

#include "placement/cluster_snapshot.h"

namespace paceline::placement {

bool AvoidReclaimScorer::Applies(const TaskContext& t, const ClusterSnapshot& snap,
                                 const ScoreEnv&) const {
  return !t.shape.revocable && snap.revocable_tasks() > 0;
}

double AvoidReclaimScorer::Score(const ScoreInput& in) const {
  if (in.task.shape.revocable || in.host.revocable_tasks() == 0) return 1.0;
  return in.task.shape.resources.FitsIn(in.host.FreeFor(true)) ? 1.0 : 0.0;
}

}  // namespace paceline::placement
