#pragma once
// Absorber: applies what the job manager asked for in its Effects (jobmgr/job_manager.h) to the
// rest of the core, and moves the changes into the caller's Actions:
//   - fx.release: the task's resources are free again (snapshot, usage, resource manager);
//   - fx.withdraw: a queued gang leaves the queue, an admitted one frees its tasks;
//   - fx.enqueue: new gangs for the resource manager (Gangs), but for a cron job's own tasks,
//     which never run (its runs are jobs of their own, cron_runs.h);
//   - fx.launches: one Launch each, with the whole gang's peer list (scheduler_core.h);
//   - the batch and the kills: appended to `out`, with the usage of the runs it ends
//     (accounting.h), and the retention index told of every job the batch touched or deleted
//     (retention.h); the record of a live run of a service or stateful
//     job carries the run's ports (a standby answers DNS from the store, docs/services.md).
// Every change of the core that drives the job manager goes through Absorb, in the order the
// job manager produced it.
//
// Thread-safety: single-threaded, part of the core.

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "jobmgr/job_manager.h"
#include "placement/cluster_snapshot.h"
#include "resmgr/resource_manager.h"
#include "scheduler/actions.h"
#include "scheduler/gangs.h"
#include "scheduler/retention.h"
#include "scheduler/usage_tracker.h"

namespace paceline::scheduler {

class Absorber {
 public:
  Absorber(const jobmgr::JobManager& jobs, resmgr::ResourceManager& rm,
           placement::ClusterSnapshot& snapshot, UsageTracker& usage, Retention& retention,
           Gangs& gangs)
      : jobs_(jobs),
        rm_(rm),
        snapshot_(snapshot),
        usage_(usage),
        retention_(retention),
        gangs_(gangs) {}

  // Applies `fx` (see above) and leaves it empty.
  void Absorb(jobmgr::Effects& fx, absl::Time now, Actions& out);

 private:
  // Every member of `task`'s gang with a host: launched in this batch (`placed`) or with a live
  // run (its host and ports in the snapshot). Built once per gang, kept in `cache`.
  using PeerCache =
      absl::flat_hash_map<std::pair<JobId, uint32_t>, std::shared_ptr<const std::vector<GangPeer>>>;
  using PlacedNow = absl::flat_hash_map<TaskId, const jobmgr::Placement*>;
  std::shared_ptr<const std::vector<GangPeer>> PeersOf(TaskId task, uint32_t gang_size,
                                                       const PlacedNow& placed,
                                                       PeerCache& cache) const;
  // Sets the ports of the records of live runs of jobs with endpoints: those the snapshot holds
  // for the run, else those of its launch in this batch (`placed`).
  void RecordPorts(std::vector<records::TaskRecord>& tasks, const PlacedNow& placed) const;
  // Tells the retention index about every job whose record or tasks `fx` changes.
  void NoteFinished(const jobmgr::Effects& fx, absl::Time now);
  void ReleaseTask(TaskId task);

  const jobmgr::JobManager& jobs_;
  resmgr::ResourceManager& rm_;
  placement::ClusterSnapshot& snapshot_;
  UsageTracker& usage_;
  Retention& retention_;
  Gangs& gangs_;
};

}  // namespace paceline::scheduler
