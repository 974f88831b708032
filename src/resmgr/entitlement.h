#pragma once
// EntitlementCalculator: what each pool may use right now, by hierarchical max-min fairness.
//
// A pure function of (pool tree, per-leaf demand, cluster capacity), computed independently
// for each dimension (cpu, memory, disk, gpu), with exact integer results.
//
// Demand. A leaf's demand is what its caller says (queued gangs + allocation), capped at its
// limit; an inner pool's demand is the sum of its children's, capped at its own limit. For
// entitlement purposes a static pool demands exactly its reservation (capped at its limit),
// whatever its real demand; `demand` reports the real demand.
//
// Entitlement, top-down. The root's entitlement is the cluster capacity. A pool P with
// entitlement E divides it among its children c (demand d_c, reservation r_c, limit l_c,
// share w_c) in three phases:
//   1. Reservations: each child gets base_c = min(d_c, r_c) (static: r_c). If the bases do not
//      fit in E (reservations above the capacity, or a forced tree), E itself is water-filled
//      by share with base_c as the caps and the division stops there.
//   2. Demand: the rest R = E - Σ base_c is water-filled by share: with a level λ, child c gets
//      min(d_c - base_c, w_c · λ) more, λ rising until R is used up or every demand is met.
//      Static children take no part. Equal shares get equal increments above the reservation.
//   3. Spare: whatever is still left is water-filled by share up to the limits (static children
//      excepted), so a pool can start new work before the next cycle recomputes.
// In phases 2 and 3 (never in phase 1, nor for the slack) the share w_c is multiplied by the
// child's fair-share factor when the caller gives one (fair share with memory, usage_decay.h).
// Then each child divides its own entitlement the same way. Hence: Σ children <= parent;
// every entitlement <= its limit; when the reservations are feasible (each pool's children's
// reservations sum to at most its own, the root's to at most the capacity), every pool gets at
// least min(demand, reservation); and nothing stays with a parent while a child is below its
// limit (work conservation).
//
// Slack (revocable) entitlement. The slack capacity is what regular work does not claim, plus
// what it holds without using:
//   slack capacity = capacity − Σ over leaves of max(allocation, min(demand, entitlement))
//                    + allocated_unused
// A leaf claims the regular demand it is entitled to even before that demand is admitted, so
// the slack shrinks as soon as regular demand appears (revocable work is the first to go) and
// does not shrink again while that demand is being admitted and placed: a revocable task
// preempted for a demand change is not readmitted and preempted again for the same change.
// The slack capacity is divided the same way, top-down, with no reservation phase and no spare
// phase: by share, each pool capped at min(slack demand, SlackCap(spec)), where slack demand =
// revocable queued + revocable allocation.
//
// Cost: O(pools · log(fan-out)) per dimension; no allocation once the scratch buffers are warm
// (about 1.6 ms of CPU for 10,000 pools; see bench/results/resmgr-*.md).
//
// Ownership: Compute() returns a reference to buffers owned by the calculator, valid until the
// next Compute(). Thread-safety: single-threaded; not thread-safe.

#include <array>
#include <span>
#include <vector>

#include "common/resources.h"
#include "resmgr/pool_tree.h"
#include "resmgr/water_fill.h"

namespace paceline::resmgr {

struct EntitlementInput {
  // Indexed by PoolId value, size >= tree.slot_count(); read for live leaf pools only.
  std::span<const Resources> demand;        // regular demand: queued + allocated
  std::span<const Resources> allocation;    // regular allocation
  std::span<const Resources> slack_demand;  // revocable demand: queued + allocated
  Resources capacity;                       // the root's entitlement
  Resources allocated_unused;  // allocated to regular work but measured unused (slack source)
  // Fair share with memory (usage_decay.h): indexed by PoolId value, a factor in (0, 1] per
  // dimension that multiplies the pool's share in phases 2 and 3; empty = every factor 1.
  std::span<const std::array<double, kNumDims>> share_factor = {};
};

// Indexed by PoolId value (size tree.slot_count(); zero for deleted ids).
struct Entitlements {
  std::vector<Resources> demand;  // subtree demand, capped at the limit at every level
  std::vector<Resources> entitlement;
  std::vector<Resources> slack_demand;
  std::vector<Resources> slack_entitlement;
  Resources slack_capacity;  // the root's slack entitlement
};

class EntitlementCalculator {
 public:
  const Entitlements& Compute(const PoolTree& tree, const EntitlementInput& input);

 private:
  void Divide(const PoolLayout& l, uint32_t parent, int dim);
  void DivideSlack(const PoolLayout& l, uint32_t parent, int dim);

  // By layout position.
  std::vector<Resources> demand_;     // real demand, capped
  std::vector<Resources> effective_;  // demand as entitlement sees it (static: reservation)
  std::vector<Resources> slack_demand_;
  std::vector<Resources> entitlement_;
  std::vector<Resources> slack_entitlement_;
  // Per division (children of one parent, one dimension).
  std::vector<int64_t> headroom_;
  std::vector<int64_t> grant_;
  std::vector<double> weight_;
  std::span<const std::array<double, kNumDims>> factor_;  // the current input's share_factor
  WaterFiller filler_;
  Entitlements out_;
};

// Convenience for tests and tools: a fresh calculator, result by value.
Entitlements ComputeEntitlements(const PoolTree& tree, const EntitlementInput& input);

}  // namespace paceline::resmgr
