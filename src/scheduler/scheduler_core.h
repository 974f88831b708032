#pragma once
// SchedulerCore: the whole deterministic core of Paceline in one place — the job manager
// (jobs, tasks, goal states), the resource manager (pools, entitlement, admission,
// preemption), the placement engine over a snapshot of the hosts, and host liveness. The master
// runs it on its event-loop thread; `paceline sim` runs the very same class against simulated
// hosts and a simulated clock.
//
// Every call takes `now` and fills Actions (see actions.h): commit actions.batch durably, then
// send actions.launches / actions.kills to the agents. Nothing here does I/O.
//
// One scheduling cycle (RunCycle):
//   1. timers: restart backoffs that expired, max_running_time deadlines, hosts that missed
//      their heartbeats (their tasks become LOST and are rescheduled);
//   2. the resource manager recomputes entitlements, preempts what exceeds them, and admits
//      queued gangs;
//   3. each host's slack (what its regular tasks hold but do not use, from the usage reports)
//      is brought into the placement snapshot; a host whose slack shrank below what its
//      revocable tasks hold (a new report, or a report gone stale) reclaims some
//      (scheduler_core_reclaim.cc);
//   4. the placement engine places every admitted gang that has no host yet (all-or-nothing per
//      gang); a gang that does not fit keeps its admission and is retried next cycle, with an
//      explanation on each of its tasks ("why pending");
//   5. placed tasks become LAUNCHING (recorded, then launched); a host where regular work was
//      placed on capacity revocable tasks held reclaims them.
//
// Revocable work (sla.revocable) is placed on a host's unallocated capacity plus its slack;
// regular work sees a host's capacity minus regular allocations only (placement/host_state.h
// has the accounting). Reclaiming kills revocable tasks of the host, lowest priority and most
// recently started first, just enough that what they hold fits capacity − regular + slack
// again; each victim (with its whole gang) is preempted with reason REVOKED and a message
// that names the host, the cause and the numbers, and runs again elsewhere or later. The
// slack counts only while the host's report is fresh: a host whose report went stale has no
// slack, takes no revocable work beyond its unallocated capacity and reclaims what it had on
// slack. After every cycle, on every host: regular allocations <= capacity, and the revocable
// tasks not already being stopped fit in capacity − regular allocations + slack.
//
// Gangs: the instances a job creates are grouped into gangs of sla.min_running_instances
// consecutive instances, aligned on multiples of the gang size (instances 0..k-1, k..2k-1 ...;
// the last gang may be smaller); an instance that restarts on its own (after a failure, a
// preemption or a lost host) is a gang of one. Every launch of a gang member carries the whole
// gang's peer list: the members placed with it, and the others where their live run is.
//
// Who calls what: the API's job calls go through job_control() (job_control.h), pool calls
// through pools() (pool_control.h), and the agents' messages through agents()
// (agent_control.h); the driver (master or sim) calls Restore once and RunCycle every cycle;
// readers use the const views (jobs(), resources(), snapshot(), hosts(), WhyPending). The core
// owns its parts and wires them together; each part has its own state and is handed, at
// construction, only the parts it uses:
//   - jobmgr::JobManager, resmgr::ResourceManager, placement::ClusterSnapshot and the engine,
//     hostmgr::HostTracker, UsageTracker, History, Retention: the state;
//   - WaitReasons (why a task waits), ShapeCache (tasks' shapes for placement), Gangs (tasks to
//     the resource manager as gangs), Absorber (the job manager's effects applied to the rest),
//     HostUpkeep (expiry, drain, maintenance, daemons);
//   - PoolControl, JobControl, AgentControl: the entry points, grouped by caller.
// The core itself runs the cycle: admission's results placed, and revocable work reclaimed
// (scheduler_core_reclaim.cc). Host records, maintenance and daemon fan-out are hostmgr's
// (src/hostmgr).
//
// Thread-safety: single-threaded; not thread-safe.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/defaults.h"
#include "hostmgr/host_tracker.h"
#include "jobmgr/job_manager.h"
#include "placement/cluster_snapshot.h"
#include "placement/engine.h"
#include "resmgr/resource_manager.h"
#include "scheduler/absorber.h"
#include "scheduler/actions.h"
#include "scheduler/agent_control.h"
#include "scheduler/gangs.h"
#include "scheduler/history.h"
#include "scheduler/host_holds.h"
#include "scheduler/host_upkeep.h"
#include "scheduler/job_control.h"
#include "scheduler/placement_retry.h"
#include "scheduler/pool_control.h"
#include "scheduler/retention.h"
#include "scheduler/shape_cache.h"
#include "scheduler/usage_tracker.h"
#include "scheduler/wait_reasons.h"

namespace paceline::scheduler {

struct CoreConfig {
  resmgr::ResourceManagerConfig resmgr;
  placement::EngineConfig placement;
  absl::Duration host_timeout = defaults::kHostTimeout;
  HistoryConfig history;  // off unless given a period (the master keeps an hour)
  // How long finished jobs stay in the live store (retention.h); a pool's retain_terminal
  // overrides it for its subtree. InfiniteDuration: forever.
  absl::Duration retain_terminal = absl::InfiniteDuration();
  // An admitted gang that placement fails again keeps its tasks' "why pending" for this long
  // before it is explained again (placement_retry.h).
  absl::Duration reexplain_after = absl::Seconds(10);
  // With backfill: how long the answer "no hosts to hold" (the gang had room, or its hosts never
  // free) stands for a gang before its hosts are looked at again (host_holds.h).
  absl::Duration host_hold_refresh = absl::Seconds(10);
};

class SchedulerCore {
 public:
  static absl::StatusOr<std::unique_ptr<SchedulerCore>> Create(CoreConfig config);
  SchedulerCore(const SchedulerCore&) = delete;
  SchedulerCore& operator=(const SchedulerCore&) = delete;

  // Rebuilds pools, jobs, tasks and the known hosts from the store after a restart: the tasks
  // of `contents`, then those `more` hands over (a streaming load's batches, pulled on this
  // thread). Hosts stay disconnected until their agents register again; tasks that were
  // running wait for them (and are declared LOST if their host does not come back within the
  // host timeout).
  absl::Status Restore(const records::StoreContents& contents, absl::Time now, Actions& out,
                       const records::TaskBatches& more = nullptr);

  // --- the cycle ---
  void RunCycle(absl::Time now, Actions& out);

  // --- entry points, by caller ---
  PoolControl& pools() { return pools_; }
  JobControl& job_control() { return job_control_; }
  AgentControl& agents() { return agents_; }
  const AgentControl& agents() const { return agents_; }

  // --- reads ---
  const jobmgr::JobManager& jobs() const { return jobs_; }
  const resmgr::ResourceManager& resources() const { return rm_; }
  const placement::ClusterSnapshot& snapshot() const { return snapshot_; }
  const hostmgr::HostTracker& hosts() const { return hosts_; }
  // Tasks placed since this core was created.
  uint64_t placements() const { return placements_; }
  // The recent points of the cluster and its pools (history.h).
  const History& history() const { return history_; }
  // Why a PENDING/READY task is not running yet, in one line; empty when it is not waiting.
  std::string WhyPending(TaskId task) const;
  // A copy that is never scheduled (a standby's, built from the followed store to answer
  // reads): WhyPending then sends the reader to the leader, which knows.
  void MarkFollower() { follower_ = true; }
  // The finished jobs and when each expires (retention.h).
  const Retention& retention() const { return retention_; }

 private:
  explicit SchedulerCore(CoreConfig config, std::unique_ptr<placement::PlacementEngine> engine);

  // Revocable work (scheduler_core_reclaim.cc). Brings the hosts' slack into the snapshot and
  // reclaims on the hosts whose revocable work no longer fits it.
  enum class ReclaimCause { kRegularWork, kSlackShrank, kUsageUnknown };
  void SyncSlack(absl::Time now, Actions& out);
  // Preempts (REVOKED) revocable tasks of `host` until the rest fits (HostState::
  // RevocableExcess, not counting those already being stopped). No-op when nothing exceeds.
  void ReclaimRevocable(HostId host, ReclaimCause cause, absl::Time now, Actions& out);
  // Which explanation a gang of one shares with like gangs (PlacementRetry): its shape less
  // its job, and how many hosts' holds its deadline falls after; 0: it shares none (a gang of
  // several, pinned, in place, max_per_host, or holding hosts).
  uint64_t ExplainKey(const placement::PlacementRequest& req) const;
  void PlaceAdmitted(absl::Time now, Actions& out);
  // Adds the cluster's and every pool's point of `now` to the history.
  void RecordHistory(absl::Time now);
  // The retention window of a pool's finished jobs: the nearest retain_terminal up the tree.
  absl::Duration RetentionWindow(const std::string& pool) const;
  std::optional<HostId> VolumeHostOf(const jobmgr::Job& job, uint32_t instance) const;
  // WhyPending without a gang restart's part: what `task` (PENDING or READY) waits for.
  std::string WhyWaiting(const jobmgr::Job& job, TaskId task) const;
  // During an update with in_place: the instance's previous host, preferred when it still fits.
  std::optional<placement::PreviousHost> InPlaceHost(const jobmgr::Job& job,
                                                     uint32_t instance) const;

  CoreConfig config_;
  jobmgr::JobManager jobs_;
  resmgr::ResourceManager rm_;
  placement::ClusterSnapshot snapshot_;
  std::unique_ptr<placement::PlacementEngine> engine_;
  hostmgr::HostTracker hosts_;
  UsageTracker usage_;
  uint64_t placements_ = 0;
  History history_;
  Retention retention_{[this](const std::string& pool) { return RetentionWindow(pool); }};
  uint64_t placements_at_last_point_ = 0;
  bool follower_ = false;  // MarkFollower
  // Gangs and their members are the resource manager's (rm_.GangOf, rm_.Members): the core
  // keeps no copy of them, which at ten million running tasks would be two more hash maps.
  std::vector<uint64_t> to_place_;  // admitted gangs without hosts
  WaitReasons why_;                 // placement explanations
  PlacementRetry retry_;            // gangs of to_place_ that would fail placement again
  ShapeCache shapes_;
  // Hosts kept for gangs that fit their pool but not yet the hosts (the resource manager's gate).
  HostHolds holds_{{rm_, jobs_, shapes_, snapshot_, *engine_}, config_.host_hold_refresh};
  Gangs gangs_{jobs_, rm_, why_};
  Absorber absorber_{jobs_, rm_, snapshot_, usage_, retention_, gangs_};
  HostUpkeep upkeep_{hosts_, jobs_, snapshot_, usage_, absorber_};
  PoolControl pools_{rm_, jobs_, retention_};
  CronRuns cron_{jobs_, job_control_};  // uses job_control_ from its first Tick on
  JobControl job_control_{jobs_, rm_, retention_, absorber_, upkeep_, why_, shapes_, cron_};
  AgentControl agents_{
      {hosts_, snapshot_, jobs_, rm_, usage_, gangs_, shapes_, why_, absorber_, upkeep_}};
};

}  // namespace paceline::scheduler
