#include "placement/scorers/gpu_model_pressure_scorer.h"

#include "placement/cluster_snapshot.h"

namespace paceline::placement {

bool GpuModelPressureScorer::Applies(const TaskContext& t, const ClusterSnapshot& snap,
                                     const ScoreEnv& env) const {
  const std::vector<std::string>& models = t.shape.gpu_models;  // sorted
  if (t.shape.gpu_milli() == 0 || (!models.empty() && models.front() == models.back())) {
    return false;
  }
  if (env.workload == nullptr || !env.workload->has_gpu_tasks()) return false;
  if (!fresh_ || snapshot_ != &snap || static_seq_ != snap.static_seq() ||
      generation_ != env.workload_generation) {
    snapshot_ = &snap;
    static_seq_ = snap.static_seq();
    generation_ = env.workload_generation;
    pressure_ = env.workload->ModelPressure(snap.gpu_devices_by_model());
    fresh_ = true;
  }
  return !pressure_.empty();
}

double GpuModelPressureScorer::Score(const ScoreInput& in) const {
  if (in.gpus.empty()) return 1.0;
  double p = 0;
  for (const GpuShare& g : in.gpus) {
    auto it = pressure_.find(in.host.gpus()[g.device].model);
    if (it != pressure_.end()) p += it->second;
  }
  return 1.0 / (1.0 + p / static_cast<double>(in.gpus.size()));
}

}  // namespace paceline::placement
