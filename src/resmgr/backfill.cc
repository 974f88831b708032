#include "resmgr/backfill.h"

#include <algorithm>

#include "absl/container/btree_set.h"

namespace paceline::resmgr {
namespace {

bool Fits(const Allocation& a, const Resources& need, const LaneBounds& b) {
  if (b.non_preemptible && !(a.non_preemptible + need).FitsIn(b.reservation)) return false;
  if (b.controller && !(a.controller + need).FitsIn(b.controller_cap)) return false;
  return (a.Of(b.ledger) + need).FitsIn(b.ledger_bound);
}

// The earliest time from `now` at which `need` fits, walking the admitted gangs in `ends`
// order and taking each one's resources away as it ends; `a` is left as at that time.
// InfiniteFuture when it never fits.
absl::Time FirstFit(const RmState& state, const absl::btree_set<EndKey>& ends,
                    const Resources& need, const LaneBounds& b, absl::Time now, Allocation& a) {
  for (auto it = ends.begin(); it != ends.end();) {
    const int64_t t = it->end_ns;
    for (; it != ends.end() && it->end_ns == t; ++it) {
      const Gang& g = state.gang(it->slot);
      a.Apply(g.sla, g.controller, g.held, -1);
    }
    if (Fits(a, need, b)) return std::max(absl::FromUnixNanos(t), now);
  }
  return absl::InfiniteFuture();
}

}  // namespace

std::optional<LaneReservation> Reserve(const RmState& state, const PoolRuntime& pool,
                                       const Gang& head, const LaneBounds& bounds, absl::Time now) {
  Allocation at_shadow = pool.alloc;
  const absl::Time at = FirstFit(state, pool.ends, head.held, bounds, now, at_shadow);
  if (at == absl::InfiniteFuture()) return std::nullopt;
  LaneReservation r;
  r.head = head.id;
  r.at = at;
  Allocation expected = pool.alloc;
  r.predicted = std::min(at, FirstFit(state, pool.expected_ends, head.held, bounds, now, expected));
  r.spare_reservation = SubtractClamped(bounds.reservation, at_shadow.non_preemptible + head.held);
  r.spare_controller = SubtractClamped(bounds.controller_cap, at_shadow.controller + head.held);
  r.spare_ledger = SubtractClamped(bounds.ledger_bound, at_shadow.Of(bounds.ledger) + head.held);
  return r;
}

bool LaneReservation::Admits(const Gang& g, const LaneBounds& b, absl::Time now) {
  if (g.limit_ns <= 0) return false;
  if (now + absl::Nanoseconds(g.limit_ns) <= at) return true;
  if ((b.non_preemptible && !g.held.FitsIn(spare_reservation)) ||
      (b.controller && !g.held.FitsIn(spare_controller)) || !g.held.FitsIn(spare_ledger)) {
    return false;
  }
  if (b.non_preemptible) spare_reservation -= g.held;
  if (b.controller) spare_controller -= g.held;
  spare_ledger -= g.held;
  return true;
}

}  // namespace paceline::resmgr
