#pragma once
// Fill mode ("workload inflation", Weng et al., USENIX ATC 2023): how much of a GPU cluster a
// placement policy can allocate before tasks stop fitting, and how fragmented it leaves it.
//
// For each placement profile and repetition r (seed = options.seed + r): the trace's nodes form
// the cluster; the trace's tasks are shuffled with the seed, then tasks drawn from them
// uniformly at random with replacement are placed one at a time until the GPU they asked for
// in total ("arrived") reaches target_percent of the cluster's GPU capacity. Tasks never
// leave; a task that fits no host is dropped and counted as failed. At every bucket_percent of
// arrival the run records the unallocated GPU (% of capacity, in milli-GPUs), the failed tasks
// so far, and the fragmentation measure (placement/gpu_workload.h: the expected unallocated
// GPU a task drawn from the trace could not use, summed over nodes, % of capacity).
// Every run of one seed sees the same arrivals, so profiles compare side by side.
//
// Fill mode exercises the placement engine (the policy under test) with a ClusterSnapshot, as
// the master's placement step does, without the resource manager (one unlimited pool would
// admit every task anyway). Every feasible host is scored (max_candidates = 0) and the
// gpu_fragmentation scorer measures against the trace's task distribution.
//
// `protocol` "fgd" runs the FGD paper's protocol instead (sim/paper/paper_fill.h): its cluster
// order, arrival sequence and measure, and the paper's own policies beside Paceline's profiles.
//
// Thread-safety: pure functions.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "placement/cluster_snapshot.h"
#include "placement/engine.h"
#include "placement/gpu_workload.h"
#include "placement/placement_request.h"
#include "sim/alibaba_trace.h"
#include "sim/sim_report.h"
#include "sim/trace_replay.h"

namespace paceline::sim {

struct FillOptions {
  // Empty: the protocol's own list (DefaultFillProfiles).
  std::vector<std::string> profiles;
  std::string protocol = "paceline";  // or "fgd"
  uint64_t seed = 1;
  int repetitions = 1;
  double target_percent = 130;
  double bucket_percent = 1;
  // Feasible hosts a Paceline profile scores per placement; 0 = every one (exact); nullopt =
  // the profile's own limits, as in the master (placement/profile.h). The paper's policies
  // always score every node.
  std::optional<uint32_t> max_candidates = 0;
};

struct FillPoint {
  double arrived_pct = 0;
  double unallocated_pct = 0;
  double fragmentation_pct = 0;
  int64_t failed = 0;
};

struct FillRun {
  std::string profile;
  uint64_t seed = 0;
  std::vector<FillPoint> points;  // one per bucket
  int64_t arrived = 0;
  int64_t failed = 0;
  int64_t failed_gpu_tasks = 0;
  double allocated_pct = 0;  // GPU allocated at the end, % of capacity
  double seconds = 0;        // wall time (not deterministic)
};

// The trace's tasks as placement shapes (one per distinct type) and its task distribution.
struct FillWorkload {
  std::vector<std::shared_ptr<const placement::TaskShape>> tasks;  // one per trace task
  placement::GpuWorkload distribution;
  size_t types = 0;
  static absl::StatusOr<FillWorkload> Build(const std::vector<AlibabaTask>& tasks);
};

// The profiles a protocol compares when none are named: Paceline's for "paceline", the
// paper's six policies and Paceline's `default` for "fgd".
std::vector<std::string> DefaultFillProfiles(const std::string& protocol);

// An engine configuration for fill mode: `profile` is a name from placement::ProfileNames() or
// policy weights (placement::ProfileFromWeights, e.g. "pack=1+gpu_fragmentation=16"); every
// `max_candidates` feasible hosts scored (0: every one; nullopt: the profile's own limits);
// `workload` the target of the fragmentation and stranding scorers. InvalidArgument for anything
// else.
absl::StatusOr<placement::EngineConfig> FillEngineConfig(
    const std::string& profile, uint64_t seed, const placement::GpuWorkload& workload,
    std::optional<uint32_t> max_candidates = 0);

// The nodes as a cluster snapshot: host slot i is nodes[order[i]] (order empty: nodes[i]).
placement::ClusterSnapshot FillCluster(const std::vector<AlibabaNode>& nodes,
                                       std::span<const size_t> order = {});

// One fill run (crashes on an unknown profile: check it first with FillEngineConfig).
FillRun FillOnce(const std::vector<AlibabaNode>& nodes, const FillWorkload& workload,
                 const std::string& profile, uint64_t seed, const FillOptions& options);

// Every profile x repetition (o.profiles must be resolved: non-empty). INVALID_ARGUMENT for an
// unknown protocol or profile, or a cluster without GPUs.
absl::StatusOr<std::vector<FillRun>> RunFillRuns(const std::vector<AlibabaNode>& nodes,
                                                 const std::vector<AlibabaTask>& tasks,
                                                 const FillOptions& options);

// The runs as a report: per profile, per bucket mean and standard deviation over the
// repetitions (docs/sim.md); the unallocated GPU at 100 % arrived with every seed's value
// (when the target reaches 100); wall times in `timing`.
Json FillReport(const AlibabaTraceInput& input, const FillOptions& options,
                const std::vector<FillRun>& runs);
absl::StatusOr<Json> RunFill(const AlibabaTraceInput& input, const FillOptions& options);
// A table per measure at every 10 % of arrival, and the final state per profile.
std::string FillSummaryText(const Json& report);

}  // namespace paceline::sim
