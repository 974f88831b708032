// Properties of entitlement over thousands of random trees and demand vectors. The seed is fixed
// and printed with every failure (SCOPED_TRACE); rerun with the same seed to reproduce.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "resmgr/entitlement.h"
#include "resmgr/test_builders.h"

namespace paceline::resmgr {
namespace {

constexpr uint64_t kSeed = 0x5eed'0001;
constexpr int kTrees = 2500;
constexpr int kDemandsPerTree = 4;

struct RandomCase {
  PoolTree tree;
  Resources capacity;
  bool feasible = true;
};

int64_t Uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {  // [lo, hi]
  return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
}

// Dimension scales: cpu in millicores, memory and disk in MiB-ish units, gpu in milli-GPUs.
constexpr int64_t kScale[kNumDims] = {1'000, int64_t{1} << 20, int64_t{1} << 20, 1'000};

// A random tree of up to 30 pools, depth <= 4. Feasible trees obey every rule and their root
// children's reservations fit the capacity; the others get a few forced, rule-breaking updates.
RandomCase MakeCase(std::mt19937_64& rng) {
  RandomCase c;
  c.feasible = rng() % 4 != 0;
  for (int d = 0; d < kNumDims; ++d) c.capacity.at(d) = Uniform(rng, 0, 200) * kScale[d];
  // Unreserved budget per pool (the root's is the capacity).
  std::vector<Resources> budget(1, c.capacity);
  std::vector<PoolId> ids(1, kRootPool);
  const int n = static_cast<int>(Uniform(rng, 1, 30));
  for (int i = 0; i < n; ++i) {
    const int parent_index = static_cast<int>(rng() % ids.size());
    const PoolId parent = ids[parent_index];
    if (c.tree.depth(parent) >= 4) continue;
    PoolSpec spec;
    const PoolSpec& ps = c.tree.spec(parent);
    for (int d = 0; d < kNumDims; ++d) {
      const Dim dim = static_cast<Dim>(d);
      const int64_t avail = budget[parent_index].at(d);
      const int64_t res = rng() % 3 == 0 ? 0 : Uniform(rng, 0, avail / 2);
      budget[parent_index].at(d) -= res;
      int64_t limit = ps.dim(dim).limit;
      if (rng() % 3 == 0) {
        const int64_t hi = std::min<int64_t>(limit, 300 * kScale[d]);
        limit = Uniform(rng, res, std::max(res, hi));
      }
      spec.dim(dim) = DimSpec{res, limit, 0.5 * static_cast<double>(Uniform(rng, 1, 4))};
    }
    if (rng() % 10 == 0) spec.type = PoolType::kStatic;
    auto id = c.tree.Create(
        absl::StrCat(c.tree.path(parent) == "/" ? "" : c.tree.path(parent), "/p", i), spec);
    EXPECT_TRUE(id.ok()) << id.status();
    if (!id.ok()) continue;
    ids.push_back(*id);
    budget.push_back(spec.Reservation());
  }
  if (!c.feasible) {
    for (int k = 0; k < 3 && ids.size() > 1; ++k) {
      const PoolId victim = ids[1 + rng() % (ids.size() - 1)];
      PoolSpec spec = c.tree.spec(victim);
      for (int d = 0; d < kNumDims; ++d) {
        DimSpec& ds = spec.dim(static_cast<Dim>(d));
        ds.reservation = Uniform(rng, 0, 300) * kScale[d];
        ds.limit = rng() % 2 ? kUnlimited : ds.reservation + Uniform(rng, 0, 100) * kScale[d];
      }
      EXPECT_TRUE(c.tree.Update(c.tree.path(victim), spec, /*force=*/true).ok());
    }
  }
  return c;
}

// Demand as entitlement sees it: static pools demand their reservation.
Resources Effective(const PoolTree& tree, PoolId id, const std::vector<Resources>& leaf_demand) {
  const PoolSpec& spec = tree.spec(id);
  if (spec.type == PoolType::kStatic && id != kRootPool) {
    return Min(spec.Reservation(), spec.Limit());
  }
  Resources sum;
  if (tree.IsLeaf(id)) {
    sum = leaf_demand[id.value()];
  } else {
    for (PoolId c : tree.children(id)) sum += Effective(tree, c, leaf_demand);
  }
  return Min(sum, spec.Limit());
}

std::string Dump(const RandomCase& c, const std::vector<Resources>& demand, const Entitlements& e) {
  std::string out = absl::StrCat("capacity ", c.capacity.ToString(), "\n");
  for (PoolId id : c.tree.layout().id) {
    const PoolSpec& s = c.tree.spec(id);
    absl::StrAppend(&out, c.tree.path(id), s.type == PoolType::kStatic ? " static" : "", " res ",
                    s.Reservation().ToString(), " limit ", s.Limit().ToString(), " leaf-demand ",
                    demand[id.value()].ToString(), " demand ", e.demand[id.value()].ToString(),
                    " ent ", e.entitlement[id.value()].ToString(), "\n");
  }
  return out;
}

void CheckProperties(const RandomCase& c, const std::vector<Resources>& demand,
                     const std::vector<Resources>& allocation, const Resources& unused,
                     const Entitlements& e) {
  const PoolTree& tree = c.tree;
  ASSERT_EQ(e.entitlement[0], c.capacity);
  // Slack capacity: the capacity regular work does not claim, plus what it leaves unused.
  Resources claimed;
  for (PoolId leaf : tree.layout().leaves) {
    const uint32_t i = leaf.value();
    claimed += Max(allocation[i], Min(e.demand[i], e.entitlement[i]));
  }
  ASSERT_EQ(e.slack_capacity, SubtractClamped(c.capacity, claimed) + unused);
  ASSERT_EQ(e.slack_entitlement[0], e.slack_capacity);
  std::vector<Resources> eff(tree.slot_count());
  for (PoolId id : tree.layout().id) eff[id.value()] = Effective(tree, id, demand);
  for (PoolId id : tree.layout().id) {
    SCOPED_TRACE(tree.path(id));
    const PoolSpec& spec = tree.spec(id);
    const Resources ent = e.entitlement[id.value()];
    ASSERT_TRUE(ent.IsNonNegative());
    if (id != kRootPool) {
      // Never above its limit.
      ASSERT_TRUE(ent.FitsIn(spec.Limit())) << ent.ToString();
      if (c.feasible) {
        // Reservations are honoured up to the demand (as entitlement sees it: a static pool
        // demands its reservation, so a static descendant's demand above its reservation
        // does not count).
        const Resources floor = spec.type == PoolType::kStatic
                                    ? spec.Reservation()
                                    : Min(eff[id.value()], spec.Reservation());
        ASSERT_TRUE(floor.FitsIn(ent))
            << "entitlement " << ent.ToString() << " below " << floor.ToString();
      }
      // Slack never above slack demand or the slack cap.
      ASSERT_TRUE(e.slack_entitlement[id.value()].FitsIn(e.slack_demand[id.value()]));
      ASSERT_TRUE(e.slack_demand[id.value()].FitsIn(SlackCap(spec)));
    }
    const std::vector<PoolId>& kids = tree.children(id);
    if (kids.empty()) continue;
    Resources sum, slack_sum;
    for (PoolId k : kids) {
      sum += e.entitlement[k.value()];
      slack_sum += e.slack_entitlement[k.value()];
    }
    // Children sum to at most the parent.
    ASSERT_TRUE(sum.FitsIn(ent)) << sum.ToString() << " > " << ent.ToString();
    ASSERT_TRUE(slack_sum.FitsIn(e.slack_entitlement[id.value()]));
    for (int d = 0; d < kNumDims; ++d) {
      SCOPED_TRACE(DimName(static_cast<Dim>(d)));
      // Work conservation: something left with the parent means every child is at its cap.
      if (sum.at(d) < ent.at(d)) {
        for (PoolId k : kids) {
          const PoolSpec& ks = tree.spec(k);
          const int64_t cap = ks.type == PoolType::kStatic
                                  ? std::min(ks.Reservation().at(d), ks.Limit().at(d))
                                  : ks.Limit().at(d);
          ASSERT_EQ(e.entitlement[k.value()].at(d), cap) << tree.path(k) << " below its cap";
        }
      }
      // Fairness: elastic siblings with unmet demand are at the same level (by share) above
      // their bases; with equal share and reservation, at the same entitlement (+-1 unit).
      __int128 base_sum = 0;
      for (PoolId k : kids) {
        const PoolSpec& ks = tree.spec(k);
        const int64_t r = std::min(ks.Reservation().at(d), ks.Limit().at(d));
        base_sum += ks.type == PoolType::kStatic ? r : std::min(eff[k.value()].at(d), r);
      }
      const bool shortage = base_sum > ent.at(d);
      for (PoolId a : kids) {
        for (PoolId b : kids) {
          if (a >= b) continue;
          const PoolSpec& sa = tree.spec(a);
          const PoolSpec& sb = tree.spec(b);
          if (sa.type == PoolType::kStatic || sb.type == PoolType::kStatic) continue;
          const int64_t ea = e.entitlement[a.value()].at(d);
          const int64_t eb = e.entitlement[b.value()].at(d);
          const int64_t da = eff[a.value()].at(d);
          const int64_t db = eff[b.value()].at(d);
          const double wa = sa.dims[d].share, wb = sb.dims[d].share;
          const int64_t ra = std::min(sa.dims[d].reservation, sa.dims[d].limit);
          const int64_t rb = std::min(sb.dims[d].reservation, sb.dims[d].limit);
          // Only siblings with unmet demand; in a shortage, what is unmet is the reservation.
          if (ea >= (shortage ? std::min(da, ra) : da)) continue;
          if (eb >= (shortage ? std::min(db, rb) : db)) continue;
          const double la = (shortage ? ea : ea - std::min(da, ra)) / wa;
          const double lb = (shortage ? eb : eb - std::min(db, rb)) / wb;
          ASSERT_NEAR(la, lb, 1 / wa + 1 / wb + 1e-6)
              << tree.path(a) << " vs " << tree.path(b) << ": " << ea << " vs " << eb << " demand "
              << da << " vs " << db << " reservation " << ra << " vs " << rb << " share " << wa
              << " vs " << wb << " parent " << ent.at(d) << (shortage ? " shortage" : "");
          if (wa == wb && ra == rb) {
            ASSERT_LE(std::abs(ea - eb), 1) << tree.path(a) << " vs " << tree.path(b);
          }
        }
      }
    }
  }
}

TEST(EntitlementPropertyTest, RandomTreesAndDemands) {
  SCOPED_TRACE(::testing::Message() << "seed=" << kSeed);
  std::mt19937_64 rng(kSeed);
  EntitlementCalculator calc;
  for (int t = 0; t < kTrees; ++t) {
    SCOPED_TRACE(::testing::Message() << "tree " << t);
    RandomCase c = MakeCase(rng);
    SCOPED_TRACE(c.feasible ? "feasible" : "forced");
    for (int k = 0; k < kDemandsPerTree; ++k) {
      SCOPED_TRACE(::testing::Message() << "demand vector " << k);
      std::vector<Resources> demand(c.tree.slot_count()), slack(c.tree.slot_count()),
          allocation(c.tree.slot_count());
      for (PoolId leaf : c.tree.layout().leaves) {
        for (int d = 0; d < kNumDims; ++d) {
          if (rng() % 4 != 0) demand[leaf.value()].at(d) = Uniform(rng, 0, 150) * kScale[d];
          if (rng() % 3 == 0) slack[leaf.value()].at(d) = Uniform(rng, 0, 50) * kScale[d];
          allocation[leaf.value()].at(d) = Uniform(rng, 0, demand[leaf.value()].at(d));
        }
      }
      Resources unused;
      for (int d = 0; d < kNumDims; ++d) unused.at(d) = Uniform(rng, 0, 20) * kScale[d];
      const EntitlementInput input{demand, allocation, slack, c.capacity, unused};
      const Entitlements& e = calc.Compute(c.tree, input);
      ASSERT_NO_FATAL_FAILURE(CheckProperties(c, demand, allocation, unused, e))
          << Dump(c, demand, e);
      // Deterministic: a fresh calculator gives the very same numbers.
      Entitlements again = ComputeEntitlements(c.tree, input);
      ASSERT_EQ(again.entitlement, e.entitlement);
      ASSERT_EQ(again.slack_entitlement, e.slack_entitlement);
    }
  }
}

}  // namespace
}  // namespace paceline::resmgr
