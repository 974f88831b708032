#include "placement/scorers/workload_delta_scorer.h"

#include <cmath>

namespace paceline::placement {

double WorkloadDeltaScorer::Score(const ScoreInput& in) const {
  const GpuWorkload* w = in.env.workload;
  const HostState& h = in.host;
  if (w == nullptr || w->empty() || h.gpus().empty()) return 0.5;
  uint32_t slot = h.id().value();
  if (slot >= cache_.size()) cache_.resize(slot + 1);
  Entry& e = cache_[slot];
  if (e.version != h.version() || e.generation != in.env.workload_generation) {
    e.value = Measure(*w, h, Resources(), {});
    e.version = h.version();
    e.generation = in.env.workload_generation;
  }
  double delta = Measure(*w, h, in.task.shape.resources, in.gpus) - e.value;
  return 0.5 - 0.5 * std::tanh(delta / kMilliPerGpu);
}

}  // namespace paceline::placement
