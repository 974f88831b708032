#pragma once
// ResourceManager: the facade of the resource manager core — the pool tree, the admission
// queues, allocation bookkeeping, entitlement, admission and preemption — driven by its caller
// one cycle at a time.
//
// It knows pools, gangs and resource vectors; it does not know hosts or placement. Each cycle
// the caller passes the cluster capacity (what placement could use: hosts that are up) and the
// capacity that is allocated to regular tasks but measured unused (a source of slack).
//
// Protocol (the master; `paceline sim` does the same with a simulated clock):
//   CreatePool / UpdatePool / DeletePool  manage the tree (pool_tree.h for the rules; in
//                          addition only leaf pools hold work, a pool holding work cannot get
//                          children, and only a pool holding no work can be deleted).
//   Enqueue(gang, now)     queue a gang in a leaf pool (refused when it could never fit).
//   RunCycle(input, now)   recompute entitlements, reclaim excess, admit; returns the admitted
//                          gangs (hand them to placement), the preemption decisions (kill those
//                          tasks, then Release each), and per-pool stats.
//   MarkRunning(task, now) a task of an admitted gang started (orders victims; idempotent).
//   Release(task)          a task of an admitted gang no longer holds resources (finished,
//                          failed, killed, preempted, lost, or never placed). To requeue a
//                          preempted gang, Release its tasks and Enqueue it again in the same
//                          event-loop turn (between two cycles), so its demand does not blink.
//   Cancel(gang)           withdraw a gang: remove it from its queue, or release what it holds.
//   BeginPreemption(gang)  the caller stops an admitted gang for a reason of its own (a host
//                          reclaiming revocable work): as for the gangs RunCycle preempts, what
//                          it holds counts as being freed, and it is no victim any more.
// Time is always an argument; nothing here reads a clock.
//
// Ownership: the ResourceManager owns all its state; views are returned by value.
// Thread-safety: single-threaded; not thread-safe. The master calls it from its event loop.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "resmgr/admission.h"
#include "resmgr/cycle_result.h"
#include "resmgr/entitlement.h"
#include "resmgr/gang.h"
#include "resmgr/pool_tree.h"
#include "resmgr/preemption.h"
#include "resmgr/rm_state.h"
#include "resmgr/usage_decay.h"

namespace paceline::resmgr {

struct ResourceManagerConfig {
  PreemptionConfig preemption;
  // EASY backfill (backfill.h, docs/resource-manager.md "Backfill"): gangs with a
  // max_running_time may start ahead of a lane's first gang that waits, never delaying it.
  bool backfill = true;
  // At most this many gangs behind a reserved gang are looked at per lane and cycle.
  uint32_t backfill_depth = 1000;
};

struct CycleInput {
  Resources capacity;          // schedulable capacity of the cluster
  Resources allocated_unused;  // allocated to regular tasks but measured unused
  // With backfill: asked whether a lane's first gang finds hosts before it is admitted
  // (host_gate.h); null: every gang that fits its bounds is admitted.
  HostGate* hosts = nullptr;
};

// One queued gang as `paceline pool get` shows it.
struct QueuedGangView {
  uint32_t position = 0;  // 1-based, in the order the pool considers its gangs
  GangId gang;
  JobId job;
  int32_t priority = 0;
  SlaClass sla = SlaClass::kPreemptible;
  bool controller = false;
  uint32_t tasks = 0;
  Resources resources;
  absl::Time enqueued;
  WaitReason reason;
  std::string why;  // DescribeWait(reason)
};

struct GangView {
  GangId gang;
  JobId job;
  PoolId pool;
  GangState state = GangState::kQueued;
  SlaClass sla = SlaClass::kPreemptible;
  int32_t priority = 0;
  Resources held;  // what its unreleased tasks hold (queued: ask)
  uint32_t live_tasks = 0;
  std::optional<QueuedGangView> queued;  // while queued: position and reason
};

// A gang's job, state and unreleased tasks (in gang order).
struct GangMembers {
  JobId job;
  GangState state = GangState::kQueued;
  absl::InlinedVector<TaskId, 1> tasks;
};

class ResourceManager {
 public:
  explicit ResourceManager(ResourceManagerConfig config = {});
  ResourceManager(const ResourceManager&) = delete;
  ResourceManager& operator=(const ResourceManager&) = delete;

  // Pools.
  absl::StatusOr<PoolId> CreatePool(absl::string_view path, const PoolSpec& spec);
  // Returns what a forced update broke (empty when nothing).
  absl::StatusOr<std::vector<std::string>> UpdatePool(absl::string_view path, const PoolSpec& spec,
                                                      bool force);
  absl::Status DeletePool(absl::string_view path);
  const PoolTree& tree() const { return tree_; }

  // Work.
  absl::Status Enqueue(const GangRequest& gang, absl::Time now);
  absl::Status Cancel(GangId gang);
  // Recovery: records a gang that is already running (after a master restart its agent
  // reports it). It is admitted at once and its tasks marked running, bypassing the queue and
  // the entitlement check; if that leaves the pool above its entitlement, the next cycles'
  // preemption brings it back, as for any other excess. Validated like Enqueue.
  absl::Status Adopt(const GangRequest& gang, absl::Time now);
  // Starts loading where `task` and gang `gang` would be found, for an Adopt soon after (as
  // ClusterSnapshot::Prefetch).
  void Prefetch(const TaskId& task, GangId gang) const {
    state_.Prefetch(task);
    state_.Prefetch(gang);
  }
  // Room for this many adopted one-task gangs without growing (a restart knows how many).
  void Reserve(size_t tasks) { state_.Reserve(tasks); }
  absl::Status MarkRunning(const TaskId& task, absl::Time now);
  // OK, and nothing changes, when the gang is already being preempted. NOT_FOUND for an
  // unknown gang; FAILED_PRECONDITION for a queued or non-preemptible one.
  absl::Status BeginPreemption(GangId gang);
  absl::Status Release(const TaskId& task);

  // One scheduling cycle.
  CycleResult RunCycle(const CycleInput& input, absl::Time now);

  // Views: the last cycle's entitlements with the allocation and queues as they are now.
  std::vector<PoolStats> AllStats() const;  // indexed by PoolId value
  absl::StatusOr<PoolStats> Stats(PoolId pool) const;
  absl::StatusOr<std::vector<QueuedGangView>> Queue(PoolId pool) const;
  absl::StatusOr<GangView> DescribeGang(GangId gang) const;
  // A gang's state, without the rest of its view; nullopt for a gang not known (any more).
  std::optional<GangState> StateOf(GangId gang) const;
  // The gang a task is in while it is queued or holds resources (not once released); the
  // caller keeps no task-to-gang map of its own.
  std::optional<GangId> GangOf(const TaskId& task) const;
  std::optional<GangMembers> Members(GangId gang) const;
  uint64_t cycle() const { return cycle_; }
  // Fair share with memory (usage_decay.h): each pool's decayed usage and factor as of the
  // last cycle, and the seeding of usage recorded before a restart.
  const UsageDecay& fair_share() const { return usage_decay_; }
  absl::Status SeedUsage(PoolId pool, double usage, absl::Time as_of) {
    return usage_decay_.Seed(tree_, pool, usage, as_of);
  }
  const Allocation& total_allocation() const { return state_.total(); }

 private:
  absl::Status CheckLeafWithoutChildren(PoolId pool) const;
  // Enqueue's and Adopt's validation of a request.
  absl::Status Check(const GangRequest& gang) const;
  std::string WorkSummary(const PoolRuntime& p) const;
  // The reason to show for a queued gang (resolving reasons the last pass did not write).
  WaitReason ResolveReason(const Gang& g, const PoolRuntime& p) const;
  QueuedGangView ViewOf(const Gang& g, const PoolRuntime& p, uint32_t position) const;

  ResourceManagerConfig config_;
  PoolTree tree_;
  RmState state_;
  Preemptor preemptor_;
  Admitter admitter_;
  EntitlementCalculator calculator_;
  UsageDecay usage_decay_;
  const Entitlements* last_ = nullptr;  // the calculator's last result
  Resources last_capacity_;
  uint64_t cycle_ = 0;
  uint64_t next_seq_ = 1;
  uint64_t first_unseen_seq_ = 1;        // gangs from this sequence on were queued after the cycle
  std::vector<Resources> demand_;        // scratch, by PoolId value
  std::vector<Resources> allocation_;    // scratch, by PoolId value
  std::vector<Resources> slack_demand_;  // scratch, by PoolId value
};

}  // namespace paceline::resmgr
