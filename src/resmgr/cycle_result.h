#pragma once
// What one scheduling cycle of the resource manager decided, and the per-pool figures the API
// shows (`paceline pool list/get`, the web UI, /metrics).
//
//   AdmittedGang        a gang admitted this cycle: hand it to placement.
//   PreemptionDecision  a gang to preempt, with why and for whom: kill its tasks (grace period
//                       first), then Release() each; re-Enqueue it if its job wants it back.
//   PoolStats           one pool's reservation, limit, share, demand, entitlement and
//                       allocation (an inner pool's figures cover its subtree).
//
// Thread-safety: value types.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/resources.h"
#include "resmgr/types.h"

namespace paceline::resmgr {

struct AdmittedGang {
  GangId gang;
  JobId job;
  PoolId pool;
  SlaClass sla = SlaClass::kPreemptible;
  int32_t priority = 0;
  Resources resources;
  // Backfill: the reserved gang this one was admitted ahead of (unset, 0: admitted in order).
  GangId backfilled_ahead_of;
};

enum class PreemptionCause : uint8_t {
  kPoolOverEntitlement = 0,  // the pool holds more than its entitlement (another pool's demand)
  kPoolOverSlack = 1,        // the pool's revocable work holds more than its slack entitlement
  kHigherPriorityGang = 2,   // a higher-priority gang of the same pool needs the room
};
absl::string_view PreemptionCauseName(PreemptionCause c);

struct PreemptionDecision {
  GangId gang;
  JobId job;
  PoolId pool;
  SlaClass sla = SlaClass::kPreemptible;
  int32_t priority = 0;
  std::vector<TaskId> tasks;  // the tasks still held; each must be Release()d
  Resources resources;
  PreemptionCause cause = PreemptionCause::kPoolOverEntitlement;
  // Who reclaims: kPoolOver*: the nearest pool with unmet demand (may be unset when the
  // entitlement fell for another reason, e.g. lost capacity); kHigherPriorityGang: the gang.
  PoolId for_pool;
  bool has_for_pool = false;
  GangId for_gang;
  bool has_for_gang = false;
  std::string reason;  // a sentence for users and events
};

struct PoolStats {
  PoolId id;
  Resources reservation;
  Resources limit;
  std::array<double, kNumDims> share{};
  Resources demand;       // regular demand: queued + allocated, subtree, capped at limits
  Resources entitlement;  // regular entitlement
  Resources allocation;   // regular allocation (non-preemptible + preemptible), subtree
  Allocation by_class;    // the allocation by class, subtree
  Resources slack_demand;
  Resources slack_entitlement;
  Resources queued;  // resources of queued regular gangs, subtree
  Resources queued_revocable;
  uint32_t queued_gangs = 0;    // subtree
  uint32_t admitted_gangs = 0;  // subtree (admitted or preempting)
  uint32_t over_cycles = 0;     // consecutive cycles above the entitlement (leaves)
};

struct CycleResult {
  uint64_t cycle = 0;
  std::vector<AdmittedGang> admitted;
  std::vector<PreemptionDecision> preempted;
  // Indexed by PoolId value; entries of deleted pools have no meaning (check the tree).
  std::vector<PoolStats> pools;
};

}  // namespace paceline::resmgr
