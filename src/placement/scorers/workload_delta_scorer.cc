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
  uint64_t key = in.task.shape.signature;
  for (const GpuShare& g : in.gpus) {
    key = (key ^ (uint64_t{g.device} << 32 | static_cast<uint32_t>(g.milli))) * 0x9E3779B97F4A7C15u;
  }
  if (e.version != h.version() || e.generation != in.env.workload_generation) {
    e.value = Measure(*w, h, Resources(), {});
    e.version = h.version();
    e.generation = in.env.workload_generation;
    e.after_key = key + 1;  // no placement rated on this state yet
  }
  if (e.after_key != key) {
    e.after = Measure(*w, h, in.task.shape.resources, in.gpus);
    e.after_key = key;
  }
  double delta = e.after - e.value;
  return 0.5 - 0.5 * std::tanh(delta / kMilliPerGpu);
}

}  // namespace paceline::placement
