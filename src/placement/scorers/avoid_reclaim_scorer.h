#pragma once
// Scorer "avoid_reclaim": keeps regular work off the capacity revocable tasks run on while
// other hosts have room. A regular task may take capacity that revocable tasks hold (they are
// then reclaimed; see host_state.h): the score is 1 when the task fits beside the host's
// revocable work (its ask fits in FreeFor(true), so nothing has to be reclaimed), 0 when placing
// it there would reclaim some. Revocable tasks always score 1.
//
// Thread-safety: see scorer.h.

#include "placement/scorer.h"

namespace paceline::placement {

class AvoidReclaimScorer final : public Scorer {
 public:
  absl::string_view name() const override { return "avoid_reclaim"; }
  // Only regular tasks, and only while some revocable task is placed.
  bool Applies(const TaskContext& t, const ClusterSnapshot& snap,
               const ScoreEnv& env) const override;
  double Score(const ScoreInput& in) const override;
};

}  // namespace paceline::placement
