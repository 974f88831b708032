#pragma once
// WaitReason: why a queued gang was not admitted, structured (for the API and `paceline pool
// get`) and as a sentence (for "why is this pending?").
//
// Every queued gang carries the reason of the last admission cycle that looked at it. A reason
// names the bound that stopped the gang with three numbers in one dimension: what the pool (or
// job) already holds, what the gang asks, and the bound, e.g.
//   "cpu: pool /ads holds 40 and the gang asks 20, above its entitlement 50".
//
// Thread-safety: value types and pure functions.

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "common/packed_time.h"
#include "common/resources.h"
#include "resmgr/types.h"

namespace paceline::resmgr {

enum class WaitCode : uint8_t {
  kNotEvaluated = 0,     // enqueued after the last cycle
  kBlockedBehind,        // an earlier gang of the same lane does not fit (head of line)
  kEntitlement,          // regular allocation + gang > entitlement
  kSlack,                // revocable allocation + gang > slack entitlement
  kClusterSlack,         // the cluster's slack left this cycle is too small
  kReservation,          // non-preemptible allocation + gang > reservation
  kControllerLimit,      // controller allocation + gang > controller_limit
  kThrottled,            // the job is at max_running_instances
  kNeverFits,            // the gang exceeds a fixed bound of its pool or job (see `cap`)
  kPoolOverEntitlement,  // the pool holds more than its entitlement; reclaiming first
  kAwaitingPreemption,   // victims were chosen for this gang; waiting for their release
  kEarmarked,            // free capacity is earmarked for a higher-priority gang (`other`)
  kHeldBack,             // a higher-priority gang (`other`) waits for the pool's entitlement
                         // and would preempt this preemptible gang if it were admitted
  kReserved,             // backfill (backfill.h): the lane's first gang does not fit the bound
                         // `cap` now; its capacity is reserved from `at` (predicted: `predicted`)
  kWaitingForHosts,      // backfill on hosts (host_gate.h): the lane's first gang fits its bounds
                         // but its `asked` tasks find no hosts yet; hosts are held for it, free
                         // by `at`; its capacity is reserved from `predicted`
};

// Which fixed bound a kNeverFits gang exceeds.
enum class CapKind : uint8_t {
  kLimit = 0,
  kReservation,
  kControllerLimit,
  kSlackLimit,
  kMaxRunning,
  kEntitlement,       // kReserved: the pool's entitlement
  kSlackEntitlement,  // kReserved: the pool's slack entitlement
};

struct WaitReason {
  WaitCode code = WaitCode::kNotEvaluated;
  CapKind cap = CapKind::kLimit;
  Dim dim = Dim::kCpu;
  int64_t held = 0;    // what the pool (or job) holds in `dim`
  int64_t asked = 0;   // what the gang asks in `dim`
  int64_t bound = 0;   // the bound in `dim`
  GangId other;        // kBlockedBehind: the lane's head; kEarmarked: the beneficiary; kHeldBack:
                       // the higher-priority gang
  uint64_t cycle = 0;  // the admission cycle that set this reason
  // Backfill: kReserved: the time the gang's capacity is reserved from (it is admitted by then
  // at the latest, from the running tasks' max_running_time) and the start the tasks'
  // expected_running_time predicts; kBlockedBehind: the reserved head's `at`, or the infinite
  // past when its lane has no reservation.
  PackedTime at;
  PackedTime predicted;

  friend bool operator==(const WaitReason&, const WaitReason&) = default;
};

absl::string_view WaitCodeName(WaitCode code);  // "entitlement", "blocked-behind", ...

// A sentence for users; `pool` is the pool's path, `job` the gang's job.
std::string DescribeWait(const WaitReason& reason, absl::string_view pool, JobId job);

}  // namespace paceline::resmgr
