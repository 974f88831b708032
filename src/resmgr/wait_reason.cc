#include "resmgr/wait_reason.h"

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/units.h"

namespace paceline::resmgr {
namespace {

std::string Q(Dim d, int64_t v) { return FormatQuantity(d, v); }

std::string HeldAsked(const WaitReason& r, absl::string_view pool, absl::string_view what,
                      absl::string_view bound_name) {
  return absl::StrCat(DimName(r.dim), ": pool ", pool, " holds ", Q(r.dim, r.held), " of ", what,
                      " and the gang asks ", Q(r.dim, r.asked), ", above its ", bound_name, " ",
                      Q(r.dim, r.bound));
}

absl::string_view CapName(CapKind c) {
  switch (c) {
    case CapKind::kLimit:
      return "limit";
    case CapKind::kReservation:
      return "reservation (non-preemptible work runs only within it)";
    case CapKind::kControllerLimit:
      return "controller_limit";
    case CapKind::kSlackLimit:
      return "slack limit (revocable work)";
    case CapKind::kMaxRunning:
      return "max_running_instances";
    case CapKind::kEntitlement:
      return "entitlement";
    case CapKind::kSlackEntitlement:
      return "slack entitlement";
  }
  return "?";
}

std::string When(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

absl::string_view WorkOf(CapKind c) {
  switch (c) {
    case CapKind::kReservation:
      return "non-preemptible work";
    case CapKind::kControllerLimit:
      return "controller tasks";
    case CapKind::kSlackEntitlement:
      return "revocable work";
    default:
      return "regular work";
  }
}

}  // namespace

absl::string_view WaitCodeName(WaitCode code) {
  switch (code) {
    case WaitCode::kNotEvaluated:
      return "not-evaluated";
    case WaitCode::kBlockedBehind:
      return "blocked-behind";
    case WaitCode::kEntitlement:
      return "entitlement";
    case WaitCode::kSlack:
      return "slack";
    case WaitCode::kClusterSlack:
      return "cluster-slack";
    case WaitCode::kReservation:
      return "reservation";
    case WaitCode::kControllerLimit:
      return "controller-limit";
    case WaitCode::kThrottled:
      return "throttled";
    case WaitCode::kNeverFits:
      return "never-fits";
    case WaitCode::kPoolOverEntitlement:
      return "pool-over-entitlement";
    case WaitCode::kAwaitingPreemption:
      return "awaiting-preemption";
    case WaitCode::kEarmarked:
      return "earmarked";
    case WaitCode::kHeldBack:
      return "held-back";
    case WaitCode::kReserved:
      return "reserved";
    case WaitCode::kWaitingForHosts:
      return "waiting-for-hosts";
  }
  return "?";
}

std::string DescribeWait(const WaitReason& r, absl::string_view pool, JobId job) {
  switch (r.code) {
    case WaitCode::kNotEvaluated:
      return "queued after the last scheduling cycle; it is considered in the next one";
    case WaitCode::kBlockedBehind:
      if (absl::Time(r.at) != absl::InfinitePast()) {
        return absl::StrCat(
            "waits behind gang ", r.other.value(), ", reserved for gang ", r.other.value(),
            " from ", When(r.at),
            "; this gang is backfilled ahead of it only if its pool and the hosts have "
            "room for it now and, by its max_running_time, it ends by then or "
            "fits beside it");
      }
      return absl::StrCat("waits behind gang ", r.other.value(),
                          ", which is earlier in the same class and does not fit yet (pool ", pool,
                          " admits each class in priority, then arrival, order)");
    case WaitCode::kReserved: {
      std::string s = absl::StrCat(HeldAsked(r, pool, WorkOf(r.cap), CapName(r.cap)),
                                   "; reserved for gang ", r.other.value(), " from ", When(r.at),
                                   " at the latest (as running tasks reach max_running_time)");
      if (absl::Time(r.predicted) < absl::Time(r.at)) {
        absl::StrAppend(&s, ", predicted ", When(r.predicted), " by expected_running_time");
      }
      return s;
    }
    case WaitCode::kWaitingForHosts:
      return absl::StrCat("pool ", pool, " has room for the gang, but its ", r.asked,
                          " tasks do not fit on the hosts yet (their free capacity is split over "
                          "hosts): hosts are held for gang ",
                          r.other.value(), ", free by ", When(r.at),
                          " at the latest (as their tasks reach max_running_time), "
                          "and its capacity is reserved from ",
                          When(r.predicted));
    case WaitCode::kEntitlement:
      return HeldAsked(r, pool, "regular work", "entitlement");
    case WaitCode::kSlack:
      return HeldAsked(r, pool, "revocable work", "slack entitlement");
    case WaitCode::kClusterSlack:
      return absl::StrCat(DimName(r.dim), ": the gang asks ", Q(r.dim, r.asked), " but only ",
                          Q(r.dim, r.bound),
                          " of the cluster's slack is left for revocable work this cycle");
    case WaitCode::kReservation:
      return HeldAsked(r, pool, "non-preemptible work",
                       "reservation (non-preemptible work runs only within it)");
    case WaitCode::kControllerLimit:
      return HeldAsked(r, pool, "controller tasks", "controller_limit");
    case WaitCode::kThrottled:
      return absl::StrCat("job ", job.value(), " holds ", r.held,
                          " admitted instance(s) and the gang adds ", r.asked,
                          ", above max_running_instances ", r.bound);
    case WaitCode::kNeverFits:
      if (r.cap == CapKind::kMaxRunning) {
        return absl::StrCat("the gang has ", r.asked, " tasks, above job ", job.value(),
                            "'s max_running_instances ", r.bound,
                            "; it can never start (fix the job's SLA)");
      }
      return absl::StrCat(DimName(r.dim), ": the gang asks ", Q(r.dim, r.asked), ", above the ",
                          CapName(r.cap), " ", Q(r.dim, r.bound), " of pool ", pool,
                          "; it can never be admitted (update the pool or the job)");
    case WaitCode::kPoolOverEntitlement:
      return absl::StrCat(DimName(r.dim), ": pool ", pool, " holds ", Q(r.dim, r.held),
                          ", above its entitlement ", Q(r.dim, r.bound),
                          "; nothing new is admitted until the excess is reclaimed");
    case WaitCode::kAwaitingPreemption:
      return absl::StrCat("preempted work of pool ", pool,
                          " is releasing the resources this gang needs (lower-priority work was "
                          "preempted for it, or the pool's excess is being reclaimed); it is "
                          "admitted once they are released");
    case WaitCode::kEarmarked:
      return absl::StrCat(DimName(r.dim), ": ", Q(r.dim, r.bound), " of the free capacity of pool ",
                          pool, " is earmarked for higher-priority gang ", r.other.value(),
                          " (work was preempted for it)");
    case WaitCode::kHeldBack:
      return absl::StrCat("waits behind higher-priority gang ", r.other.value(), " of pool ", pool,
                          ", which waits for the pool's entitlement: admitted now, this "
                          "preemptible gang would only be preempted for it");
  }
  return "?";
}

}  // namespace paceline::resmgr
