#include "placement/scorers/dot_product_scorer.h"

namespace paceline::placement {

double DotProductScorer::Score(const ScoreInput& in) const {
  const Resources& ask = in.task.shape.resources;
  const Resources& cap = in.host.capacity();
  const Resources& free = in.host.FreeFor(in.task.shape.revocable);
  double dot = 0;
  int dims = 0;
  for (int i = 0; i < kNumDims; ++i) {
    if (cap.at(i) <= 0) continue;
    double c = static_cast<double>(cap.at(i));
    dot += (static_cast<double>(ask.at(i)) / c) * (static_cast<double>(free.at(i)) / c);
    ++dims;
  }
  return dims == 0 ? 1.0 : 1.0 - dot / dims;
}

}  // namespace paceline::placement
