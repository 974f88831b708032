#pragma once
// Scorer "gpu_model_pressure": keeps GPU tasks that may run on several models off the models
// that model-constrained tasks need. Each model's pressure p is what the engine's target
// workload's constrained tasks would take of its devices (GpuWorkload::ModelPressure, against
// the snapshot's devices per model); a placement scores 1 / (1 + p) of the devices it takes
// (their mean). So a task of any model goes to the models nothing else needs, and leaves the
// scarce ones to the tasks that can run nowhere else.
//
// Not run (Applies() false) for a task without GPUs (what it takes from a GPU host's cpu is
// gpu_stranding's business), for a task that accepts a single model (every host it may use
// scores the same), and when no type of the workload is constrained. The pressures are kept
// until the workload or the snapshot's hosts change (workload generation, static_seq()).
// Thread-safety: single-threaded (mutable cache); see scorer.h.

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "placement/scorer.h"

namespace paceline::placement {

class GpuModelPressureScorer final : public Scorer {
 public:
  absl::string_view name() const override { return "gpu_model_pressure"; }
  bool Applies(const TaskContext& t, const ClusterSnapshot& snap,
               const ScoreEnv& env) const override;
  double Score(const ScoreInput& in) const override;
  void ResetCaches() const override { fresh_ = false; }

 private:
  // What the pressures were computed from.
  mutable bool fresh_ = false;
  mutable const ClusterSnapshot* snapshot_ = nullptr;
  mutable uint64_t static_seq_ = 0;
  mutable uint64_t generation_ = 0;
  mutable absl::flat_hash_map<std::string, double> pressure_;
};

}  // namespace paceline::placement
