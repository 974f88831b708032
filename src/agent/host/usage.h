#pragma once
// UsageSnapshot: what the host and each run have used so far, cumulative, as the runtime reads
// it (TaskRuntime::Usage) and the UsageSampler turns into rates.
//
// Thread-safety: value types.

#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "common/ids.h"

namespace paceline::agent {

struct TaskUsage {
  RunId run;
  int64_t cpu_usec = 0;      // cumulative CPU time (cgroup, or the main process without one)
  int64_t memory_bytes = 0;  // current (cgroup usage, or the main process's RSS)
  bool from_cgroup = false;
};

struct HostUsage {
  int64_t cpu_busy_usec = 0;   // cumulative over all CPUs since boot (/proc/stat)
  int64_t cpu_total_usec = 0;  // busy + idle
  int64_t memory_total_bytes = 0;
  int64_t memory_available_bytes = 0;
};

struct UsageSnapshot {
  absl::Time time;
  HostUsage host;
  std::vector<TaskUsage> tasks;
};

}  // namespace paceline::agent
