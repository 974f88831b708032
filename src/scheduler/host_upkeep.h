#pragma once
// HostUpkeep: what the core does about its hosts on its own, with the rules of hostmgr/ —
// hosts that missed their heartbeats are LOST (their tasks with them), draining hosts move
// their tasks away and become DRAINED, daemon jobs get one instance per eligible host
// (hostmgr/daemon_set.h); and a host's maintenance state recorded and told to placement. Every
// cycle runs Tick; the job API and the agents' calls mark the daemons dirty when hosts or
// daemon jobs change.
//
// Thread-safety: single-threaded, part of the core.

#include <cstdint>
#include <optional>

#include "absl/time/time.h"
#include "common/ids.h"
#include "hostmgr/daemon_set.h"
#include "hostmgr/host_tracker.h"
#include "jobmgr/job_manager.h"
#include "placement/cluster_snapshot.h"
#include "records/records.h"
#include "scheduler/absorber.h"
#include "scheduler/actions.h"
#include "scheduler/usage_tracker.h"

namespace paceline::scheduler {

class HostUpkeep {
 public:
  HostUpkeep(hostmgr::HostTracker& hosts, jobmgr::JobManager& jobs,
             placement::ClusterSnapshot& snapshot, UsageTracker& usage, Absorber& absorber)
      : hosts_(hosts), jobs_(jobs), snapshot_(snapshot), usage_(usage), absorber_(absorber) {}

  // A host known from the store after a restart: disconnected, in its stored maintenance state.
  void Restore(const records::HostRecord& h, absl::Time now);
  // The daemon jobs (hostmgr::DaemonSet).
  void AddDaemonJob(JobId job) { daemons_.Add(job); }
  void ForgetJob(JobId job) { daemons_.Remove(job); }
  // Hosts or daemon jobs changed: the daemons are reconciled at the next chance.
  void MarkDirty() { daemons_.MarkDirty(); }
  // The host a daemon instance is pinned to (hostmgr::DaemonSet::HostOf).
  std::optional<HostId> DaemonHostOf(TaskId task) const {
    return daemons_.HostOf(task, jobs_, hosts_);
  }

  // One cycle's upkeep: hosts that expired by `now`, then the draining hosts, then the daemons.
  void Tick(absl::Time now, Actions& out);
  // Records `m` as the host's maintenance state and tells placement (when it is connected).
  void ApplyMaintenance(HostId id, records::HostMaintenance m, Actions& out);
  // One step of every draining host (hostmgr::DrainStep); those that have nothing left are
  // DRAINED.
  void Drain(absl::Time now, Actions& out);
  // No-op unless the daemons are dirty.
  void ReconcileDaemons(absl::Time now, Actions& out);

 private:
  void Expire(absl::Time now, Actions& out);

  hostmgr::HostTracker& hosts_;
  jobmgr::JobManager& jobs_;
  placement::ClusterSnapshot& snapshot_;
  UsageTracker& usage_;
  Absorber& absorber_;
  hostmgr::DaemonSet daemons_;
  uint32_t draining_ = 0;  // hosts DRAINING
};

}  // namespace paceline::scheduler
