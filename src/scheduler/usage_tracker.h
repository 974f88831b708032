#pragma once
// UsageTracker: the latest measured usage of each running run and of each host, as the agents
// report it every few seconds — soft state, never stored. It keeps, per host, the slack of the
// host's regular (non-revocable) runs: Σ max(0, allocated − used) per dimension (cpu and
// memory), which the resource manager offers to revocable work (CycleInput.allocated_unused).
//
// Freshness: a report is valid for `stale_after` intervals of its agent (3 by default); a stale
// host contributes no slack and shows no usage. A run that ends is forgotten at once (Forget),
// so its slack never outlives it.
//
// The caller (SchedulerCore) decides which reported runs count: only the current run of a
// RUNNING task, with its allocation and its class. It also follows each host's slack into the
// placement snapshot (revocable tasks may be placed on it) through TakeSlackChanges: a change
// log of hosts, so that nothing scans every host per cycle.
//
// Thread-safety: single-threaded; not thread-safe. Pure: time is passed in.

#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "common/resources.h"

namespace paceline::scheduler {

// One run's measurement, checked by the caller against what the core knows.
struct RunUsageSample {
  RunId run;
  Resources used;       // cpu_milli and memory_bytes
  Resources allocated;  // what the run asked for
  bool regular = true;  // false: revocable work (it is slack's consumer, not its source)
};

// One image in a host's cache, as its agent reports it (docs/containers.md).
struct HostImage {
  std::string config_digest;
  std::vector<std::string> refs;  // canonical references
  int64_t size_bytes = 0;
  absl::Time last_used = absl::InfinitePast();
  uint32_t tasks = 0;  // running tasks that use it
  friend bool operator==(const HostImage&, const HostImage&) = default;
};

// What one agent measured on its host.
struct HostUsageSample {
  Resources used;  // the whole machine: cpu and memory
  int64_t memory_total_bytes = 0;
  absl::Duration interval = absl::Seconds(5);  // the agent's reporting interval
  // The images the host has cached (canonical reference -> bytes), when the agent sent its
  // inventory with this report (it does when it changed, and after connecting).
  std::optional<std::vector<HostImage>> images;
};

struct RunUsageView {
  uint32_t run = 0;
  Resources used;
  absl::Time at;
};

struct HostUsageView {
  Resources used;
  Resources tasks_used;  // Σ over its measured runs
  int64_t memory_total_bytes = 0;
  Resources slack;  // Σ over its regular runs of max(0, allocated - used)
  absl::Time at;
};

class UsageTracker {
 public:
  explicit UsageTracker(int stale_after_intervals = 3) : stale_after_(stale_after_intervals) {}

  // Replaces everything `host` reported before with this report, measured at `now`.
  void Report(const std::string& host, const HostUsageSample& sample,
              const std::vector<RunUsageSample>& runs, absl::Time now);
  // The run of `task` ended (or the task left its host): it no longer counts.
  void Forget(TaskId task);
  // The host disconnected or was lost: its report no longer counts.
  void ForgetHost(const std::string& host);

  // Σ slack over the hosts with a fresh report.
  Resources AllocatedUnused(absl::Time now) const;
  // One host's slack if its report is fresh, zero otherwise.
  Resources HostSlack(const std::string& host, absl::Time now) const;

  // The hosts whose HostSlack may have changed since the previous call, each once and by name:
  // `reported`
  // when a new report arrived (the slack is then freshly measured), otherwise because one of
  // its runs or the host was forgotten or its report went stale by `now`.
  struct SlackChange {
    std::string host;
    bool reported = false;
  };
  std::vector<SlackChange> TakeSlackChanges(absl::Time now);
  // The task's latest measurement, if fresh (its current run is for the caller to check).
  std::optional<RunUsageView> RunUsage(TaskId task, absl::Time now) const;
  std::optional<HostUsageView> HostUsage(const std::string& host, absl::Time now) const;

 private:
  struct RunEntry {
    uint32_t run = 0;
    std::string host;
    Resources used;
    Resources slack;
  };
  struct HostEntry {
    HostUsageView view;
    absl::Time expires;
    std::vector<TaskId> tasks;
  };
  struct Expiry {
    absl::Time at;
    std::string host;
    friend bool operator>(const Expiry& a, const Expiry& b) { return a.at > b.at; }
  };
  bool Fresh(const HostEntry& h, absl::Time now) const { return now < h.expires; }
  void MarkChanged(const std::string& host, bool reported);

  int stale_after_;
  absl::flat_hash_map<std::string, bool> changed_;  // host -> reported, since the last Take
  std::priority_queue<Expiry, std::vector<Expiry>, std::greater<Expiry>> expiries_;
  absl::flat_hash_map<TaskId, RunEntry> runs_;
  absl::flat_hash_map<std::string, HostEntry> hosts_;
};

}  // namespace paceline::scheduler
