#pragma once
// Preemptor: takes resources back — from pools above their entitlement (inter-pool), and from
// lower-priority work for a gang that cannot be admitted otherwise (intra-pool).
//
// Victims. Only from the pool concerned and only of the ledger concerned: a pool above its
// entitlement gives back regular work, a pool above its slack entitlement gives back revocable
// work; revocable excess is reclaimed first (all pools), then regular excess. Within a pool
// the order is RmState's victim order: not-yet-running before running, lowest priority first,
// most recently started first. Non-preemptible gangs are never victims. A gang is a victim as
// a whole (its tasks were admitted together and are killed together), and only gangs that hold
// some of an over-allocated dimension are taken.
//
// Inter-pool, with hysteresis. Each cycle, for each leaf pool and ledger, the excess is
// (allocation − what is already being preempted) − entitlement, per dimension. A pool must be
// in excess `hysteresis_cycles` cycles in a row before victims are chosen, so a demand blip does
// not cause preemption. When a pool goes into excess, the pool whose entitlement grew (the
// nearest in the tree) is remembered as the claimant that each victim's reason names. The freed
// capacity is outside the pool's entitlement, so the pool cannot take it back while the demand that
// moved its entitlement lasts: the entitlement of the reclaiming pool is the earmark.
//
// Intra-pool, with earmarks. When the first gang G of an admission lane does not fit its
// pool's (slack) entitlement, and preempting preemptible gangs of strictly lower priority in
// the same pool and ledger would make it fit, those are preempted and an Earmark reserves the
// capacity they free for G: other gangs of priority <= G's see the earmarked part as taken,
// until G is admitted, cancelled, or the earmark times out (`earmark_timeout`; G "gives up").
// The need is computed against the future state (what is being preempted already counts as
// freed), so no cycle preempts for the same need twice.
//
// Cost: a pool's candidates are ordered (a heap over their victim keys) only when victims are
// actually needed, O(k + m log k) for k candidates and m victims; admission pays nothing for it.
//
// Convergence. Victims are taken only up to the excess (or the deficit), each victim only once
// (a preempting gang is never chosen again), intra-pool chains strictly decrease in priority,
// and `max_per_cycle` bounds what one cycle may preempt (the first victim of a cycle is always
// allowed, so progress never stops).
//
// Thread-safety: single-threaded; not thread-safe.

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "common/resources.h"
#include "resmgr/cycle_result.h"
#include "resmgr/entitlement.h"
#include "resmgr/pool_tree.h"
#include "resmgr/rm_state.h"

namespace paceline::resmgr {

struct PreemptionConfig {
  // Victims are chosen in the N-th consecutive cycle a pool is above its entitlement (N >= 1;
  // 1 = at once).
  int hysteresis_cycles = 2;
  // The most that one cycle may preempt, over all pools and both kinds.
  Resources max_per_cycle = Resources::Filled(kUnlimited);
  // An earmark whose gang is still not admitted after this long is dropped.
  absl::Duration earmark_timeout = absl::Minutes(5);
  // Whether a higher-priority gang may preempt lower-priority work of its own pool.
  bool intra_pool = true;
};

class Preemptor {
 public:
  Preemptor(RmState& state, const PreemptionConfig& config) : state_(state), config_(config) {}

  // Resets the per-cycle budget and drops timed-out earmarks.
  void BeginCycle(const PoolTree& tree, absl::Time now);

  // Inter-pool: for every leaf pool in excess for long enough, chooses victims up to the excess.
  void ReclaimExcess(const PoolTree& tree, const Entitlements& ent,
                     std::vector<PreemptionDecision>& out);

  enum class Outcome { kNothingToTake, kPreempted, kAlreadyFreeing };
  // Intra-pool: tries to make room for the queued gang in `slot` within `entitlement` (the
  // pool's entitlement or slack entitlement for the gang's ledger).
  Outcome MakeRoom(const PoolTree& tree, uint32_t slot, const Resources& entitlement,
                   absl::Time now, std::vector<PreemptionDecision>& out);

  // What earmarks of other gangs withhold from `g` now (Held()), and what they will withhold
  // once their victims are gone (need). Earmarks of lower-priority gangs do not apply.
  Resources EarmarkedAgainst(const PoolRuntime& pool, const Gang& g) const;
  Resources EarmarkedNeedAgainst(const PoolRuntime& pool, const Gang& g) const;

 private:
  // Whether `r` still fits in this cycle's budget; takes it if so.
  bool TakeBudget(const Resources& r);
  PreemptionDecision Decide(uint32_t slot, PreemptionCause cause) const;
  // Among the leaf pools whose (slack) entitlement in `dim` grew since the previous cycle, the
  // one closest to `pool` in the tree: who reclaims what `pool` lost.
  std::optional<PoolId> Claimant(const PoolTree& tree, const Entitlements& ent, PoolId pool,
                                 Ledger l, Dim dim) const;

  RmState& state_;
  PreemptionConfig config_;
  Resources preempted_this_cycle_;
  uint32_t victims_this_cycle_ = 0;
  bool budget_exhausted_ = false;
  // Fills heap_ with the candidates of `pool` and ledger l below `priority`, as a heap whose
  // top is the first victim; PopVictim takes the top.
  void CollectCandidates(const PoolRuntime& pool, int l, int32_t below_priority);
  uint32_t PopVictim();

  std::vector<uint32_t> picked_;  // scratch
  std::vector<VictimKey> heap_;   // scratch
  // The previous cycle's entitlements, by PoolId value, to tell who gained.
  std::vector<Resources> previous_[2];
};

}  // namespace paceline::resmgr
