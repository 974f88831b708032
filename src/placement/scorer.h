#pragma once
// Scorer: one soft preference of the placement pipeline (pack vs spread, GPU fragmentation,
// previous host, ...). A scorer rates one feasible (host, GPU device choice) pair for one task
// with a number in [0, 1], higher is better; the engine ranks candidates by the weighted sum of
// the profile's scorers (weights in profile.cc) and takes the best, the first on ties.
//
// A scorer that is device_aware() wants every distinct device choice of a fractional-GPU task
// scored (e.g. FGD picks the device too); otherwise the engine scores one choice per host:
// the best-fit device (least free that fits) for a fraction, the lowest free devices for
// whole GPUs.
//
// Scorers are const and deterministic; a scorer may keep a per-host cache keyed by
// HostState::version() (mutable, single-threaded), which ResetCaches() drops when the engine
// switches to another snapshot. A scorer whose Applies() is false for a task (it would score
// every host the same) is not run for it.

#include <cstdint>

#include "absl/strings/string_view.h"
#include "placement/filter.h"
#include "placement/gpu_workload.h"
#include "placement/host_state.h"

namespace paceline::placement {

class ClusterSnapshot;

// What the engine provides to every scorer for one plan.
struct ScoreEnv {
  const GpuWorkload* workload = nullptr;  // the target workload for fragmentation
  uint64_t workload_generation = 0;       // changes whenever *workload changes
  uint64_t seed = 0;                      // for randomised scorers
  uint64_t sequence = 0;                  // grows with every placement decision
};

struct ScoreInput {
  const TaskContext& task;
  const HostState& host;
  const GpuShares& gpus;  // the device choice being rated (empty for non-GPU tasks)
  const ScoreEnv& env;
};

class Scorer {
 public:
  virtual ~Scorer() = default;
  virtual absl::string_view name() const = 0;
  virtual bool device_aware() const { return false; }
  // False when the scorer would give every host the same score for this task; asked once per
  // task, before its candidates are scored, with the environment they will be scored in.
  virtual bool Applies(const TaskContext&, const ClusterSnapshot&, const ScoreEnv&) const {
    return true;
  }
  // In [0, 1]; higher is better.
  virtual double Score(const ScoreInput& in) const = 0;
  virtual void ResetCaches() const {}
};

// Fraction of `h`'s capacity in use after adding `ask`, averaged over the dimensions the host
// has (capacity > 0), as a task of the given kind sees it (HostState::AllocatedFor). Shared by
// pack and spread.
double UtilisationAfter(const HostState& h, const Resources& ask, bool revocable = false);

}  // namespace paceline::placement
