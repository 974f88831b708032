#pragma once
// WorkloadDeltaScorer: the base of the scorers that rate a placement by how much it changes a
// per-host measure of the engine's target workload (GpuWorkload), in milli-GPUs:
//   score = 0.5 - 0.5 * tanh(delta / 1000), delta = measure after - measure before:
// strictly decreasing in delta, in (0, 1), 0.5 for no change, about +-0.38 away from it for one
// whole GPU of change. Neutral (0.5) without a workload or on a host without GPUs.
//
// Caches each host's current measure by (host version, workload generation), and the measure
// after the last placement rated there (by task shape and device choice): the tasks of a class
// come one after another and most hosts do not change in between.
// Thread-safety: single-threaded (mutable cache); see scorer.h.

#include <span>
#include <vector>

#include "placement/scorer.h"

namespace paceline::placement {

class WorkloadDeltaScorer : public Scorer {
 public:
  double Score(const ScoreInput& in) const final;
  void ResetCaches() const final { cache_.clear(); }

 protected:
  // The measure of `h` after it also takes `extra` and `shares` (both empty: as it is).
  virtual double Measure(const GpuWorkload& w, const HostState& h, const Resources& extra,
                         std::span<const GpuShare> shares) const = 0;

 private:
  struct Entry {
    uint64_t version = ~uint64_t{0};
    uint64_t generation = 0;
    double value = 0;
    uint64_t after_key = 0;  // shape signature and device choice of `after`
    double after = 0;
  };
  mutable std::vector<Entry> cache_;
};

}  // namespace paceline::placement
