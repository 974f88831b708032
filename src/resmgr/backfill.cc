#include "resmgr/backfill.h"

#include <algorithm>

#include <cstdint>

namespace paceline::resmgr {
namespace {

bool Fits(const Allocation& a, const Resources& need, const LaneBounds& b) {
  if (b.non_preemptible && !(a.non_preemptible + need).FitsIn(b.reservation)) return false;
  if (b.controller && !(a.controller + need).FitsIn(b.controller_cap)) return false;
  return (a.Of(b.ledger) + need).FitsIn(b.ledger_bound);
}

// The earliest time from `now`, and not before `not_before`, at which `need` fits, walking the
// admitted gangs in `ends` order and taking each one's resources away as it ends; `a` is left as
// at that time. InfiniteFuture when it never fits. With `until`, gives up (InfiniteFuture) past
// it.
absl::Time FirstFit(const EndIndex& ends, const Resources& need, const LaneBounds& b,
                    absl::Time now, absl::Time not_before, Allocation& a,
                    absl::Time until = absl::InfiniteFuture()) {
  const int64_t last = until == absl::InfiniteFuture() ? INT64_MAX : absl::ToUnixNanos(until);
  auto it = ends.begin();
  if (not_before > now) {  // what ends by then is gone by then
    const int64_t from = absl::ToUnixNanos(not_before);
    for (; it != ends.end() && it->first.end_ns <= from; ++it) {
      a.Apply(it->second.sla, it->second.controller, it->second.held, -1);
    }
    if (Fits(a, need, b)) return not_before;
  }
  while (it != ends.end()) {
    const int64_t t = it->first.end_ns;
    if (t > last) break;
    for (; it != ends.end() && it->first.end_ns == t; ++it) {
      a.Apply(it->second.sla, it->second.controller, it->second.held, -1);
    }
    if (Fits(a, need, b)) return std::max(absl::FromUnixNanos(t), now);
  }
  return absl::InfiniteFuture();
}

}  // namespace

std::optional<LaneReservation> Reserve(const PoolRuntime& pool, const Gang& head,
                                       const LaneBounds& bounds, absl::Time now,
                                       absl::Time not_before) {
  Allocation at_shadow = pool.alloc;
  const absl::Time at = FirstFit(pool.ends, head.held, bounds, now, not_before, at_shadow);
  if (at == absl::InfiniteFuture()) return std::nullopt;
  LaneReservation r;
  r.head = head.id;
  r.at = at;
  Allocation expected = pool.alloc;
  // The estimate only ever moves the start earlier: walk the estimated ends up to `at`.
  // Without any estimate, the walk would be the same one.
  r.predicted = pool.estimated == 0 ? at
                                    : std::min(at, FirstFit(pool.expected_ends, head.held, bounds,
                                                            now, not_before, expected, at));
  r.spare_reservation = SubtractClamped(bounds.reservation, at_shadow.non_preemptible + head.held);
  r.spare_controller = SubtractClamped(bounds.controller_cap, at_shadow.controller + head.held);
  r.spare_ledger = SubtractClamped(bounds.ledger_bound, at_shadow.Of(bounds.ledger) + head.held);
  return r;
}

bool LaneReservation::Admits(const Gang& g, const LaneBounds& b, absl::Time now) const {
  if (g.limit_ns <= 0) return false;
  if (EndsBefore(g, now)) return true;
  return (!b.non_preemptible || g.held.FitsIn(spare_reservation)) &&
         (!b.controller || g.held.FitsIn(spare_controller)) && g.held.FitsIn(spare_ledger);
}

void LaneReservation::Take(const Gang& g, const LaneBounds& b, absl::Time now) {
  if (EndsBefore(g, now)) return;
  if (b.non_preemptible) spare_reservation -= g.held;
  if (b.controller) spare_controller -= g.held;
  spare_ledger -= g.held;
}

}  // namespace paceline::resmgr
