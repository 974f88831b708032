#include "placement/scorers/gpu_fragmentation_scorer.h"

#include <algorithm>

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
  return std::clamp(0.5 - delta / 16000.0, 0.0, 1.0);
}

}  // namespace paceline::placement
