#include "agent/host/usage_sampler.h"

#include <algorithm>

namespace paceline::agent {

int64_t CpuMilli(int64_t cpu_usec_delta, absl::Duration wall) {
  int64_t wall_usec = absl::ToInt64Microseconds(wall);
  if (wall_usec <= 0 || cpu_usec_delta <= 0) return 0;
  return static_cast<int64_t>(static_cast<double>(cpu_usec_delta) * 1000.0 /
                              static_cast<double>(wall_usec));
}

std::optional<UsageReport> UsageSampler::Sample(const UsageSnapshot& snapshot) {
  if (last_ != absl::InfinitePast() && snapshot.time <= last_) return std::nullopt;
  const bool first = last_ == absl::InfinitePast();
  UsageReport r;
  r.time = snapshot.time;
  r.interval = snapshot.time - last_;
  if (!first) {
    // Host: busy time summed over all CPUs (/proc/stat) over the wall time.
    int64_t busy = snapshot.host.cpu_busy_usec - last_host_.cpu_busy_usec;
    r.host_cpu_milli = CpuMilli(busy, r.interval);
  }
  r.host_memory_total_bytes = snapshot.host.memory_total_bytes;
  r.host_memory_used_bytes =
      std::max<int64_t>(0, snapshot.host.memory_total_bytes - snapshot.host.memory_available_bytes);
  absl::flat_hash_map<RunId, Prev> next;
  next.reserve(snapshot.tasks.size());
  for (const TaskUsage& t : snapshot.tasks) {
    next[t.run] = Prev{t.cpu_usec};
    auto it = runs_.find(t.run);
    if (first || it == runs_.end()) continue;
    r.runs.push_back(RunUsageRate{t.run, CpuMilli(t.cpu_usec - it->second.cpu_usec, r.interval),
                                  t.memory_bytes});
  }
  std::sort(r.runs.begin(), r.runs.end(),
            [](const RunUsageRate& a, const RunUsageRate& b) { return a.run < b.run; });
  runs_ = std::move(next);
  last_host_ = snapshot.host;
  last_ = snapshot.time;
  if (first) return std::nullopt;
  return r;
}

}  // namespace paceline::agent
