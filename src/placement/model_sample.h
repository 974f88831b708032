#pragma once
// ModelSample: how a GPU task that may run on several GPU models shares its candidates among
// them (docs/placement.md "Candidates").
//
// The engine scores the first max_candidates feasible hosts of its walk. For a task that may
// run on several models, while gpu_model_pressure tells the models apart, the first hosts of a
// tightest-first walk may all be of the models that the constrained work needs, and the hosts
// that the scorer prefers are never seen. With a sample by model, each of the k models the task
// may use (of those the snapshot has devices of) takes at most ceil(limit / k) candidates; a
// host counts for the model of its first device that the task may use. The walk goes on past
// the hosts of a model whose share is full, until every share is full, the walk ends, or it
// has visited kWalkFactor x limit hosts (the engine's bound on the extra cost).
//
// Thread-safety: single-threaded, like the engine.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "placement/cluster_snapshot.h"
#include "placement/filter.h"
#include "placement/host_state.h"

namespace paceline::placement {

class ModelSample {
 public:
  static constexpr size_t kWalkFactor = 8;

  // Starts a sample of at most `limit` candidates for `t`. False (and the sample admits every
  // host) when the task may use fewer than two of the snapshot's models.
  bool Begin(const TaskContext& t, const ClusterSnapshot& snap, size_t limit);
  // Whether `h` joins the sample: its model's share is not full. Counts it when it does.
  bool Admit(const HostState& h);

 private:
  const TaskShape* shape_ = nullptr;
  struct Taken {
    const std::string* model;
    uint32_t count;
  };
  std::vector<Taken> taken_;  // per model seen in this sample
  size_t share_ = 0;          // 0: inactive
};

}  // namespace paceline::placement
