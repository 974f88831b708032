#include "resmgr/admission.h"

#include <array>
#include <cstdint>
#include <iterator>
#include <optional>

namespace paceline::resmgr {
namespace {

// A reason naming the first dimension where held + asked exceeds bound.
WaitReason Over(WaitCode code, Dim d, const Resources& held, const Resources& asked,
                const Resources& bound, uint64_t cycle) {
  WaitReason r;
  r.code = code;
  r.dim = d;
  r.held = held[d];
  r.asked = asked[d];
  r.bound = bound[d];
  r.cycle = cycle;
  return r;
}

std::optional<WaitReason> NeverFits(const Resources& asked, const Resources& cap, CapKind kind,
                                    uint64_t cycle) {
  std::optional<Dim> d = asked.FirstExceeding(cap);
  if (!d.has_value()) return std::nullopt;
  WaitReason r = Over(WaitCode::kNeverFits, *d, Resources(), asked, cap, cycle);
  r.cap = kind;
  return r;
}

LaneBounds LaneBoundsOf(const Gang& g, Ledger ledger, const Resources& bound,
                        const Resources& earmarked, const FixedCaps& caps) {
  LaneBounds b;
  b.ledger = ledger;
  b.non_preemptible = g.sla == SlaClass::kNonPreemptible;
  b.controller = g.controller;
  b.reservation = caps.reservation;
  b.controller_cap = caps.controller;
  b.ledger_bound = bound - earmarked;
  return b;
}

// The last gang of a lane that failed behind the lane's reservation on its bounds (checks 3-5
// or the reservation's rule), while nothing was admitted from the pool since. A later gang of the
// same job with the same request fails the same way: every check before the hosts reads only the
// fields compared here, the job's counts, the pool's allocation and earmarks, the lane's
// reservation and `hold_priority`, and none of those changed. Jobs queue their one-task gangs
// together, so a lane's walk mostly meets such runs.
struct LaneMiss {
  bool valid = false;
  JobId job;
  Resources held;
  int64_t limit_ns = 0;
  uint32_t live = 0;
  int32_t priority = 0;
  SlaClass sla = SlaClass::kPreemptible;
  bool controller = false;
  int32_t hold_priority = 0;

  void Remember(const Gang& g, int32_t hold) {
    *this =
        LaneMiss{true, g.job, g.held, g.limit_ns, g.live, g.priority, g.sla, g.controller, hold};
  }
  bool Repeats(const Gang& g, int32_t hold) const {
    return valid && g.job == job && g.limit_ns == limit_ns && g.live == live &&
           g.priority == priority && g.sla == sla && g.controller == controller &&
           hold == hold_priority && g.held == held;
  }
};

// walks_'s key of a pool's lane.
uint64_t WalkKey(PoolId pool, int lane) {
  return uint64_t{pool.value()} * kNumLanes + static_cast<uint64_t>(lane);
}

}  // namespace

std::optional<WaitReason> Admitter::CheckBounds(const PoolRuntime& p, const Gang& g, Ledger ledger,
                                                const Resources& bound, const Resources& earmarked,
                                                const FixedCaps& caps) const {
  const uint64_t cycle = input_.cycle;
  if (g.sla == SlaClass::kNonPreemptible) {
    const Resources sum = p.alloc.non_preemptible + g.held;
    if (std::optional<Dim> d = sum.FirstExceeding(caps.reservation)) {
      return Over(WaitCode::kReservation, *d, p.alloc.non_preemptible, g.held, caps.reservation,
                  cycle);
    }
  }
  if (g.controller) {
    const Resources sum = p.alloc.controller + g.held;
    if (std::optional<Dim> d = sum.FirstExceeding(caps.controller)) {
      return Over(WaitCode::kControllerLimit, *d, p.alloc.controller, g.held, caps.controller,
                  cycle);
    }
  }
  const Resources held = p.alloc.Of(ledger);
  const Resources sum = held + g.held;
  if (std::optional<Dim> d = sum.FirstExceeding(bound - earmarked)) {
    if (std::optional<Dim> over = sum.FirstExceeding(bound)) {
      return Over(ledger == Ledger::kRegular ? WaitCode::kEntitlement : WaitCode::kSlack, *over,
                  held, g.held, bound, cycle);
    }
    WaitReason wait = Over(WaitCode::kEarmarked, *d, held, g.held, earmarked, cycle);
    for (const Earmark& m : p.earmarks) {
      if (m.beneficiary != g.id && m.ledger == ledger && m.priority >= g.priority) {
        wait.other = m.beneficiary;
        break;
      }
    }
    return wait;
  }
  if (ledger == Ledger::kRevocable) {
    if (std::optional<Dim> d = g.held.FirstExceeding(slack_left_)) {
      return Over(WaitCode::kClusterSlack, *d, Resources(), g.held, slack_left_, cycle);
    }
  }
  return std::nullopt;
}

const Admitter::LaneWalk* Admitter::SameWalk(PoolId pool, int lane, const LaneWalk& seen) const {
  auto it = walks_.find(WalkKey(pool, lane));
  if (it == walks_.end()) return nullptr;
  LaneWalk last = it->second;
  if (!last.asked_hosts) last.hosts_version = seen.hosts_version;
  last.asked_hosts = seen.asked_hosts;
  return last == seen ? &it->second : nullptr;
}

void Admitter::ForgetPool(PoolId pool) {
  for (int lane = 0; lane < kNumLanes; ++lane) walks_.erase(WalkKey(pool, lane));
}

bool Admitter::ExamineBehind(LaneReservation& res, PoolRuntime& p, int lane, uint32_t& done) const {
  if (++res.examined <= backfill_depth_) return true;
  done |= 1u << lane;  // the rest of the lane waits unexamined
  p.lane_block[lane] = LaneBlock{res.head, input_.cycle, WaitCode::kBlockedBehind, res.at};
  return false;
}

bool Admitter::AsksHosts() const { return backfill_ && input_.hosts != nullptr; }

std::optional<absl::Time> Admitter::HostsFreeAt(const Gang& g, absl::Time fits_bounds) const {
  if (!AsksHosts() || g.live < 2) return std::nullopt;
  return input_.hosts->HostsFreeAt(g.id, input_.now, fits_bounds);
}

bool Admitter::FitsHostsNow(const Gang& g) const {
  return !AsksHosts() || input_.hosts->FitsNow(g.id, input_.now);
}

FixedCaps::FixedCaps(const PoolSpec& spec)
    : limit(spec.Limit()),
      reservation(spec.Reservation()),
      controller(ControllerCap(spec)),
      slack(SlackCap(spec)) {}

std::optional<WaitReason> FixedCapViolation(const Resources& asked, SlaClass sla, bool controller,
                                            const FixedCaps& caps) {
  if (asked.FitsIn(caps.limit) &&
      (sla != SlaClass::kNonPreemptible || asked.FitsIn(caps.reservation)) &&
      (!controller || asked.FitsIn(caps.controller)) &&
      (sla != SlaClass::kRevocable || asked.FitsIn(caps.slack))) {
    return std::nullopt;
  }
  std::optional<WaitReason> never = NeverFits(asked, caps.limit, CapKind::kLimit, 0);
  if (!never && sla == SlaClass::kNonPreemptible) {
    never = NeverFits(asked, caps.reservation, CapKind::kReservation, 0);
  }
  if (!never && controller) {
    never = NeverFits(asked, caps.controller, CapKind::kControllerLimit, 0);
  }
  if (!never && sla == SlaClass::kRevocable) {
    never = NeverFits(asked, caps.slack, CapKind::kSlackLimit, 0);
  }
  return never;
}

void Admitter::Run(const PoolTree& tree, const Entitlements& ent, const AdmissionInput& input,
                   std::vector<AdmittedGang>& admitted,
                   std::vector<PreemptionDecision>& preempted) {
  input_ = input;
  slack_left_ = Max(input.slack_left, Resources());
  for (Ledger ledger : {Ledger::kRegular, Ledger::kRevocable}) {
    const int li = static_cast<int>(ledger);
    for (PoolId leaf : tree.layout().leaves) {
      const PoolRuntime* p = state_.FindPool(leaf);
      if (p == nullptr || p->queue[li].empty()) continue;
      const Resources& bound = ledger == Ledger::kRegular ? ent.entitlement[leaf.value()]
                                                          : ent.slack_entitlement[leaf.value()];
      RunPool(tree, leaf, ledger, bound, admitted, preempted);
    }
  }
}

void Admitter::RunPool(const PoolTree& tree, PoolId pool, Ledger ledger, const Resources& bound,
                       std::vector<AdmittedGang>& admitted,
                       std::vector<PreemptionDecision>& preempted) {
  const uint64_t cycle = input_.cycle;
  const int li = static_cast<int>(ledger);
  PoolRuntime& p = state_.pool(pool);
  AdmissionQueue& queue = p.queue[li];

  // A pool above its entitlement admits nothing of this ledger until the excess is reclaimed.
  const Resources effective = p.alloc.Of(ledger) - p.alloc.PreemptingOf(ledger);
  if (std::optional<Dim> d = effective.FirstExceeding(bound)) {
    p.pool_wait[li] =
        Over(WaitCode::kPoolOverEntitlement, *d, effective, Resources(), bound, cycle);
    return;
  }

  const FixedCaps caps(tree.spec(pool));
  const WaitCode over_code = ledger == Ledger::kRegular ? WaitCode::kEntitlement : WaitCode::kSlack;

  // The first lane head waiting for the (slack) entitlement: lower-priority preemptible gangs of
  // every lane are held back behind it.
  int32_t hold_priority = INT32_MIN;
  GangId hold_head;

  // Backfill: the lanes whose first gang holds a reservation (backfill.h).
  std::array<LaneReservation, kNumLanes> reservations;
  std::array<bool, kNumLanes> reserved{};
  // Valid only while nothing of the pool is admitted and no earmark exists.
  std::array<LaneMiss, kNumLanes> misses{};

  constexpr uint32_t kAllLanes = (1u << kNumLanes) - 1;
  uint32_t done = 0;  // lanes blocked, or absent from this queue
  for (int lane = 0; lane < kNumLanes; ++lane) {
    if (queue.lane_count(lane) == 0) done |= 1u << lane;
  }

  // LaneWalk: what this pass saw as it reserved for a lane's first gang, and whether the walk
  // behind it stayed clean since (nothing admitted, no reason written).
  std::array<std::optional<LaneWalk>, kNumLanes> walking{};
  bool clean = true;
  bool asked_hosts = false;
  auto reserve_lane = [&](int lane, const LaneReservation& r) {
    reservations[lane] = r;
    reserved[lane] = true;
    if (queue.lane_count(lane) != queue.size() || !p.earmarks.empty()) return;
    const LaneWalk seen{queue.version(),
                        p.alloc,
                        bound,
                        ledger == Ledger::kRevocable ? slack_left_ : Resources(),
                        caps,
                        hold_priority,
                        r.head,
                        r.at,
                        r.spare_reservation,
                        r.spare_controller,
                        r.spare_ledger,
                        AsksHosts() ? input_.hosts->Version() : 0};
    walking[lane] = seen;
    clean = true;
    asked_hosts = false;
    // The same walk as last time: it admits nothing; the lane's block is the reservation's.
    if (const LaneWalk* last = SameWalk(pool, lane, seen)) {
      done |= 1u << lane;
      asked_hosts = last->asked_hosts;
    }
  };

  for (auto it = queue.begin(); it != queue.end();) {
    if (done == kAllLanes) break;
    const QueueEntry e = *it;
    Gang& g = state_.gang(e.slot);
    // Gang records are scattered: start loading the next one while this one is checked.
    if (auto next = std::next(it); next != queue.end()) {
      const Gang* n = &state_.gang(next->slot);
      __builtin_prefetch(n);
      __builtin_prefetch(reinterpret_cast<const char*>(n) + 64);
    }
    const uint32_t lane_bit = 1u << e.lane;
    if (done & lane_bit) {
      g.reason = WaitReason();
      g.reason.code = p.lane_block[e.lane].code;
      g.reason.other = p.lane_block[e.lane].head;
      g.reason.cycle = cycle;
      ++it;
      continue;
    }

    // Behind a reserved head, a gang that repeats the lane's last miss misses too (LaneMiss).
    if (reserved[e.lane] && p.earmarks.empty() && misses[e.lane].Repeats(g, hold_priority)) {
      ExamineBehind(reservations[e.lane], p, e.lane, done);
      ++it;
      continue;
    }

    // 1. The job's throttle: never blocks others.
    if (const JobCounts& job = state_.job_counts(g); job.max_running > 0) {
      if (g.live > job.max_running || job.admitted + g.live > job.max_running) {
        g.reason = WaitReason();
        g.reason.code = g.live > job.max_running ? WaitCode::kNeverFits : WaitCode::kThrottled;
        g.reason.cap = CapKind::kMaxRunning;
        g.reason.held = job.admitted;
        g.reason.asked = g.live;
        g.reason.bound = job.max_running;
        g.reason.cycle = cycle;
        clean = false;
        ++it;
        continue;
      }
    }

    // 2. Fixed caps of the pool: never blocks others.
    if (std::optional<WaitReason> never = FixedCapViolation(g.held, g.sla, g.controller, caps)) {
      g.reason = *never;
      g.reason.cycle = cycle;
      clean = false;
      ++it;
      continue;
    }

    // Held back behind a higher-priority gang waiting for the entitlement: blocks the lane
    // (everything after it in the lane has a priority that is not higher).
    if (g.sla != SlaClass::kNonPreemptible && g.priority < hold_priority) {
      g.reason = WaitReason();
      g.reason.code = WaitCode::kHeldBack;
      g.reason.other = hold_head;
      g.reason.cycle = cycle;
      clean = false;
      done |= lane_bit;
      p.lane_block[e.lane] = LaneBlock{hold_head, cycle, WaitCode::kHeldBack};
      ++it;
      continue;
    }

    // Behind a reserved head (backfill): only gangs with a max_running_time are looked at.
    GangId backfilled;
    LaneReservation* res = reserved[e.lane] ? &reservations[e.lane] : nullptr;
    if (res != nullptr) {
      // Its reason is the lane's block (blocked-behind the head, with the reservation's time),
      // which the views read for a gang whose own reason is older than the cycle: writing it
      // here would only load a cold line of every record.
      if (!ExamineBehind(*res, p, e.lane, done) || g.limit_ns <= 0) {
        ++it;
        continue;
      }
    }

    // 3-5. Class caps, entitlement, cluster slack: a failure blocks the lane.
    const Resources earmarked =
        p.earmarks.empty() ? Resources() : preemptor_.EarmarkedAgainst(p, g);
    std::optional<WaitReason> wait = CheckBounds(p, g, ledger, bound, earmarked, caps);
    if (res != nullptr) {
      const LaneBounds lb = LaneBoundsOf(g, ledger, bound, earmarked, caps);
      if (wait || !res->Admits(g, lb, input_.now)) {
        if (p.earmarks.empty()) misses[e.lane].Remember(g, hold_priority);
        ++it;
        continue;
      }
      // The hosts last: the costliest question. A miss here is not remembered: the gate's
      // answer may differ between gangs of a job (a gang may hold hosts of its own).
      asked_hosts = asked_hosts || AsksHosts();
      if (!FitsHostsNow(g)) {
        ++it;
        continue;
      }
      res->Take(g, lb, input_.now);
      backfilled = res->head;
    } else if (wait) {
      // The first gang of its lane that does not fit: make room by preempting lower-priority
      // work of the pool, if there is any.
      if ((wait->code == over_code || wait->code == WaitCode::kEarmarked) &&
          preemptor_.MakeRoom(tree, e.slot, bound, input_.now, preempted) !=
              Preemptor::Outcome::kNothingToTake) {
        wait->code = WaitCode::kAwaitingPreemption;
      }
      const WaitCode c = wait->code;
      if (hold_priority == INT32_MIN &&
          (c == WaitCode::kEntitlement || c == WaitCode::kSlack || c == WaitCode::kEarmarked ||
           c == WaitCode::kAwaitingPreemption)) {
        hold_priority = g.priority;
        hold_head = g.id;
      }
      std::optional<LaneReservation> r;
      if (backfill_ && (c == WaitCode::kEntitlement || c == WaitCode::kSlack ||
                        c == WaitCode::kReservation || c == WaitCode::kControllerLimit)) {
        const LaneBounds lb = LaneBoundsOf(g, ledger, bound, earmarked, caps);
        r = Reserve(p, g, lb, input_.now);
        // Its hosts may free later than its bounds allow it: then it is reserved from then.
        if (r.has_value()) {
          if (std::optional<absl::Time> hosts = HostsFreeAt(g, r->at); hosts && *hosts > r->at) {
            r = Reserve(p, g, lb, input_.now, *hosts);
          }
        }
      }
      if (r.has_value()) {
        // Reserved: the lane goes on, for gangs that can be backfilled ahead of this one.
        wait->cap = c == WaitCode::kEntitlement   ? CapKind::kEntitlement
                    : c == WaitCode::kSlack       ? CapKind::kSlackEntitlement
                    : c == WaitCode::kReservation ? CapKind::kReservation
                                                  : CapKind::kControllerLimit;
        wait->code = WaitCode::kReserved;
        wait->other = g.id;
        wait->at = r->at;
        wait->predicted = r->predicted;
        g.reason = *wait;
        p.lane_block[e.lane] = LaneBlock{g.id, cycle, WaitCode::kBlockedBehind, r->at};
        reserve_lane(e.lane, *r);
      } else {
        g.reason = *wait;
        done |= lane_bit;
        p.lane_block[e.lane] = LaneBlock{g.id, cycle, WaitCode::kBlockedBehind};
      }
      ++it;
      continue;
    }

    // The first gang of its lane fits its bounds now; its members may still find no hosts.
    if (res == nullptr) {
      if (std::optional<absl::Time> free_at = HostsFreeAt(g, input_.now)) {
        const LaneBounds lb = LaneBoundsOf(g, ledger, bound, earmarked, caps);
        if (std::optional<LaneReservation> r = Reserve(p, g, lb, input_.now, *free_at)) {
          g.reason = WaitReason();
          g.reason.code = WaitCode::kWaitingForHosts;
          g.reason.asked = g.live;
          g.reason.other = g.id;
          g.reason.at = *free_at;
          g.reason.predicted = r->at;
          g.reason.cycle = cycle;
          p.lane_block[e.lane] = LaneBlock{g.id, cycle, WaitCode::kBlockedBehind, r->at};
          reserve_lane(e.lane, *r);
          ++it;
          continue;
        }
      }
    }

    // Admit: the pool's allocation changes, so no miss is known to repeat.
    misses.fill(LaneMiss());
    clean = false;
    admitted.push_back(AdmittedGang{g.id, g.job, pool, g.sla, g.priority, g.held, backfilled});
    if (ledger == Ledger::kRevocable) slack_left_ = SubtractClamped(slack_left_, g.held);
    it = state_.AdmitAt(pool, ledger, it, input_.now);
  }
  for (int lane = 0; lane < kNumLanes; ++lane) {
    const uint64_t key = WalkKey(pool, lane);
    if (walking[lane].has_value() && clean) {
      walks_[key] = *walking[lane];
      walks_[key].asked_hosts = asked_hosts;
    } else {
      walks_.erase(key);
    }
  }
}

}  // namespace paceline::resmgr
