#pragma once
// RmState: the resource manager's bookkeeping — gang records, the per-pool queues, allocation
// ledgers, victim indexes and earmarks, and the per-job counters — kept consistent by a few
// state transitions (Add, Admit, MarkRunning, ReleaseTask, BeginPreemption, Cancel).
//
// Admission (admission.h) and preemption (preemption.h) read this state and change it only
// through these transitions, so every invariant lives in one file:
//   - pool.queued[l]       = Σ held of the pool's queued gangs of ledger l
//   - pool.alloc           = Σ held of its admitted and preempting gangs, by class
//   - pool.candidates[l]   = its admitted (not preempting) preemptible/revocable gangs of
//                            ledger l (unordered; Gang::candidate_index is the position);
//                            victim_sum_by_priority[l] sums them by priority
//   - job.admitted         = the job's admitted-and-not-released tasks
//   - an earmark's pending = Σ held of the gangs preempted for it that are still held
//   - pool.ends            = its admitted and preempting gangs with a max_running_time, by
//                            Gang::EndBound(false); pool.expected_ends: those with a limit or an
//                            estimate, by EndBound(true) (backfill.h walks them)
// Gang records live in a slot vector (slots are reused after a gang is gone); pools in a
// vector indexed by PoolId.
//
// Victim order (used by preemption, which sorts candidates only when it needs victims, so that
// admission pays O(1) per gang): not-yet-running before running, then lowest priority, then
// most recently started (not running: most recently admitted), then most recently enqueued.
//
// Thread-safety: single-threaded; not thread-safe.

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "common/chunked_array.h"
#include "resmgr/admission_queue.h"
#include "resmgr/gang.h"
#include "resmgr/types.h"

namespace paceline::resmgr {

struct VictimKey {
  bool running = false;
  int32_t priority = 0;
  absl::Time time;
  uint64_t seq = 0;
  uint32_t slot = 0;
};

struct VictimOrder {
  bool operator()(const VictimKey& a, const VictimKey& b) const {
    if (a.running != b.running) return !a.running;
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.time != b.time) return a.time > b.time;
    return a.seq > b.seq;
  }
};

// Capacity of a pool held for one queued gang that preemption made room for.
struct Earmark {
  GangId beneficiary;
  int32_t priority = 0;
  Ledger ledger = Ledger::kRegular;
  Resources need;     // the beneficiary's resources
  Resources pending;  // still held by the gangs preempted for it
  absl::Time created;
  // The part of the pool's free capacity that others must leave alone now.
  Resources Held() const { return SubtractClamped(need, pending); }
};

struct LaneBlock {
  GangId head;  // the first gang of the lane that did not fit, or the gang it is held behind
  uint64_t cycle = 0;
  WaitCode code = WaitCode::kBlockedBehind;  // or kHeldBack
  PackedTime at;  // kBlockedBehind behind a reserved head: its reservation's time
};

// An admitted gang in a pool's index of end bounds: ordered by the bound, then the slot.
struct EndKey {
  int64_t end_ns = 0;  // Gang::EndBound as Unix nanoseconds
  uint32_t slot = 0;
  friend bool operator<(const EndKey& a, const EndKey& b) {
    return a.end_ns != b.end_ns ? a.end_ns < b.end_ns : a.slot < b.slot;
  }
};
// What the gang holds, kept beside its key so that a walk over the ends reads no gang record.
struct EndEntry {
  Resources held;
  SlaClass sla = SlaClass::kPreemptible;
  bool controller = false;
};
using EndIndex = absl::btree_map<EndKey, EndEntry>;

struct PriorityBucket {
  Resources held;
  uint32_t gangs = 0;
};

struct PoolRuntime {
  std::array<AdmissionQueue, 2> queue;  // by Ledger
  std::array<Resources, 2> queued;      // by Ledger
  Allocation alloc;
  uint32_t admitted_gangs = 0;                      // admitted or preempting
  std::array<std::vector<uint32_t>, 2> candidates;  // slots, by Ledger
  std::array<absl::btree_map<int32_t, PriorityBucket>, 2> victim_sum_by_priority;
  std::array<uint32_t, 2> over_cycles{};  // consecutive cycles above (slack) entitlement
  // Set when the pool went above its (slack) entitlement: the pool that gained it.
  std::array<std::optional<PoolId>, 2> claimant{};
  std::vector<Earmark> earmarks;
  std::array<LaneBlock, kNumLanes> lane_block{};
  // Set (with its cycle) when a whole queue was skipped, e.g. the pool is over its entitlement.
  std::array<WaitReason, 2> pool_wait{};
  EndIndex ends;  // see the invariants above
  EndIndex expected_ends;
  uint32_t estimated = 0;  // entries of expected_ends with an expected_running_time

  bool HasWork() const { return !queue[0].empty() || !queue[1].empty() || admitted_gangs > 0; }
  Earmark* FindEarmark(GangId beneficiary);
};

struct JobCounts {
  uint32_t admitted = 0;     // admitted-and-not-released tasks
  uint32_t gangs = 0;        // live gang records
  uint32_t max_running = 0;  // 0 = no throttle
};

class RmState {
 public:
  struct TaskRef {
    uint32_t slot;
    uint32_t index;
  };

  Gang& gang(uint32_t slot) { return gangs_[slot]; }
  const Gang& gang(uint32_t slot) const { return gangs_[slot]; }
  std::optional<uint32_t> FindGang(GangId id) const;
  // Only a task not yet released is found: releasing a task takes it out of the index.
  std::optional<TaskRef> FindTask(const TaskId& id) const;
  void Prefetch(const TaskId& id) const { task_index_.prefetch(id); }
  void Prefetch(GangId id) const { gang_index_.prefetch(id); }
  size_t gang_count() const { return gang_index_.size(); }

  // Pools: grown on demand, cleared when a pool is deleted.
  PoolRuntime& pool(PoolId id);
  const PoolRuntime* FindPool(PoolId id) const;
  void ResetPool(PoolId id);

  const JobCounts* job(JobId id) const;
  const JobCounts& job_counts(const Gang& g) const { return job_slots_[g.job_slot]; }
  // The victim-order key of an admitted gang.
  VictimKey KeyOf(uint32_t slot) const;
  // Cluster-wide allocation (sum over pools).
  const Allocation& total() const { return total_; }

  // Transitions. Each requires the state noted; the caller validates the request.
  // -> QUEUED; or, given `running_since` (a gang adopted after a restart), straight to ADMITTED
  // with every task RUNNING since then, never in the queue.
  uint32_t Add(const GangRequest& request, uint64_t seq, absl::Time now,
               std::optional<absl::Time> running_since = std::nullopt);
  // Room for this many one-task gangs without growing (a restart knows how many will be adopted).
  void Reserve(size_t tasks);
  // QUEUED -> ADMITTED for the gang at `it` in queue[l] of `pool`; returns the entry after it.
  AdmissionQueue::const_iterator AdmitAt(PoolId pool, Ledger l, AdmissionQueue::const_iterator it,
                                         absl::Time now);
  void MarkRunning(const TaskRef& ref, absl::Time now);  // task ADMITTED -> RUNNING
  void ReleaseTask(const TaskRef& ref);                  // task held -> released
  // ADMITTED -> PREEMPTING; `for_gang` names the earmark it feeds, if any.
  void BeginPreemption(uint32_t slot, std::optional<GangId> for_gang);
  void Cancel(uint32_t slot);  // any -> gone
  void AddEarmark(PoolId pool, const Earmark& earmark);
  void DropEarmark(PoolId pool, GangId beneficiary);

 private:
  // QUEUED -> ADMITTED for a gang out of the queue (AdmitAt, Add with running_since).
  void FinishAdmit(uint32_t slot, absl::Time now);
  bool IsCandidate(const Gang& g) const {
    return g.state == GangState::kAdmitted && g.sla != SlaClass::kNonPreemptible;
  }
  // Adds (or removes) an admitted gang to (from) its pool's end indexes; the key is computed
  // from the gang as it is, so a change of its times is erase, change, insert.
  void IndexEnds(uint32_t slot, bool insert);
  // After a task of the gang was released: what its entries say it holds.
  void UpdateEnds(uint32_t slot);
  void InsertVictim(uint32_t slot);
  void EraseVictim(uint32_t slot);
  void Remove(uint32_t slot);

  ChunkedArray<Gang> gangs_;  // never moves: 10M gangs are 2.4 GB
  std::vector<uint32_t> free_slots_;
  absl::flat_hash_map<GangId, uint32_t> gang_index_;
  absl::flat_hash_map<TaskId, TaskRef> task_index_;
  std::vector<PoolRuntime> pools_;
  // Job counters live in a slot vector so the admission loop reaches them without hashing.
  std::vector<JobCounts> job_slots_;
  std::vector<uint32_t> free_job_slots_;
  absl::flat_hash_map<JobId, uint32_t> job_index_;
  Allocation total_;
};

}  // namespace paceline::resmgr
