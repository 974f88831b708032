#include "placement/scorers/gpu_packing_scorer.h"

namespace paceline::placement {

double GpuPackingScorer::Score(const ScoreInput& in) const {
  const HostState& h = in.host;
  if (in.task.shape.gpu_milli() == 0) {
    return h.gpus().empty() ? 1.0 : 0.0;
  }
  double host_used = h.capacity().gpu_milli() > 0
                         ? static_cast<double>(h.allocated().gpu_milli()) /
                               static_cast<double>(h.capacity().gpu_milli())
                         : 0.0;
  double device_used = 0;
  if (in.task.shape.fractional_gpu() && !in.gpus.empty()) {
    device_used = h.gpus()[in.gpus.front().device].milli_allocated > 0 ? 1.0 : 0.0;
  }
  return 0.5 * device_used + 0.5 * host_used;
}

}  // namespace paceline::placement
