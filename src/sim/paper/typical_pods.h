#pragma once
// The FGD paper's "typical pods" and its node fragmentation measure (the artifact's
// GetTypicalPods and NodeGpuShareFragAmountScore), which its FGD policy descends and its
// reports plot.
//
// Typical pods: the trace's tasks grouped by (cpu_score, gpu_milli, gpus, models), the groups
// taken from the most frequent down until they cover `popularity_percent` of the tasks (95 in
// the published runs), their weights renormalised to sum to 1. CPU-only tasks take part. Groups
// of equal count are taken in the order of their key (the artifact takes them in Go's map
// order, which differs from run to run).
//
// Fragmentation of a node: the sum over typical pods of weight x the node's free milli-GPUs
// the pod could not use:
//   - a CPU-only pod: all of them (the artifact counts them whether or not the pod fits);
//   - a pod that does not accept the node's model, that lacks devices with room, or whose
//     cpu_score exceeds the node's cpu left: all of them;
//   - otherwise the free milli-GPUs of the devices with less free than the pod's gpu_milli.
//
// Thread-safety: a value type; its const methods are reentrant.

#include <vector>

#include "sim/paper/paper_model.h"

namespace paceline::sim::paper {

struct TypicalPod {
  PaperPod pod;
  double weight = 0;  // in (0, 1]; the weights sum to 1
};

class TypicalPods {
 public:
  static TypicalPods From(const std::vector<PaperPod>& trace, double popularity_percent = 95);

  const std::vector<TypicalPod>& pods() const { return pods_; }
  // Milli-GPUs (a weighted sum, so fractional).
  double NodeFragmentation(const PaperNode& n) const;

 private:
  std::vector<TypicalPod> pods_;
};

}  // namespace paceline::sim::paper
