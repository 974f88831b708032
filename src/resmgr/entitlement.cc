#include "resmgr/entitlement.h"

#include <algorithm>
#include <limits>

#include "common/check.h"

namespace paceline::resmgr {
namespace {

// Saturating per-dimension sum (demands of absurd size must not wrap around).
void AddSaturating(Resources& acc, const Resources& r) {
  for (int i = 0; i < kNumDims; ++i) {
    int64_t sum;
    acc.at(i) = __builtin_add_overflow(acc.at(i), r.at(i), &sum) ? kUnlimited : sum;
  }
}

Resources ClampNonNegative(const Resources& r) { return Max(r, Resources()); }

}  // namespace

const Entitlements& EntitlementCalculator::Compute(const PoolTree& tree,
                                                   const EntitlementInput& in) {
  const PoolLayout& l = tree.layout();
  const size_t n = l.id.size();
  PL_CHECK(in.demand.size() >= tree.slot_count() && in.slack_demand.size() >= tree.slot_count() &&
           in.allocation.size() >= tree.slot_count())
      << "input vectors shorter than the pool id range";
  demand_.assign(n, Resources());
  effective_.assign(n, Resources());
  slack_demand_.assign(n, Resources());
  entitlement_.assign(n, Resources());
  slack_entitlement_.assign(n, Resources());

  // Bottom-up: demand. Children always sit after their parent in breadth-first order.
  for (size_t pos = n; pos-- > 0;) {
    Resources demand, effective, slack;
    if (l.child_begin[pos] == l.child_end[pos]) {
      const uint32_t id = l.id[pos].value();
      demand = ClampNonNegative(in.demand[id]);
      effective = demand;
      slack = ClampNonNegative(in.slack_demand[id]);
    } else {
      for (uint32_t c = l.child_begin[pos]; c < l.child_end[pos]; ++c) {
        AddSaturating(demand, demand_[c]);
        AddSaturating(effective, effective_[c]);
        AddSaturating(slack, slack_demand_[c]);
      }
    }
    demand_[pos] = Min(demand, l.limit[pos]);
    effective_[pos] =
        l.is_static[pos] ? Min(l.reservation[pos], l.limit[pos]) : Min(effective, l.limit[pos]);
    slack_demand_[pos] = Min(slack, l.slack_cap[pos]);
  }

  // Top-down: entitlement.
  factor_ = in.share_factor;
  entitlement_[0] = ClampNonNegative(in.capacity);
  for (uint32_t pos = 0; pos < n; ++pos) {
    if (l.child_begin[pos] == l.child_end[pos]) continue;
    for (int d = 0; d < kNumDims; ++d) Divide(l, pos, d);
  }

  // Slack: what regular work does not claim, plus what it holds without using.
  Resources claimed;
  for (PoolId leaf : l.leaves) {
    const uint32_t pos = l.position[leaf.value()];
    AddSaturating(claimed, Max(ClampNonNegative(in.allocation[leaf.value()]),
                               Min(demand_[pos], entitlement_[pos])));
  }
  out_.slack_capacity =
      SubtractClamped(entitlement_[0], claimed) + ClampNonNegative(in.allocated_unused);
  slack_entitlement_[0] = out_.slack_capacity;
  for (uint32_t pos = 0; pos < n; ++pos) {
    if (l.child_begin[pos] == l.child_end[pos]) continue;
    for (int d = 0; d < kNumDims; ++d) DivideSlack(l, pos, d);
  }

  const size_t slots = tree.slot_count();
  out_.demand.assign(slots, Resources());
  out_.entitlement.assign(slots, Resources());
  out_.slack_demand.assign(slots, Resources());
  out_.slack_entitlement.assign(slots, Resources());
  for (size_t pos = 0; pos < n; ++pos) {
    const uint32_t id = l.id[pos].value();
    out_.demand[id] = demand_[pos];
    out_.entitlement[id] = entitlement_[pos];
    out_.slack_demand[id] = slack_demand_[pos];
    out_.slack_entitlement[id] = slack_entitlement_[pos];
  }
  return out_;
}

void EntitlementCalculator::Divide(const PoolLayout& l, uint32_t parent, int d) {
  const uint32_t begin = l.child_begin[parent];
  const uint32_t n = l.child_end[parent] - begin;
  const int64_t amount = entitlement_[parent].at(d);
  headroom_.resize(n);
  grant_.resize(n);
  weight_.resize(n);

  // Phase 1: reservations, min(demand, reservation); static pools their reservation.
  __int128 base_sum = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t c = begin + i;
    weight_[i] = l.share[c][d];
    const int64_t reservation = std::min(l.reservation[c].at(d), l.limit[c].at(d));
    headroom_[i] = l.is_static[c] ? reservation : std::min(effective_[c].at(d), reservation);
    base_sum += headroom_[i];
  }
  if (base_sum > amount) {
    // Reservations are infeasible here: share the entitlement by share up to the bases.
    std::fill(grant_.begin(), grant_.end(), 0);
    filler_.Fill(amount, headroom_, weight_, grant_);
    for (uint32_t i = 0; i < n; ++i) entitlement_[begin + i].at(d) = grant_[i];
    return;
  }
  for (uint32_t i = 0; i < n; ++i) grant_[i] = headroom_[i];
  int64_t left = amount - static_cast<int64_t>(base_sum);
  // Fair share with memory: past usage weighs the shares above the reservations.
  if (!factor_.empty()) {
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t id = l.id[begin + i].value();
      if (id < factor_.size()) {
        weight_[i] = std::max(weight_[i] * factor_[id][d], std::numeric_limits<double>::min());
      }
    }
  }

  // Phase 2: unmet demand, by share.
  if (left > 0) {
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t c = begin + i;
      headroom_[i] = l.is_static[c] ? 0 : effective_[c].at(d) - grant_[i];
    }
    left = filler_.Fill(left, headroom_, weight_, grant_);
  }
  // Phase 3: spare capacity, by share up to the limits.
  if (left > 0) {
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t c = begin + i;
      headroom_[i] = l.is_static[c] ? 0 : l.limit[c].at(d) - grant_[i];
    }
    filler_.Fill(left, headroom_, weight_, grant_);
  }
  for (uint32_t i = 0; i < n; ++i) entitlement_[begin + i].at(d) = grant_[i];
}

void EntitlementCalculator::DivideSlack(const PoolLayout& l, uint32_t parent, int d) {
  const uint32_t begin = l.child_begin[parent];
  const uint32_t n = l.child_end[parent] - begin;
  headroom_.resize(n);
  grant_.resize(n);
  weight_.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    weight_[i] = l.share[begin + i][d];
    headroom_[i] = slack_demand_[begin + i].at(d);
    grant_[i] = 0;
  }
  filler_.Fill(slack_entitlement_[parent].at(d), headroom_, weight_, grant_);
  for (uint32_t i = 0; i < n; ++i) slack_entitlement_[begin + i].at(d) = grant_[i];
}

Entitlements ComputeEntitlements(const PoolTree& tree, const EntitlementInput& input) {
  EntitlementCalculator calc;
  return calc.Compute(tree, input);
}

}  // namespace paceline::resmgr
