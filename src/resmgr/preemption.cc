#include "resmgr/preemption.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/units.h"

namespace paceline::resmgr {
namespace {

// Whether taking `held` reduces `left` in some dimension.
bool Helps(const Resources& held, const Resources& left) {
  for (int i = 0; i < kNumDims; ++i) {
    if (left.at(i) > 0 && held.at(i) > 0) return true;
  }
  return false;
}

}  // namespace

void Preemptor::BeginCycle(const PoolTree& tree, absl::Time now) {
  preempted_this_cycle_ = Resources();
  victims_this_cycle_ = 0;
  budget_exhausted_ = false;
  for (PoolId leaf : tree.layout().leaves) {
    PoolRuntime& p = state_.pool(leaf);
    if (p.earmarks.empty()) continue;
    std::erase_if(p.earmarks,
                  [&](const Earmark& e) { return now - e.created >= config_.earmark_timeout; });
  }
}

bool Preemptor::TakeBudget(const Resources& r) {
  if (budget_exhausted_) return false;
  if (victims_this_cycle_ > 0) {
    std::optional<Resources> sum = CheckedAdd(preempted_this_cycle_, r);
    if (!sum.has_value() || !sum->FitsIn(config_.max_per_cycle)) {
      budget_exhausted_ = true;
      return false;
    }
  }
  preempted_this_cycle_ += r;
  ++victims_this_cycle_;
  return true;
}

void Preemptor::CollectCandidates(const PoolRuntime& pool, int l, int32_t below_priority) {
  heap_.clear();
  for (uint32_t slot : pool.candidates[l]) {
    if (state_.gang(slot).priority < below_priority) heap_.push_back(state_.KeyOf(slot));
  }
  // std heaps keep the greatest element on top: order by "comes later as a victim".
  std::make_heap(heap_.begin(), heap_.end(),
                 [](const VictimKey& a, const VictimKey& b) { return VictimOrder()(b, a); });
}

uint32_t Preemptor::PopVictim() {
  std::pop_heap(heap_.begin(), heap_.end(),
                [](const VictimKey& a, const VictimKey& b) { return VictimOrder()(b, a); });
  const uint32_t slot = heap_.back().slot;
  heap_.pop_back();
  return slot;
}

Resources Preemptor::EarmarkedAgainst(const PoolRuntime& pool, const Gang& g) const {
  Resources sum;
  for (const Earmark& e : pool.earmarks) {
    if (e.ledger == g.ledger() && e.beneficiary != g.id && e.priority >= g.priority) {
      sum += e.Held();
    }
  }
  return sum;
}

Resources Preemptor::EarmarkedNeedAgainst(const PoolRuntime& pool, const Gang& g) const {
  Resources sum;
  for (const Earmark& e : pool.earmarks) {
    if (e.ledger == g.ledger() && e.beneficiary != g.id && e.priority >= g.priority) {
      sum += e.need;
    }
  }
  return sum;
}

PreemptionDecision Preemptor::Decide(uint32_t slot, PreemptionCause cause) const {
  const Gang& g = state_.gang(slot);
  PreemptionDecision d;
  d.gang = g.id;
  d.job = g.job;
  d.pool = g.pool;
  d.sla = g.sla;
  d.priority = g.priority;
  d.resources = g.held;
  d.cause = cause;
  for (const TaskRecord& t : g.tasks) {
    if (t.state == TaskState::kAdmitted || t.state == TaskState::kRunning) d.tasks.push_back(t.id);
  }
  return d;
}

std::optional<PoolId> Preemptor::Claimant(const PoolTree& tree, const Entitlements& ent,
                                          PoolId pool, Ledger l, Dim dim) const {
  const std::vector<Resources>& now =
      l == Ledger::kRegular ? ent.entitlement : ent.slack_entitlement;
  const std::vector<Resources>& before = previous_[static_cast<int>(l)];
  std::optional<PoolId> best;
  int best_depth = -1;
  for (PoolId leaf : tree.layout().leaves) {
    const uint32_t i = leaf.value();
    if (leaf == pool || i >= before.size() || now[i][dim] <= before[i][dim]) continue;
    // Depth of the lowest common ancestor.
    PoolId a = pool, b = leaf;
    while (tree.depth(a) > tree.depth(b)) a = tree.parent(a);
    while (tree.depth(b) > tree.depth(a)) b = tree.parent(b);
    while (a != b) {
      a = tree.parent(a);
      b = tree.parent(b);
    }
    if (tree.depth(a) > best_depth) {
      best_depth = tree.depth(a);
      best = leaf;
    }
  }
  return best;
}

void Preemptor::ReclaimExcess(const PoolTree& tree, const Entitlements& ent,
                              std::vector<PreemptionDecision>& out) {
  for (Ledger ledger : {Ledger::kRevocable, Ledger::kRegular}) {
    const int li = static_cast<int>(ledger);
    for (PoolId leaf : tree.layout().leaves) {
      PoolRuntime& p = state_.pool(leaf);
      const Resources bound = ledger == Ledger::kRegular ? ent.entitlement[leaf.value()]
                                                         : ent.slack_entitlement[leaf.value()];
      const Resources effective = p.alloc.Of(ledger) - p.alloc.PreemptingOf(ledger);
      Resources left = SubtractClamped(effective, bound);
      if (left.IsZero()) {
        p.over_cycles[li] = 0;
        p.claimant[li].reset();
        continue;
      }
      if (++p.over_cycles[li] == 1) {
        p.claimant[li] = Claimant(tree, ent, leaf, ledger, *left.FirstExceeding(Resources()));
      }
      if (static_cast<int>(p.over_cycles[li]) < config_.hysteresis_cycles || budget_exhausted_) {
        continue;
      }
      const Resources excess = left;
      picked_.clear();
      CollectCandidates(p, li, INT32_MAX);
      while (!heap_.empty()) {
        const uint32_t slot = PopVictim();
        const Gang& g = state_.gang(slot);
        if (!Helps(g.held, left)) continue;
        if (!TakeBudget(g.held)) break;
        picked_.push_back(slot);
        left = SubtractClamped(left, g.held);
        if (left.IsZero()) break;
      }
      if (picked_.empty()) continue;

      const Dim dim = *excess.FirstExceeding(Resources());
      std::optional<PoolId> claimant = p.claimant[li];
      if (claimant.has_value() && !tree.Exists(*claimant)) claimant.reset();
      const absl::string_view kind = ledger == Ledger::kRegular ? "regular" : "revocable";
      const absl::string_view bound_name =
          ledger == Ledger::kRegular ? "entitlement" : "slack entitlement";
      std::string why = absl::StrCat(
          "pool ", tree.path(leaf), " holds ", DimName(dim), " ",
          FormatQuantity(dim, effective[dim]), " of ", kind, " work, above its ", bound_name, " ",
          FormatQuantity(dim, bound[dim]), " (for ", p.over_cycles[li], " cycles); ",
          claimant.has_value() ? absl::StrCat("reclaimed for pool ", tree.path(*claimant),
                                              ", whose entitlement grew with its demand")
          : ledger == Ledger::kRevocable
              ? std::string("reclaimed because the cluster's slack shrank (regular work took "
                            "capacity back)")
              : std::string("reclaimed because the entitlement fell (capacity, limits or shares "
                            "changed)"));
      for (uint32_t slot : picked_) {
        PreemptionDecision d =
            Decide(slot, ledger == Ledger::kRegular ? PreemptionCause::kPoolOverEntitlement
                                                    : PreemptionCause::kPoolOverSlack);
        d.has_for_pool = claimant.has_value();
        if (claimant.has_value()) d.for_pool = *claimant;
        d.reason = why;
        state_.BeginPreemption(slot, std::nullopt);
        out.push_back(std::move(d));
      }
    }
  }
  previous_[0] = ent.entitlement;
  previous_[1] = ent.slack_entitlement;
}

Preemptor::Outcome Preemptor::MakeRoom(const PoolTree& tree, uint32_t slot,
                                       const Resources& entitlement, absl::Time now,
                                       std::vector<PreemptionDecision>& out) {
  if (!config_.intra_pool) return Outcome::kNothingToTake;
  const Gang& g = state_.gang(slot);
  PL_CHECK(g.state == GangState::kQueued) << "making room for a gang that is not queued";
  PoolRuntime& p = state_.pool(g.pool);
  const Ledger ledger = g.ledger();
  const int li = static_cast<int>(ledger);

  // The state once everything already chosen is gone and every earmark that applies is used.
  const Resources future_alloc = p.alloc.Of(ledger) - p.alloc.PreemptingOf(ledger);
  const Resources future_bound = SubtractClamped(entitlement, EarmarkedNeedAgainst(p, g));
  Resources left = SubtractClamped(future_alloc + g.held, future_bound);
  if (left.IsZero()) return Outcome::kAlreadyFreeing;

  // Is there enough lower-priority work at all?
  Resources available;
  for (const auto& [priority, bucket] : p.victim_sum_by_priority[li]) {
    if (priority >= g.priority) break;
    available += bucket.held;
  }
  if (!left.FitsIn(available)) return Outcome::kNothingToTake;

  picked_.clear();
  CollectCandidates(p, li, g.priority);
  while (!heap_.empty()) {
    const uint32_t slot = PopVictim();
    const Gang& v = state_.gang(slot);
    if (!Helps(v.held, left)) continue;
    if (!TakeBudget(v.held)) break;
    picked_.push_back(slot);
    left = SubtractClamped(left, v.held);
    if (left.IsZero()) break;
  }
  if (picked_.empty()) return Outcome::kNothingToTake;

  if (p.FindEarmark(g.id) == nullptr) {
    state_.AddEarmark(g.pool, Earmark{g.id, g.priority, ledger, g.held, Resources(), now});
  }
  const std::string why =
      absl::StrCat("preempted for gang ", g.id.value(), " (job ", g.job.value(), ", priority ",
                   g.priority, ", ", g.held.ToString(), ") of pool ", tree.path(g.pool),
                   ", which cannot be admitted while lower-priority work holds the pool's ",
                   ledger == Ledger::kRegular ? "entitlement" : "slack entitlement");
  const GangId beneficiary = g.id;
  for (uint32_t victim : picked_) {
    PreemptionDecision d = Decide(victim, PreemptionCause::kHigherPriorityGang);
    d.for_gang = beneficiary;
    d.has_for_gang = true;
    d.for_pool = d.pool;
    d.has_for_pool = true;
    d.reason = why;
    state_.BeginPreemption(victim, beneficiary);
    out.push_back(std::move(d));
  }
  return Outcome::kPreempted;
}

}  // namespace paceline::resmgr
