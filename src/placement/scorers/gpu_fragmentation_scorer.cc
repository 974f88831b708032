#include "placement/scorers/gpu_fragmentation_scorer.h"

#include <cmath>

namespace paceline::placement {

double GpuFragmentationScorer::Score(const ScoreInput& in) const {
  const GpuWorkload* w = in.env.workload;
  const HostState& h = in.host;
  if (w == nullptr || w->empty() || h.gpus().empty()) return 0.5;
  uint32_t slot = h.id().value();
  if (slot >= cache_.size()) cache_.resize(slot + 1);
  Entry& e = cache_[slot];
  if (e.version != h.version() || e.generation != in.env.workload_generation) {
    e.fragmentation = w->Fragmentation(h);
    e.version = h.version();
    e.generation = in.env.workload_generation;
  }
  double after = w->Fragmentation(h, in.task.shape.resources, in.gpus);
  double delta = after - e.fragmentation;
  return 0.5 - 0.5 * std::tanh(delta / kMilliPerGpu);
}

}  // namespace paceline::placement
