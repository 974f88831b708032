#include "placement/scorers/gpu_stranding_scorer.h"

#include <cmath>

namespace paceline::placement {

double GpuStrandingScorer::Score(const ScoreInput& in) const {
  const GpuWorkload* w = in.env.workload;
  const HostState& h = in.host;
  if (w == nullptr || w->empty() || h.gpus().empty()) return 0.5;
  uint32_t slot = h.id().value();
  if (slot >= cache_.size()) cache_.resize(slot + 1);
  Entry& e = cache_[slot];
  if (e.version != h.version() || e.generation != in.env.workload_generation) {
    e.stranding = w->Stranding(h);
    e.version = h.version();
    e.generation = in.env.workload_generation;
  }
  double delta = w->Stranding(h, in.task.shape.resources, in.gpus) - e.stranding;
  return 0.5 - 0.5 * std::tanh(delta / kMilliPerGpu);
}

}  // namespace paceline::placement
