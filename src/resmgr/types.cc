#include "resmgr/types.h"

#include "resmgr/cycle_result.h"

namespace paceline::resmgr {

absl::string_view SlaClassName(SlaClass c) {
  switch (c) {
    case SlaClass::kNonPreemptible:
      return "non-preemptible";
    case SlaClass::kPreemptible:
      return "preemptible";
    case SlaClass::kRevocable:
      return "revocable";
  }
  return "?";
}

SlaClass SlaClassOf(const SlaSpec& sla) {
  if (sla.revocable) return SlaClass::kRevocable;
  return sla.preemptible ? SlaClass::kPreemptible : SlaClass::kNonPreemptible;
}

absl::string_view LaneName(int lane) {
  static constexpr absl::string_view kNames[kNumLanes] = {
      "non-preemptible", "non-preemptible controller", "preemptible", "preemptible controller",
      "revocable",       "revocable controller"};
  return lane >= 0 && lane < kNumLanes ? kNames[lane] : "?";
}

absl::string_view PreemptionCauseName(PreemptionCause c) {
  switch (c) {
    case PreemptionCause::kPoolOverEntitlement:
      return "pool-over-entitlement";
    case PreemptionCause::kPoolOverSlack:
      return "pool-over-slack";
    case PreemptionCause::kHigherPriorityGang:
      return "higher-priority-gang";
  }
  return "?";
}

Allocation& Allocation::operator+=(const Allocation& o) {
  non_preemptible += o.non_preemptible;
  preemptible += o.preemptible;
  revocable += o.revocable;
  controller += o.controller;
  preempting_regular += o.preempting_regular;
  preempting_revocable += o.preempting_revocable;
  return *this;
}

}  // namespace paceline::resmgr
