#pragma once
// DaemonSet: daemon jobs — one instance on every UP, connected host whose labels satisfy the
// job's label constraints.
//
// Each instance is pinned to one host (placement requires that host: HostOf). When hosts join,
// come back up or leave (lost, draining, down), or a daemon job is created, the caller marks
// the set dirty and the next Reconcile brings every daemon job in line: a host without an
// instance gets one (reusing an ended instance's slot, else a new instance), and an instance
// whose host is no longer eligible is stopped (it stays KILLED; its slot may be reused). It
// acts through the job manager; the caller applies the effects.
//
// Thread-safety: single-threaded, like the rest of the core.

#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "hostmgr/host_tracker.h"
#include "jobmgr/job_manager.h"

namespace paceline::hostmgr {

class DaemonSet {
 public:
  void Add(JobId job) { jobs_.push_back(job); }
  void Remove(JobId job);
  bool empty() const { return jobs_.empty(); }
  // Hosts or daemon jobs changed: reconcile at the next Reconcile.
  void MarkDirty() { dirty_ = true; }
  // The host a daemon instance is pinned to (or, for an instance placed before a restart, the
  // host it runs on).
  std::optional<HostId> HostOf(TaskId task, const jobmgr::JobManager& jobs,
                               const HostTracker& hosts) const;
  // No-op unless dirty.
  void Reconcile(const HostTracker& hosts, jobmgr::JobManager& jobs, absl::Time now,
                 jobmgr::Effects& fx);

 private:
  std::vector<JobId> jobs_;
  absl::flat_hash_map<TaskId, HostId> pins_;  // daemon instance -> its host
  bool dirty_ = true;
};

}  // namespace paceline::hostmgr
