#pragma once
// Backfill: EASY backfill within an admission lane (docs/resource-manager.md "Backfill").
//
// When the first gang H of a lane does not fit a capacity bound of its pool (the entitlement,
// the slack entitlement, the reservation or the controller limit) and nothing can be preempted
// for it, Reserve() computes the earliest time T at which H fits that bound, from the end
// bounds of the pool's admitted gangs: a gang ends by its start (its admission until a task
// runs) + its max_running_time; a gang without a limit never ends. H's capacity is reserved
// from T (the "shadow time"). A later gang G of the same lane may then be admitted now
// (backfilled) only if
//   - G has a max_running_time (a gang without one is never backfilled), and
//   - G fits its bounds now (the ordinary checks), and
//   - G ends by T (now + its max_running_time <= T), or G fits in what is left at T beyond
//     H's need (`spare`, which each such G then takes).
// So H is admitted by T at the latest, whatever is backfilled, as long as the pool's bounds do
// not shrink and tasks are killed at their limit (the job manager's deadline). The estimate
// (expected_running_time) only predicts H's start (`predicted`); it never decides admission.
//
// Pure functions and value types over RmState; single-threaded.

#include <cstdint>
#include <optional>

#include "absl/time/time.h"
#include "common/resources.h"
#include "resmgr/gang.h"
#include "resmgr/rm_state.h"

namespace paceline::resmgr {

// The bounds a gang of one lane of one pool is checked against this pass.
struct LaneBounds {
  Ledger ledger = Ledger::kRegular;
  bool non_preemptible = false;
  bool controller = false;
  Resources reservation;     // non_preemptible: the pool's reservation
  Resources controller_cap;  // controller: the pool's controller_limit
  Resources ledger_bound;    // the (slack) entitlement, less what earmarks hold against the head
};

// A lane's reservation for its first gang, for the rest of one admission pass.
struct LaneReservation {
  GangId head;
  absl::Time at;         // the head fits from then on (the shadow time)
  absl::Time predicted;  // the same from expected_running_time where given; <= at
  // Capacity left at `at` beyond the head's need, per bound of the lane.
  Resources spare_reservation;
  Resources spare_controller;
  Resources spare_ledger;
  uint32_t examined = 0;  // gangs looked at behind the head this pass

  // Whether `g` (of the lane, fitting now) may be admitted ahead of the head at `now`: it ends
  // before the head's time, or fits beside the head in the spare capacity.
  bool Admits(const Gang& g, const LaneBounds& b, absl::Time now) const;
  // `g`, which Admits, is admitted: one that fits beside the head takes its share of the spare
  // capacity.
  void Take(const Gang& g, const LaneBounds& b, absl::Time now);
  // Whether `g`, admitted at `now`, ends by the head's time at the latest.
  bool EndsBefore(const Gang& g, absl::Time now) const {
    return now + absl::Nanoseconds(g.limit_ns) <= at;
  }
};

// The head's reservation, or nullopt when the admitted gangs' limits never free enough (a gang
// without a limit holds too much): the lane then waits strictly, as without backfill.
// `not_before`: the head cannot start earlier whatever its bounds say (its hosts are held for it
// and free by then, host_gate.h); the reservation is from then at the earliest, and what is
// left beside it is counted at that time.
std::optional<LaneReservation> Reserve(const PoolRuntime& pool, const Gang& head,
                                       const LaneBounds& bounds, absl::Time now,
                                       absl::Time not_before = absl::InfinitePast());

}  // namespace paceline::resmgr
