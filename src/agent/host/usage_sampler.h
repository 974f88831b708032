#pragma once
// UsageSampler: turns the runtime's cumulative usage snapshots (TaskRuntime::Usage) into what
// the agent reports every usage interval — the cpu each run and the host used over the interval
// (a rate, in millicores) and the memory they hold now. A rate needs two samples: a run appears
// from its second sample on, the host from the second snapshot on. Runs that are gone from a
// snapshot are forgotten.
//
// Thread-safety: not thread-safe; owned by the agent loop. Pure: no I/O.

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "agent/host/usage.h"
#include "common/ids.h"

namespace paceline::agent {

struct RunUsageRate {
  RunId run;
  int64_t cpu_milli = 0;  // average over the interval
  int64_t memory_bytes = 0;
  friend bool operator==(const RunUsageRate&, const RunUsageRate&) = default;
};

struct UsageReport {
  absl::Time time;
  absl::Duration interval;             // since the previous snapshot
  int64_t host_cpu_milli = 0;          // the whole machine, average over the interval
  int64_t host_memory_used_bytes = 0;  // MemTotal - MemAvailable
  int64_t host_memory_total_bytes = 0;
  std::vector<RunUsageRate> runs;  // sorted by run
};

class UsageSampler {
 public:
  // The report for `snapshot` against the previous one; nullopt for the first snapshot (or one
  // not later than the previous).
  std::optional<UsageReport> Sample(const UsageSnapshot& snapshot);

 private:
  struct Prev {
    int64_t cpu_usec = 0;
  };
  absl::Time last_ = absl::InfinitePast();
  HostUsage last_host_;
  absl::flat_hash_map<RunId, Prev> runs_;
};

// cpu time used over `wall` as millicores; 0 when wall is not positive.
int64_t CpuMilli(int64_t cpu_usec_delta, absl::Duration wall);

}  // namespace paceline::agent
