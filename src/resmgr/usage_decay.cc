#include "resmgr/usage_decay.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "absl/strings/str_cat.h"

namespace paceline::resmgr {
namespace {

double Seconds(absl::Duration d) { return absl::ToDoubleSeconds(d); }

// The subtree's allocation as a dominant share of the capacity, in [0, 1].
double DominantShare(const Resources& held, const Resources& capacity) {
  double a = 0;
  for (int d = 0; d < kNumDims; ++d) {
    if (capacity.at(d) <= 0 || held.at(d) <= 0) continue;
    a = std::max(a, static_cast<double>(held.at(d)) / static_cast<double>(capacity.at(d)));
  }
  return std::min(a, 1.0);
}

// 2^(-dt/h): what is left of usage after dt.
double Decay(double dt, double h) { return std::exp2(-dt / h); }

// What holding a share `a` for dt adds, decayed to the end of the interval:
// ∫0^dt a · 2^(-(dt-s)/h) ds = a · (h / ln 2) · (1 − 2^(−dt/h)).
double Accrued(double a, double dt, double h) {
  const double k = std::numbers::ln2 / h;
  return a * -std::expm1(-dt * k) / k;
}

double Factor(double usage_fraction, double share_fraction) {
  if (usage_fraction <= 0) return 1.0;
  return std::max(kMinFairShareFactor, std::exp2(-usage_fraction / share_fraction));
}

const std::optional<FairShareSpec>& PolicyOf(const PoolTree& tree, PoolId parent) {
  return tree.spec(parent).fair_share;
}

}  // namespace

bool UsageDecay::Refresh(const PoolTree& tree) {
  if (tree.version() == tree_version_) return any_policy_;
  tree_version_ = tree.version();
  const PoolLayout& l = tree.layout();
  usage_.resize(tree.slot_count(), 0.0);
  any_policy_ = false;
  std::vector<uint8_t> governed(tree.slot_count(), 0);
  for (uint32_t pos = 0; pos < l.id.size(); ++pos) {
    if (l.child_begin[pos] == l.child_end[pos] || !PolicyOf(tree, l.id[pos]).has_value()) continue;
    any_policy_ = true;
    for (uint32_t c = l.child_begin[pos]; c < l.child_end[pos]; ++c) governed[l.id[c].value()] = 1;
  }
  // A pool whose parent dropped the policy (or that was deleted) forgets its usage.
  for (size_t id = 0; id < usage_.size(); ++id) {
    if (governed[id] == 0) usage_[id] = 0;
  }
  return any_policy_;
}

void UsageDecay::Advance(const PoolTree& tree, std::span<const Resources> leaf_allocation,
                         const Resources& capacity, absl::Time now) {
  if (!Refresh(tree)) {
    factors_.clear();
    pending_.clear();
    last_ = now;
    return;
  }
  const PoolLayout& l = tree.layout();
  if (!last_.has_value()) {
    for (const PendingSeed& s : pending_) {
      if (!tree.Exists(s.pool) || s.pool == kRootPool) continue;
      const std::optional<FairShareSpec>& p = PolicyOf(tree, tree.parent(s.pool));
      if (!p.has_value()) continue;
      usage_[s.pool.value()] =
          s.usage * Decay(std::max(0.0, Seconds(now - s.as_of)), Seconds(p->half_life));
    }
    pending_.clear();
  } else if (now > *last_) {
    const double dt = Seconds(now - *last_);
    // The subtrees' allocations, bottom-up (children sit after their parent).
    const size_t n = l.id.size();
    std::vector<Resources>& held = held_;
    held.assign(n, Resources());
    for (size_t pos = n; pos-- > 0;) {
      if (l.child_begin[pos] == l.child_end[pos]) {
        const uint32_t id = l.id[pos].value();
        if (id < leaf_allocation.size()) held[pos] = Max(leaf_allocation[id], Resources());
      }
      if (pos > 0) held[l.parent[pos]] += held[pos];
    }
    for (uint32_t pos = 0; pos < n; ++pos) {
      if (l.child_begin[pos] == l.child_end[pos]) continue;
      const std::optional<FairShareSpec>& p = PolicyOf(tree, l.id[pos]);
      if (!p.has_value()) continue;
      const double h = Seconds(p->half_life);
      const double decay = Decay(dt, h);
      for (uint32_t c = l.child_begin[pos]; c < l.child_end[pos]; ++c) {
        double& u = usage_[l.id[c].value()];
        u = u * decay + Accrued(DominantShare(held[c], capacity), dt, h);
      }
    }
  }
  last_ = std::max(now, last_.value_or(now));
  ComputeFactors(tree);
}

void UsageDecay::ComputeFactors(const PoolTree& tree) {
  const PoolLayout& l = tree.layout();
  Factors one;
  one.fill(1.0);
  factors_.assign(tree.slot_count(), one);
  for (uint32_t pos = 0; pos < l.id.size(); ++pos) {
    if (l.child_begin[pos] == l.child_end[pos] || !PolicyOf(tree, l.id[pos]).has_value()) continue;
    double total_usage = 0;
    Factors total_share{};
    for (uint32_t c = l.child_begin[pos]; c < l.child_end[pos]; ++c) {
      total_usage += usage_[l.id[c].value()];
      for (int d = 0; d < kNumDims; ++d) total_share[d] += l.share[c][d];
    }
    for (uint32_t c = l.child_begin[pos]; c < l.child_end[pos]; ++c) {
      const uint32_t id = l.id[c].value();
      const double u = total_usage > 0 ? usage_[id] / total_usage : 0;
      for (int d = 0; d < kNumDims; ++d)
        factors_[id][d] = Factor(u, l.share[c][d] / total_share[d]);
    }
  }
}

absl::Status UsageDecay::Seed(const PoolTree& tree, PoolId pool, double usage, absl::Time as_of) {
  if (!std::isfinite(usage) || usage < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("usage ", usage, " of pool id ", pool.value(),
                     " is not a finite amount >= 0 of cluster-seconds"));
  }
  if (!tree.Exists(pool)) {
    return absl::NotFoundError(absl::StrCat("pool id ", pool.value(), " does not exist"));
  }
  if (pool == kRootPool || !PolicyOf(tree, tree.parent(pool)).has_value()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "pool ", tree.path(pool), ": its parent has no fair_share policy, so it keeps no usage"));
  }
  if (!last_.has_value()) {
    pending_.push_back({pool, usage, as_of});
    return absl::OkStatus();
  }
  Refresh(tree);
  const double h = Seconds(PolicyOf(tree, tree.parent(pool))->half_life);
  usage_[pool.value()] = usage * Decay(std::max(0.0, Seconds(*last_ - as_of)), h);
  return absl::OkStatus();
}

std::optional<FairShareView> UsageDecay::View(const PoolTree& tree, PoolId pool) const {
  if (!tree.Exists(pool) || pool == kRootPool) return std::nullopt;
  const PoolId parent = tree.parent(pool);
  const std::optional<FairShareSpec>& p = PolicyOf(tree, parent);
  if (!p.has_value()) return std::nullopt;
  auto usage_of = [&](PoolId id) { return id.value() < usage_.size() ? usage_[id.value()] : 0.0; };
  FairShareView v;
  v.half_life = p->half_life;
  v.decayed_usage = usage_of(pool);
  double total_usage = 0;
  Factors total_share{};
  for (PoolId c : tree.children(parent)) {
    total_usage += usage_of(c);
    for (int d = 0; d < kNumDims; ++d) total_share[d] += tree.spec(c).dims[d].share;
  }
  v.usage_fraction = total_usage > 0 ? v.decayed_usage / total_usage : 0;
  for (int d = 0; d < kNumDims; ++d) {
    v.share_fraction[d] = tree.spec(pool).dims[d].share / total_share[d];
    v.factor[d] = Factor(v.usage_fraction, v.share_fraction[d]);
  }
  return v;
}

}  // namespace paceline::resmgr
