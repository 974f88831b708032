#pragma once
// The FGD paper's baselines and FGD itself, scored as its artifact scores them in the published
// runs (experiments/run_scripts/generate_run_scripts.py: each policy the only score plugin,
// percentageOfNodesToScore 100). Every score is an integer in 0..100, truncated like the
// artifact's int64(); the node with the highest score wins and equal scores go to the node that
// comes first in the run's node order (paper_protocol.h).
//
//   paper-random      a feasible node drawn uniformly; a fraction on a device drawn uniformly
//                     among those with room
//   paper-dot-product 100 x (1 - (cpu_left x cpu + gpu_left x gpu) / 2), every term divided
//                     by the largest node (128 cores, 8 GPUs); gpu = all devices' free sum
//   paper-clustering  by the GPU-pod kinds the node holds: only this pod's kind 75..100, this
//                     and others 50..75, none 25..50, only others 0..25, each range rising with
//                     the node's used GPU; CPU-only pods score 0 everywhere
//   paper-packing     a fraction on a used device 50..100, whole devices of a used node 33..50,
//                     an idle node 0..33 (fewer free devices is better); CPU-only pods 0
//   paper-best-fit    100 x (1 - ((cpu_left - cpu) / 128 cores + (gpu_left - gpu) / 8 GPUs) / 2)
//   paper-fgd         100 x sigmoid((frag_before - frag_after) / 1000), typical_pods.h
// Devices: whole GPUs take the lowest-numbered idle devices (every policy). A fraction goes to
// the device with the least free that fits (lowest number on ties), except under paper-random
// (a random device with room) and paper-fgd (the device with the best FGD score, lowest number
// on ties).
//
// Thread-safety: pure functions (ChooseDevices draws from the caller's SeededRandom).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sim/paper/paper_model.h"
#include "sim/paper/seeded_random.h"
#include "sim/paper/typical_pods.h"

namespace paceline::sim::paper {

enum class Policy { kRandom, kDotProduct, kClustering, kPacking, kBestFit, kFgd };

// "paper-random", "paper-dot-product", ... in the paper's order (Fig. 9a).
std::vector<std::string> PolicyNames();
absl::string_view PolicyName(Policy p);
// NotFound for a name that is not one of PolicyNames().
absl::StatusOr<Policy> ParsePolicy(absl::string_view name);
// The artifact's name of the policy (RandomScore, DotProductScore, ...), for the reports.
absl::string_view ArtifactName(Policy p);

// The score of a node on which `pod` fits (PaperNode::Fits); `frag` is the node's current
// fragmentation (TypicalPods::NodeFragmentation), read by paper-fgd only. paper-random scores
// every node 0: the runner draws its node instead.
int64_t Score(Policy policy, const PaperNode& node, double frag, const PaperPod& pod,
              const TypicalPods& typical);

// The devices `pod` takes on the chosen node, one per device asked (empty for CPU-only pods).
std::vector<int> ChooseDevices(Policy policy, const PaperNode& node, double frag,
                               const PaperPod& pod, const TypicalPods& typical,
                               SeededRandom& random);

}  // namespace paceline::sim::paper
