#pragma once
// Trace replay: the Alibaba GPU trace (cluster-trace-gpu-v2023) as a scenario for the real
// scheduling core. Every node of the trace is a simulated host (its cpu, memory and GPUs, each
// GPU of the node's model); every task is a one-instance batch job that arrives at its
// creation time with its cpu, memory, GPU ask (whole devices or a fraction of one) and its
// acceptable GPU models, and runs until its deletion time (a task without one runs to the
// end). All jobs go to one pool, /trace, that may use the whole cluster.
//
// LoadAlibabaTrace takes the trace's directory (its all-node list and default pod list are
// used) or explicit files (a name containing "node_list" is a node list, "pod_list" a task
// list); `gpu_nodes_only` keeps the nodes that have GPUs.
//
// Thread-safety: pure functions (LoadAlibabaTrace reads files).

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "sim/alibaba_trace.h"
#include "sim/scenario.h"
#include "sim/sim_report.h"

namespace paceline::sim {

struct AlibabaTraceInput {
  std::vector<AlibabaNode> nodes;
  std::vector<AlibabaTask> tasks;
  std::string node_file;
  std::string task_file;
  bool gpu_nodes_only = false;
  std::string description;  // "alibaba-gpu: NODE_FILE + TASK_FILE"

  double gpus() const;
  // nodes, gpus, tasks and the file names, for reports.
  Json Summary() const;
};

absl::StatusOr<AlibabaTraceInput> LoadAlibabaTrace(const std::vector<std::string>& paths,
                                                   bool gpu_nodes_only);

struct TraceReplayOptions {
  uint64_t seed = 1;
  std::string placement = "default";
  // Default: until the last task's deletion (or creation) time.
  absl::Duration run_for = absl::InfiniteDuration();
  absl::Duration cycle_every = absl::Seconds(10);
  absl::Duration heartbeat_every = absl::Minutes(1);
};

// INVALID_ARGUMENT when the task list has no creation times (such lists are for --fill).
// Tasks the job spec validator refuses (e.g. no cpu) are left out; the count is in
// `skipped`.
absl::StatusOr<Scenario> TraceScenario(const AlibabaTraceInput& input,
                                       const TraceReplayOptions& options,
                                       size_t* skipped = nullptr);

}  // namespace paceline::sim
