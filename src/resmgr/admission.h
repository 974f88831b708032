#pragma once
// Admitter: one admission pass over the queues of every leaf pool.
//
// A queued gang G of pool P is admitted when all of these hold, checked in this order:
//   1. throttle     the job's admitted tasks + G's tasks <= max_running_instances (if set)
//   2. fixed caps   G alone fits P's limit; non-preemptible: P's reservation; controller:
//                   P's controller_limit; revocable: P's slack cap. A gang that fails here can
//                   never be admitted until the pool changes: reason "never-fits".
//   3. class caps   non-preemptible: P's non-preemptible allocation + G <= reservation;
//                   controller: P's controller allocation + G <= controller_limit
//   4. entitlement  regular: P's regular allocation + G <= entitlement; revocable: revocable
//                   allocation + G <= slack entitlement; minus what earmarks hold for
//                   higher-or-equal-priority gangs (preemption.h)
//   5. cluster slack (revocable) G <= the cluster's slack not yet held by revocable work
//                   (a safety net while some pool is above its slack entitlement)
// in every dimension. Queues are scanned in order (priority, then FIFO): all regular queues
// first, then the revocable ones.
//
// Head-of-line rule: per lane. A lane is (SLA class, controller flag) — non-preemptible,
// preemptible and revocable work, each split into controller and other tasks. When the first
// gang of a lane fails checks 3-5, it stays first in line and every later gang of the SAME lane
// waits behind it (reason "blocked-behind"); gangs of other lanes go on being considered.
// Throttled (1) and never-fitting (2) gangs do not block anybody: their obstacle belongs to
// their job or is permanent.
// One addition: the first lane head H that waits for the pool's (slack) entitlement itself
// (check 4) also holds back the strictly lower-priority *preemptible* gangs of the other
// lanes of its ledger (reason "held-back"). H could preempt exactly those, so admitting them
// into room H is waiting for would only make work to preempt (admit-then-preempt churn, and a
// preempted-then-requeued gang preempted a second time). Non-preemptible gangs and gangs of
// equal or higher priority are never held back by another lane.
// Why: the lanes are exactly the groups that compete for the same bounds. A gang of one lane
// waiting for its bound (say a non-preemptible gang waiting on the reservation) must not hold
// up work that is checked against another bound (preemptible work within the entitlement,
// revocable work on slack). Within a lane, strict order keeps priority meaningful and stops a
// stream of small gangs from starving a large one (no backfilling past the head); the blocked
// head is also the gang that intra-pool preemption makes room for, so it is next once room
// exists.
//
// When the blocked head of a lane fails check 4, the Preemptor may preempt lower-priority work
// of the same pool for it (intra-pool preemption). A pool above its entitlement admits nothing
// of that ledger until the excess is reclaimed.
//
// Hosts (host_gate.h): with backfill and a gate, the first gang of a lane that has two tasks or
// more is admitted only if the gate finds hosts for it now; otherwise it stays first (reason
// "waiting-for-hosts") with its capacity reserved from the time the gate gives, and the lane is
// backfilled behind it as behind any reserved gang; a gang (a single task too) is backfilled
// only if the gate finds hosts for it now. A first gang that does not fit its bounds is
// reserved from the gate's time too when it is later than the bounds' own.
//
// Reasons: every gang the pass looks at gets its WaitReason; the pass stops scanning a queue
// once all its lanes are blocked, and gangs it did not reach are explained by their lane's
// blocker (LaneBlock, stamped with the cycle).
//
// Thread-safety: single-threaded; not thread-safe.

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "resmgr/backfill.h"
#include "resmgr/cycle_result.h"
#include "resmgr/entitlement.h"
#include "resmgr/host_gate.h"
#include "resmgr/pool_tree.h"
#include "resmgr/preemption.h"
#include "resmgr/rm_state.h"

namespace paceline::resmgr {

// The fixed caps of a pool (check 2).
struct FixedCaps {
  FixedCaps() = default;
  explicit FixedCaps(const PoolSpec& spec);
  Resources limit;
  Resources reservation;
  Resources controller;  // ControllerCap
  Resources slack;       // SlackCap
  friend bool operator==(const FixedCaps&, const FixedCaps&) = default;
};

// Check 2 on its own: the first fixed cap that `asked` exceeds (reason kNeverFits), or nullopt.
// Enqueue uses it to refuse such gangs up front.
std::optional<WaitReason> FixedCapViolation(const Resources& asked, SlaClass sla, bool controller,
                                            const FixedCaps& caps);

struct AdmissionInput {
  uint64_t cycle = 0;
  absl::Time now;
  Resources slack_left;       // the cluster's slack capacity minus what revocable work holds
  HostGate* hosts = nullptr;  // with backfill: asked before a lane's first gang is admitted
};

class Admitter {
 public:
  // `backfill`: EASY backfill behind a lane's first gang (backfill.h), looking at most
  // `backfill_depth` gangs behind it per pass.
  Admitter(RmState& state, Preemptor& preemptor, bool backfill = false, uint32_t backfill_depth = 0)
      : state_(state),
        preemptor_(preemptor),
        backfill_(backfill),
        backfill_depth_(backfill_depth) {}

  // Drops what is kept of a deleted pool (its last walks behind reservations).
  void ForgetPool(PoolId pool);

  // Admits what fits; appends to `admitted` and (intra-pool preemption) to `preempted`.
  void Run(const PoolTree& tree, const Entitlements& ent, const AdmissionInput& input,
           std::vector<AdmittedGang>& admitted, std::vector<PreemptionDecision>& preempted);

 private:
  void RunPool(const PoolTree& tree, PoolId pool, Ledger ledger, const Resources& bound,
               std::vector<AdmittedGang>& admitted, std::vector<PreemptionDecision>& preempted);

  // Checks 3-5 for `g` (nullopt: it fits now); `earmarked` is what earmarks hold against it.
  std::optional<WaitReason> CheckBounds(const PoolRuntime& p, const Gang& g, Ledger ledger,
                                        const Resources& bound, const Resources& earmarked,
                                        const FixedCaps& caps) const;

  // What a pass saw when it walked the gangs behind a lane's reserved first gang and neither
  // admitted one nor wrote a gang's reason. While every field is the same at the next pass,
  // that walk would do the same again: the checks before the hosts read only these (and the
  // queued gangs, which change the queue's version), a later `now` only makes "ends before the
  // reservation" harder, and the gate's "no" holds while its version is the same (compared only
  // when the walk asked the gate). Kept only for a queue of that one lane (no other
  // lane's head can hold its gangs back in the middle of the walk) and a pool without earmarks.
  struct LaneWalk {
    uint64_t queue_version = 0;
    Allocation alloc;
    Resources bound;
    Resources slack_left;
    FixedCaps caps;
    int32_t hold_priority = 0;
    GangId head;
    absl::Time at;
    Resources spare_reservation;
    Resources spare_controller;
    Resources spare_ledger;
    uint64_t hosts_version = 0;  // the gate's Version() as the walk began
    bool asked_hosts = false;    // the walk asked the gate (set as it ends)
    friend bool operator==(const LaneWalk&, const LaneWalk&) = default;
  };
  // The last clean walk behind `lane`'s reservation when the walk may be skipped (it is the
  // same as `seen`, what this pass sees); null otherwise.
  const LaneWalk* SameWalk(PoolId pool, int lane, const LaneWalk& seen) const;
  // Counts one more gang looked at behind `res`, the reservation of `lane`; false once past
  // the depth: the lane is then done, blocked behind the reservation's head.
  bool ExamineBehind(LaneReservation& res, PoolRuntime& p, int lane, uint32_t& done) const;
  // Whether the gate is asked at all: backfill is on and there is a gate.
  bool AsksHosts() const;
  // With backfill and a gate, for a lane's first gang of two tasks or more: the gate's answer.
  std::optional<absl::Time> HostsFreeAt(const Gang& g, absl::Time fits_bounds) const;
  // For a gang about to be backfilled: whether its members fit on hosts now (true without a
  // gate).
  bool FitsHostsNow(const Gang& g) const;

  RmState& state_;
  Preemptor& preemptor_;
  const bool backfill_;
  const uint32_t backfill_depth_;
  AdmissionInput input_;
  Resources slack_left_;
  // The last clean walk behind each lane's reservation, by pool and ledger (LaneWalk).
  absl::flat_hash_map<uint64_t, LaneWalk> walks_;
};

}  // namespace paceline::resmgr
