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
//      revocable tasks hold (a new report, or a report gone stale) reclaims some (reclaim.cc);
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
#include "jobmgr/job_manager.h"
#include "placement/cluster_snapshot.h"
#include "placement/engine.h"
#include "resmgr/resource_manager.h"
#include "scheduler/actions.h"
#include "scheduler/host_tracker.h"
#include "scheduler/usage_tracker.h"

namespace paceline::scheduler {

struct CoreConfig {
  resmgr::ResourceManagerConfig resmgr;
  placement::EngineConfig placement;
  absl::Duration host_timeout = defaults::kHostTimeout;
};

// What an agent declares when it (re)connects.
struct HostRegistration {
  std::string name;
  Resources capacity;                   // offered: cpu, memory, disk (gpu from gpu_models)
  std::vector<std::string> gpu_models;  // one entry per device
  std::vector<std::pair<std::string, std::string>> labels;
  std::vector<placement::PortRange> ports;
};

// A run an agent reports when it registers, with the ports and GPU devices it holds.
struct ReportedRun {
  RunId run;
  std::vector<std::pair<std::string, uint32_t>> ports;
  std::vector<uint32_t> gpu_devices;
};

// What an agent measured for one of its runs.
struct ReportedUsage {
  RunId run;
  Resources used;  // cpu_milli and memory_bytes
};

class SchedulerCore {
 public:
  static absl::StatusOr<std::unique_ptr<SchedulerCore>> Create(CoreConfig config);

  // Rebuilds pools, jobs, tasks and the known hosts from the store after a restart. Hosts stay
  // disconnected until their agents register again; tasks that were running wait for them
  // (and are declared LOST if their host does not come back within the host timeout).
  absl::Status Restore(const records::StoreContents& contents, absl::Time now, Actions& out);

  // --- pools ---
  absl::Status CreatePool(const std::string& path, const PoolSpec& spec, Actions& out);
  absl::StatusOr<std::vector<std::string>> UpdatePool(const std::string& path, const PoolSpec& spec,
                                                      bool force, Actions& out);
  absl::Status DeletePool(const std::string& path, Actions& out);

  // --- jobs ---
  // Validates that the pool exists and is a leaf and that one gang of the job could ever fit
  // the pool's limit; then creates the job (its tasks PENDING).
  absl::StatusOr<JobId> CreateJob(JobSpec spec, const std::string& pool, absl::Time now,
                                  Actions& out);
  absl::Status KillJob(JobId id, absl::Time now, Actions& out);
  absl::Status KillInstance(TaskId task, absl::Time now, Actions& out);
  absl::Status RestartInstances(JobId id, const std::vector<uint32_t>& instances, absl::Time now,
                                Actions& out);
  absl::Status DeleteJob(JobId id, Actions& out);
  // Stateful: let a waiting instance start elsewhere with an empty volume (see JobManager).
  absl::Status ReleaseVolume(TaskId task, absl::Time now, Actions& out);
  // Rolling updates (see jobmgr/job_manager.h); UpdateJob also checks that a gang of the new
  // spec fits the job's pool.
  absl::StatusOr<uint64_t> UpdateJob(JobId id, jobmgr::JobManager::UpdateRequest req,
                                     absl::Time now, Actions& out);
  absl::Status PauseUpdate(JobId id, bool paused, absl::Time now, Actions& out);
  absl::Status AbortUpdate(JobId id, absl::Time now, Actions& out);
  absl::StatusOr<uint64_t> RollbackJob(JobId id, uint64_t version, UpdateSpec options,
                                       absl::Time now, Actions& out);

  // --- hosts and agents ---
  // `running`: the runs the agent has (from its checkpoint). Runs the core does not own are
  // killed; runs the core believes are on this host but the agent does not have are LOST; runs
  // the core owns but does not account for (after a master restart) are adopted: recorded on
  // the host and in the resource manager as running, without going through admission.
  absl::Status RegisterHost(const HostRegistration& reg, const std::vector<ReportedRun>& running,
                            absl::Time now, Actions& out);
  // False when the host must register again (unknown, or already declared lost).
  bool Heartbeat(const std::string& host, absl::Time now);
  void OnStatus(const jobmgr::StatusReport& report, absl::Time now, Actions& out);
  // Host maintenance (maintenance.cc): drain (DRAINING, then DRAINED when no live task is
  // left), down (only once DRAINED), up. NOT_FOUND for an unknown host, FAILED_PRECONDITION for
  // a transition that is not allowed (the message says what to do first).
  absl::Status SetMaintenance(const std::string& host, records::HostMaintenance next,
                              absl::Time now, Actions& out);
  // What isolation the host's agent has (for `host list`).
  void SetIsolation(const std::string& host, std::string isolation) {
    hosts_.SetIsolation(host, std::move(isolation));
  }

  // --- usage (soft state: measured by the agents, never stored) ---
  // The latest usage `host`'s agent measured; replaces its previous report. Runs that are not
  // the current run of a RUNNING task on this host are ignored. Each cycle, the slack of the
  // regular runs (allocated - used, see usage_tracker.h) is offered to revocable work.
  void ReportUsage(const std::string& host, const HostUsageSample& sample,
                   const std::vector<ReportedUsage>& runs, absl::Time now);
  // The current run's fresh measurement, if any.
  std::optional<RunUsageView> RunUsage(TaskId task, absl::Time now) const;
  std::optional<HostUsageView> HostUsage(const std::string& host, absl::Time now) const {
    return usage_.HostUsage(host, now);
  }
  // What RunCycle passes to the resource manager as CycleInput.allocated_unused.
  Resources AllocatedUnused(absl::Time now) const { return usage_.AllocatedUnused(now); }

  // --- the cycle ---
  void RunCycle(absl::Time now, Actions& out);

  // --- reads ---
  const jobmgr::JobManager& jobs() const { return jobs_; }
  const resmgr::ResourceManager& resources() const { return rm_; }
  const placement::ClusterSnapshot& snapshot() const { return snapshot_; }
  const HostTracker& hosts() const { return hosts_; }
  // Tasks placed since this core was created.
  uint64_t placements() const { return placements_; }
  // Why a PENDING/READY task is not running yet, in one line; empty when it is not waiting.
  std::string WhyPending(TaskId task) const;

 private:
  explicit SchedulerCore(CoreConfig config, std::unique_ptr<placement::PlacementEngine> engine);

  struct GangInfo {
    JobId job;
    absl::InlinedVector<TaskId, 1> tasks;  // most gangs have one member: no allocation
    bool admitted = false;
    uint32_t unplaced = 0;  // admitted members still without a host
  };

  // Applies what the job manager asked (enqueue, withdraw, release) to the resource manager
  // and the snapshot, and moves its batch, launches and kills into `out`.
  void Absorb(jobmgr::Effects& fx, absl::Time now, Actions& out);
  void EnqueueGangs(const std::vector<TaskId>& tasks, absl::Time now);
  // FAILED_PRECONDITION when one gang of `spec` exceeds the pool's limit (could never run).
  absl::Status CheckGangFits(const JobSpec& spec, PoolId pool_id, const std::string& pool) const;
  // Every member of `task`'s gang with a host: placed this cycle (placed_now_) or with a live
  // run (its host and ports in the snapshot). Built once per gang, kept in `cache`.
  using PeerCache =
      absl::flat_hash_map<std::pair<JobId, uint32_t>, std::shared_ptr<const std::vector<GangPeer>>>;
  std::shared_ptr<const std::vector<GangPeer>> PeersOf(TaskId task, uint32_t gang_size,
                                                       PeerCache& cache) const;
  // Revocable work (reclaim.cc). Brings the hosts' slack into the snapshot and reclaims on
  // the hosts whose revocable work no longer fits it.
  enum class ReclaimCause { kRegularWork, kSlackShrank, kUsageUnknown };
  void SyncSlack(absl::Time now, Actions& out);
  // Preempts (REVOKED) revocable tasks of `host` until the rest fits (HostState::
  // RevocableExcess, not counting those already being stopped). No-op when nothing exceeds.
  void ReclaimRevocable(HostId host, ReclaimCause cause, absl::Time now, Actions& out);
  // Builds the resource manager's request for `tasks` of one job, as gang `gid`.
  resmgr::GangRequest GangRequestOf(const jobmgr::Job& job, absl::Span<const TaskId> tasks,
                                    uint64_t gid) const;
  void Adopt(const ReportedRun& run, HostId host, absl::Time now);
  void ReleaseTask(TaskId task);
  void PlaceAdmitted(absl::Time now, Actions& out);
  void ExpireHosts(absl::Time now, Actions& out);
  // Maintenance (maintenance.cc).
  void ApplyMaintenance(HostId id, records::HostMaintenance m, Actions& out);
  records::HostRecord HostRecordOf(const TrackedHost& h) const;
  void DrainStep(absl::Time now, Actions& out);
  // Daemon jobs (daemons.cc).
  void ReconcileDaemons(absl::Time now, Actions& out);
  std::optional<HostId> DaemonHostOf(TaskId task) const;
  std::optional<HostId> VolumeHostOf(const jobmgr::Job& job, uint32_t instance) const;
  // During an update with in_place: the instance's previous host, preferred when it still fits.
  std::optional<placement::PreviousHost> InPlaceHost(const jobmgr::Job& job,
                                                     uint32_t instance) const;
  absl::StatusOr<std::shared_ptr<const placement::TaskShape>> ShapeOf(const jobmgr::Job& job,
                                                                      uint32_t instance);

  CoreConfig config_;
  jobmgr::JobManager jobs_;
  resmgr::ResourceManager rm_;
  placement::ClusterSnapshot snapshot_;
  std::unique_ptr<placement::PlacementEngine> engine_;
  HostTracker hosts_;
  UsageTracker usage_;
  bool daemons_dirty_ = true;
  uint32_t draining_hosts_ = 0;
  std::vector<JobId> daemon_jobs_;
  absl::flat_hash_map<TaskId, HostId>
      daemon_pins_;  // daemon instance -> its host  // hosts or daemon jobs changed: reconcile
                     // daemons next cycle
  uint64_t next_gang_ = 1;
  uint64_t placements_ = 0;
  absl::flat_hash_map<uint64_t, GangInfo> gangs_;                  // by GangId value
  absl::flat_hash_map<TaskId, uint64_t> gang_of_;                  // task -> gang, until released
  std::vector<uint64_t> to_place_;                                 // admitted gangs without hosts
  absl::flat_hash_map<TaskId, placement::Assignment> placed_now_;  // this cycle's placements
  absl::flat_hash_map<TaskId, std::string> why_;                   // placement explanations
  // By job and spec version.
  absl::flat_hash_map<std::pair<JobId, uint32_t>, std::shared_ptr<const placement::TaskShape>>
      shapes_;
};

}  // namespace paceline::scheduler
