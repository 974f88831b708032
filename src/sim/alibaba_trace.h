#pragma once
// Reader of the Alibaba GPU cluster trace (cluster-trace-gpu-v2023, "openb"), the workload of
// the FGD paper (Weng et al., USENIX ATC 2023). Used by the placement replay
// (placement_trace_replay) and by `paceline sim`.
//
// Node files (openb_node_list_*.csv):  sn,cpu_milli,memory_mib,gpu,model
// Task files (openb_pod_list_*.csv):   name,cpu_milli,memory_mib,num_gpu,gpu_milli
//                                      [,gpu_spec,qos,pod_phase,creation_time,deletion_time,
//                                       scheduled_time]
// Columns are found by their header name, so files with fewer optional columns (e.g.
// openb_pod_list_multigpu20.csv) read the same. GPU asks: `num_gpu` whole devices, except
// num_gpu == 1 with gpu_milli < 1000, which asks that fraction of one device; `gpu_spec` lists
// acceptable models separated by '|' (empty = any).
//
// Errors (InvalidArgument) name the line and column: a missing required column, a field that
// is not a number, a negative amount, a wrong number of fields. Plain CSV without quoting, as
// the trace is; CRLF line ends and a trailing empty line are accepted.
//
// Thread-safety: pure functions (the Read* ones read a file).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/resources.h"

namespace paceline::sim {

struct AlibabaNode {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpus = 0;
  std::string model;  // empty for CPU-only nodes

  // cpu, memory in bytes, no disk, gpu = 1000 per device.
  Resources capacity() const;
};

struct AlibabaTask {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;
  int64_t gpu_milli = 0;                // per device
  std::vector<std::string> gpu_models;  // from gpu_spec; empty = any
  std::string qos;                      // LS / Burstable / BE / Guaranteed; may be empty
  std::string phase;                    // pod_phase; may be empty
  int64_t creation_time = -1;           // seconds; -1 when the file has no such column
  int64_t deletion_time = -1;
  int64_t scheduled_time = -1;

  // Milli-GPUs asked in total: a fraction of one device, or 1000 per whole device.
  int64_t gpu_ask_milli() const;
  Resources resources() const;
};

absl::StatusOr<std::vector<AlibabaNode>> ParseAlibabaNodes(absl::string_view csv);
absl::StatusOr<std::vector<AlibabaTask>> ParseAlibabaTasks(absl::string_view csv);
// Read and parse a file; errors are prefixed with the path.
absl::StatusOr<std::vector<AlibabaNode>> ReadAlibabaNodes(const std::string& path);
absl::StatusOr<std::vector<AlibabaTask>> ReadAlibabaTasks(const std::string& path);

}  // namespace paceline::sim
