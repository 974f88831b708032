#pragma once
// Scorer "image_locality": for a task that runs from an image (TaskShape::image), prefers the
// hosts that have the image cached, in proportion to the image's size — a host that would
// have to pull it scores 1 - min(1, size / 1 GiB), a host that has it 1. A small image barely
// matters; an image of 1 GiB or more is worth as much as the scorer's weight. The size is the
// largest any host reported (ClusterSnapshot::ImageSize); an image no host has scores every
// host the same, and the scorer does not run.
//
// Thread-safety: see scorer.h.

#include "placement/scorer.h"

namespace paceline::placement {

class ImageLocalityScorer final : public Scorer {
 public:
  // The size at which a missing image costs the whole weight.
  static constexpr int64_t kFullWeightBytes = int64_t{1} << 30;

  absl::string_view name() const override { return "image_locality"; }
  bool Applies(const TaskContext& t, const ClusterSnapshot& snapshot,
               const ScoreEnv& env) const override;
  double Score(const ScoreInput& in) const override;

 private:
  mutable double missing_score_ = 1.0;  // for the task Applies was last asked about
};

}  // namespace paceline::placement
