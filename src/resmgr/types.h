#pragma once
// Vocabulary of the resource manager: gang ids, SLA classes, admission lanes and the per-pool
// allocation ledger.
//
//   GangId      identifies one gang (one task, or tasks that must start together). Assigned by
//               the caller (the master), unique for the lifetime of the ResourceManager. Kept
//               here rather than in common/ids.h because only the resource manager and its
//               caller use it.
//   SlaClass    what the resource manager may do with admitted work:
//                 kNonPreemptible  admitted only within the pool's reservation; never preempted
//                 kPreemptible     admitted within the entitlement; may be preempted
//                 kRevocable       runs on slack (see entitlement.h); preempted first
//   Lane        the head-of-line unit of admission: (SLA class, controller flag). A gang that
//               does not fit blocks later gangs of its own lane only (see admission.h).
//   Allocation  what a pool holds, tracked by class. `regular` = non-preemptible + preemptible
//               (compared with the entitlement); `revocable` is compared with the slack
//               entitlement; `controller` counts controller tasks of any class (compared with
//               controller_limit); `preempting_*` is the part already chosen as preemption
//               victims that has not been released yet.
//
// Thread-safety: value types.

#include <cstdint>

#include "absl/strings/string_view.h"
#include "common/ids.h"
#include "common/resources.h"
#include "spec/job_spec.h"

namespace paceline::resmgr {

struct GangIdTag {};
using GangId = StrongId<GangIdTag, uint64_t>;

enum class SlaClass : uint8_t { kNonPreemptible = 0, kPreemptible = 1, kRevocable = 2 };
inline constexpr int kNumSlaClasses = 3;

// "non-preemptible", "preemptible", "revocable".
absl::string_view SlaClassName(SlaClass c);
// Revocable work is always preemptible; otherwise the `preemptible` flag decides.
SlaClass SlaClassOf(const SlaSpec& sla);

// Two ledgers: regular work is measured against the entitlement, revocable work against the
// slack entitlement.
enum class Ledger : uint8_t { kRegular = 0, kRevocable = 1 };
inline constexpr Ledger LedgerOf(SlaClass c) {
  return c == SlaClass::kRevocable ? Ledger::kRevocable : Ledger::kRegular;
}

// Admission lanes: one per (SLA class, controller flag).
inline constexpr int kNumLanes = 2 * kNumSlaClasses;
inline constexpr int LaneOf(SlaClass c, bool controller) {
  return static_cast<int>(c) * 2 + (controller ? 1 : 0);
}
// "preemptible", "preemptible controller", ...
absl::string_view LaneName(int lane);

struct Allocation {
  Resources non_preemptible;
  Resources preemptible;
  Resources revocable;
  Resources controller;            // subset of the three above
  Resources preempting_regular;    // subset of non_preemptible + preemptible (preemptible only)
  Resources preempting_revocable;  // subset of revocable

  Resources regular() const { return non_preemptible + preemptible; }
  Resources Of(Ledger l) const { return l == Ledger::kRegular ? regular() : revocable; }
  Resources PreemptingOf(Ledger l) const {
    return l == Ledger::kRegular ? preempting_regular : preempting_revocable;
  }
  // Adds (sign = +1) or removes (sign = -1) `r` held by work of class `c`.
  void Apply(SlaClass c, bool is_controller, const Resources& r, int sign) {
    const Resources delta = r * sign;
    Resources& lane = c == SlaClass::kNonPreemptible ? non_preemptible
                      : c == SlaClass::kPreemptible  ? preemptible
                                                     : revocable;
    lane += delta;
    if (is_controller) controller += delta;
  }
  Allocation& operator+=(const Allocation& o);
  friend bool operator==(const Allocation&, const Allocation&) = default;
};

}  // namespace paceline::resmgr
