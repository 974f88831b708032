#pragma once
// UsageDecay: fair share with memory. Per pool, the usage of the recent past, decayed with a
// half-life, and the fair-share factors that weigh siblings' shares by it (Slurm's classic
// fair-share factor), for the parents whose spec sets `fair_share` (spec/pool_spec.h).
//
// Usage. A pool's instantaneous usage is its subtree's regular allocation as a dominant share
// of the cluster: a = max over dimensions d with capacity of allocation[d] / capacity[d],
// clamped to [0, 1]. Only the children of a parent with the policy keep usage, in
// "cluster-seconds" (the whole cluster for one second = 1), decayed with the parent's half-life
// h. Advance(now) takes the allocation as it is at the call as held since the last Advance and
// integrates exactly over that interval dt:
//     U ← U · 2^(−dt/h) + a · (h / ln 2) · (1 − 2^(−dt/h))
// so a constant allocation gives the same usage whatever the cycle length, and a pool that
// holds the whole cluster forever tends to h / ln 2. The first Advance, and one whose `now` is
// not after the last one (a clock that jumped back), accrue and decay nothing.
//
// Factor. Under a parent with the policy, child c's factor in dimension d is
//     F = max(kMinFairShareFactor, 2^(−U_c / S_c))
// with U_c = c's usage / the sum of its live siblings' (itself included; 0 when that sum is 0)
// and S_c = c's share in d / the siblings' sum of shares in d. F is in (0, 1]: 1 for a child
// with no recent usage, 1/2 for one whose usage is exactly its share; the floor keeps every
// weight positive. The entitlement calculator multiplies the share by F in its demand and
// spare phases only (entitlement.h), never for the reservations or the slack. Children of a
// parent without the policy have factor 1 and no usage.
//
// Restart: usage lives in memory only and starts from zero with each resource manager (a new
// master leader), unless the caller seeds it (Seed) from a record of past usage.
//
// Cost: nothing while no pool has the policy (one check of the tree's version); otherwise
// O(pools) per Advance. Thread-safety: single-threaded; not thread-safe.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/ids.h"
#include "common/resources.h"
#include "resmgr/pool_tree.h"

namespace paceline::resmgr {

// The smallest factor: a child with usage ten times its share or more weighs 1/1024 of its share.
inline constexpr double kMinFairShareFactor = 1.0 / 1024;

// One pool's place in its parent's fair share, as `paceline pool get` shows it.
struct FairShareView {
  absl::Duration half_life;   // the parent's
  double decayed_usage = 0;   // cluster-seconds
  double usage_fraction = 0;  // U: of the siblings' total (0 when nobody used anything)
  std::array<double, kNumDims> share_fraction{};  // S, by dimension
  std::array<double, kNumDims> factor{};          // F, by dimension
};

class UsageDecay {
 public:
  using Factors = std::array<double, kNumDims>;

  // Accrues what each governed pool held since the last call and decays all usage to `now`,
  // then recomputes the factors. `leaf_allocation` is indexed by PoolId value (leaves read).
  void Advance(const PoolTree& tree, std::span<const Resources> leaf_allocation,
               const Resources& capacity, absl::Time now);

  // Sets `pool`'s usage to `usage` cluster-seconds measured at `as_of`, decayed from then to the
  // time of the last Advance (or, before the first, to the time of the first). For a restart:
  // seed from recorded usage before the first cycle. INVALID_ARGUMENT for a negative or
  // non-finite usage; NOT_FOUND for an unknown pool; FAILED_PRECONDITION when the pool's
  // parent has no fair_share policy. The factors change at the next Advance.
  absl::Status Seed(const PoolTree& tree, PoolId pool, double usage, absl::Time as_of);

  // Indexed by PoolId value; empty while no pool has the policy (every factor is then 1).
  std::span<const Factors> factors() const { return factors_; }
  // The pool's fair-share figures as of the last Advance; nullopt when its parent has no
  // fair_share policy (or for the root, or an unknown pool).
  std::optional<FairShareView> View(const PoolTree& tree, PoolId pool) const;

 private:
  // Rebuilds governed_ when the tree changed; true when some pool has the policy.
  bool Refresh(const PoolTree& tree);
  void ComputeFactors(const PoolTree& tree);

  uint64_t tree_version_ = UINT64_MAX;
  bool any_policy_ = false;
  std::optional<absl::Time> last_;
  std::vector<double> usage_;     // by PoolId value, cluster-seconds as of last_
  std::vector<Factors> factors_;  // by PoolId value; empty without any policy
  std::vector<Resources> held_;   // scratch: the subtree's allocation, by layout position
  struct PendingSeed {
    PoolId pool;
    double usage;
    absl::Time as_of;
  };
  std::vector<PendingSeed> pending_;  // seeds before the first Advance
};

}  // namespace paceline::resmgr
