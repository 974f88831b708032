#pragma once
// Fill mode under the FGD paper's protocol (`paceline sim --fill --protocol fgd`): the
// arrivals, tie order and measure of paper_protocol.h, with either one of the paper's
// policies scored as its artifact scores them (paper_policies.h) or one of Paceline's placement
// profiles placing through the real PlacementEngine (every feasible host scored). Both keep
// the same mirror of the cluster, so the fragmentation curve (the paper's measure,
// typical_pods.h) is computed the same way for every profile.
//
// Paceline's hosts enter the ClusterSnapshot in the run's node order, so wherever its engine
// takes "the first" of equal candidates, it meets the nodes in the same order as the paper's
// policies do.
//
// Thread-safety: pure functions; a PaperTrace is immutable once built.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/alibaba_trace.h"
#include "sim/fill.h"
#include "sim/paper/paper_model.h"
#include "sim/paper/typical_pods.h"

namespace paceline::sim::paper {

// A trace prepared once for every run.
struct PaperTrace {
  std::vector<PaperNode> nodes;           // sorted by name
  std::vector<AlibabaNode> source_nodes;  // same order
  std::vector<PaperPod> pods;             // the tasks sorted by name
  std::vector<uint32_t> type_of;          // pods[i]'s distinct type, 0..types-1
  uint32_t types = 0;
  FillWorkload workload;  // Paceline's shapes (same order as pods) and task distribution
  TypicalPods typical;
  int64_t gpus = 0;

  // InvalidArgument for a cluster without GPUs or an empty task list.
  static absl::StatusOr<PaperTrace> Build(std::vector<AlibabaNode> nodes,
                                          std::vector<AlibabaTask> tasks);
};

// The paper's six policies, then Paceline's `default`.
std::vector<std::string> ProtocolProfiles();
// One run: `profile` (a paper policy, PolicyNames(), or what FillEngineConfig accepts; crashes
// on anything else) with `seed`, arrivals up to target_percent of the GPU
// capacity; points at every integer percent.
// A Paceline profile scores `max_candidates` feasible hosts per placement (0: every one;
// nullopt: the profile's own limits).
FillRun RunProtocolOnce(const PaperTrace& trace, const std::string& profile, uint64_t seed,
                        double target_percent, std::optional<uint32_t> max_candidates = 0);

}  // namespace paceline::sim::paper
