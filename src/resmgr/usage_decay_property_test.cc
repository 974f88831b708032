// Properties of fair share with memory over random trees, policies and usage histories: every
// factor is in (0, 1] (1 where no policy applies), a child's factor and entitlement never grow
// with its own usage, and the entitlement's guarantees hold with the weighed shares (never
// above a limit, children within their parent, reservations honoured, work conserved, siblings
// levelled by share × factor). The seed is fixed and printed with every failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "resmgr/entitlement.h"
#include "resmgr/test_builders.h"
#include "resmgr/usage_decay.h"

namespace paceline::resmgr {
namespace {

constexpr uint64_t kSeed = 0x5eed'f5'0042;
constexpr int kTrees = 2500;
constexpr int kStepsPerTree = 6;
constexpr int64_t kScale[kNumDims] = {1'000, int64_t{1} << 20, int64_t{1} << 20, 1'000};

int64_t Uniform(std::mt19937_64& rng, int64_t lo, int64_t hi) {  // [lo, hi]
  return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
}

struct Case {
  PoolTree tree;
  Resources capacity;
};

// A feasible random tree of elastic pools (depth <= 3), about half its parents with the policy.
Case MakeCase(std::mt19937_64& rng) {
  Case c;
  for (int d = 0; d < kNumDims; ++d) c.capacity.at(d) = Uniform(rng, 1, 200) * kScale[d];
  std::vector<Resources> budget(1, c.capacity);
  std::vector<PoolId> ids(1, kRootPool);
  const int n = static_cast<int>(Uniform(rng, 2, 25));
  for (int i = 0; i < n; ++i) {
    const size_t pi = rng() % ids.size();
    const PoolId parent = ids[pi];
    if (c.tree.depth(parent) >= 3) continue;
    PoolSpec spec;
    for (int d = 0; d < kNumDims; ++d) {
      const int64_t res = rng() % 2 == 0 ? 0 : Uniform(rng, 0, budget[pi].at(d) / 3);
      budget[pi].at(d) -= res;
      int64_t limit = c.tree.spec(parent).dims[d].limit;
      if (rng() % 4 == 0) limit = std::min(limit, res + Uniform(rng, 0, 150) * kScale[d]);
      spec.dims[d] = DimSpec{res, limit, 0.5 * static_cast<double>(Uniform(rng, 1, 6))};
    }
    absl::StatusOr<PoolId> id = c.tree.Create(
        absl::StrCat(c.tree.path(parent) == "/" ? "" : c.tree.path(parent), "/p", i), spec);
    EXPECT_TRUE(id.ok()) << id.status();
    if (!id.ok()) continue;
    ids.push_back(*id);
    budget.push_back(spec.Reservation());
  }
  for (size_t i = 1; i < ids.size(); ++i) {
    if (c.tree.IsLeaf(ids[i]) || rng() % 2 == 0) continue;
    PoolSpec spec = c.tree.spec(ids[i]);
    spec.fair_share = FairShareSpec{absl::Minutes(Uniform(rng, 1, 60 * 24 * 7))};
    EXPECT_TRUE(c.tree.Update(c.tree.path(ids[i]), spec, false).ok());
  }
  return c;
}

bool Governed(const PoolTree& tree, PoolId id) {
  return id != kRootPool && tree.spec(tree.parent(id)).fair_share.has_value();
}

Resources SubtreeDemand(const PoolTree& tree, PoolId id, const std::vector<Resources>& leaf) {
  Resources sum;
  if (tree.IsLeaf(id)) {
    sum = leaf[id.value()];
  } else {
    for (PoolId c : tree.children(id)) sum += SubtreeDemand(tree, c, leaf);
  }
  return Min(sum, tree.spec(id).Limit());
}

void CheckFactors(const Case& c, const UsageDecay& decay) {
  std::span<const UsageDecay::Factors> f = decay.factors();
  if (f.empty()) {  // no policy anywhere: every factor is 1
    for (PoolId id : c.tree.layout().id) ASSERT_FALSE(Governed(c.tree, id)) << c.tree.path(id);
    return;
  }
  ASSERT_EQ(f.size(), c.tree.slot_count());
  for (PoolId id : c.tree.layout().id) {
    SCOPED_TRACE(c.tree.path(id));
    std::optional<FairShareView> v = decay.View(c.tree, id);
    ASSERT_EQ(v.has_value(), Governed(c.tree, id));
    for (int d = 0; d < kNumDims; ++d) {
      if (!v.has_value()) {
        ASSERT_EQ(f[id.value()][d], 1.0);
        continue;
      }
      ASSERT_GE(f[id.value()][d], kMinFairShareFactor);
      ASSERT_LE(f[id.value()][d], 1.0);
      ASSERT_EQ(f[id.value()][d], v->factor[d]);
      ASSERT_GE(v->usage_fraction, 0);
      ASSERT_LE(v->usage_fraction, 1);
    }
  }
}

void CheckEntitlements(const Case& c, const UsageDecay& decay, const std::vector<Resources>& demand,
                       const Entitlements& e) {
  const PoolTree& tree = c.tree;
  ASSERT_EQ(e.entitlement[0], c.capacity);
  for (PoolId id : tree.layout().id) {
    SCOPED_TRACE(tree.path(id));
    const Resources ent = e.entitlement[id.value()];
    const PoolSpec& spec = tree.spec(id);
    if (id != kRootPool) {
      ASSERT_TRUE(ent.FitsIn(spec.Limit())) << ent.ToString();
      const Resources floor = Min(SubtreeDemand(tree, id, demand), spec.Reservation());
      ASSERT_TRUE(floor.FitsIn(ent))
          << "reservation not honoured: " << ent.ToString() << " < " << floor.ToString();
    }
    const std::vector<PoolId>& kids = tree.children(id);
    if (kids.empty()) continue;
    Resources sum;
    for (PoolId k : kids) sum += e.entitlement[k.value()];
    ASSERT_TRUE(sum.FitsIn(ent)) << sum.ToString() << " > " << ent.ToString();
    for (int d = 0; d < kNumDims; ++d) {
      SCOPED_TRACE(DimName(static_cast<Dim>(d)));
      if (sum.at(d) < ent.at(d)) {
        for (PoolId k : kids) {
          ASSERT_EQ(e.entitlement[k.value()].at(d), tree.spec(k).dims[d].limit) << tree.path(k);
        }
      }
      // Siblings whose demand is not met stand at one level of share × factor above their
      // reservations (within the rounding of one unit each).
      for (PoolId a : kids) {
        for (PoolId b : kids) {
          if (a >= b) continue;
          const int64_t ea = e.entitlement[a.value()].at(d), eb = e.entitlement[b.value()].at(d);
          const int64_t da = e.demand[a.value()].at(d), db = e.demand[b.value()].at(d);
          if (ea >= da || eb >= db) continue;
          auto factor = [&](PoolId p) {
            return decay.factors().empty() ? 1.0 : decay.factors()[p.value()][d];
          };
          const double wa = tree.spec(a).dims[d].share * factor(a);
          const double wb = tree.spec(b).dims[d].share * factor(b);
          const int64_t ra = std::min(da, tree.spec(a).dims[d].reservation);
          const int64_t rb = std::min(db, tree.spec(b).dims[d].reservation);
          ASSERT_NEAR((ea - ra) / wa, (eb - rb) / wb, 1 / wa + 1 / wb + 1e-6)
              << tree.path(a) << " vs " << tree.path(b);
        }
      }
    }
  }
}

TEST(UsageDecayPropertyTest, RandomTreesAndUsageHistories) {
  SCOPED_TRACE(::testing::Message() << "seed=" << kSeed);
  std::mt19937_64 rng(kSeed);
  EntitlementCalculator calc;
  int monotone_checks = 0;
  for (int t = 0; t < kTrees; ++t) {
    SCOPED_TRACE(::testing::Message() << "tree " << t);
    Case c = MakeCase(rng);
    const size_t slots = c.tree.slot_count();
    UsageDecay decay;
    absl::Time now = absl::FromUnixSeconds(1'700'000'000);
    std::vector<Resources> alloc(slots), demand(slots), slack(slots);
    decay.Advance(c.tree, alloc, c.capacity, now);
    for (int step = 0; step < kStepsPerTree; ++step) {
      SCOPED_TRACE(::testing::Message() << "step " << step);
      for (PoolId leaf : c.tree.layout().leaves) {
        for (int d = 0; d < kNumDims; ++d) {
          demand[leaf.value()].at(d) = rng() % 4 == 0 ? 0 : Uniform(rng, 0, 150) * kScale[d];
          alloc[leaf.value()].at(d) = Uniform(rng, 0, demand[leaf.value()].at(d));
        }
      }
      now += absl::Seconds(Uniform(rng, 1, 2 * 86'400));
      decay.Advance(c.tree, alloc, c.capacity, now);
      ASSERT_NO_FATAL_FAILURE(CheckFactors(c, decay));
      const EntitlementInput input{demand, alloc, slack, c.capacity, Resources(), decay.factors()};
      const Entitlements e = calc.Compute(c.tree, input);
      ASSERT_NO_FATAL_FAILURE(CheckEntitlements(c, decay, demand, e));
      ASSERT_EQ(ComputeEntitlements(c.tree, input).entitlement, e.entitlement) << "deterministic";

      // Monotone: more usage of one governed child never raises its factor or entitlement.
      std::vector<PoolId> governed;
      for (PoolId id : c.tree.layout().id) {
        if (Governed(c.tree, id)) governed.push_back(id);
      }
      if (governed.empty()) continue;
      const PoolId x = governed[rng() % governed.size()];
      const FairShareView before = *decay.View(c.tree, x);
      const double more = before.decayed_usage * (1 + Uniform(rng, 1, 10)) + Uniform(rng, 1, 5000);
      ASSERT_TRUE(decay.Seed(c.tree, x, more, now).ok());
      decay.Advance(c.tree, alloc, c.capacity, now);  // no time passes: the factors only
      const FairShareView after = *decay.View(c.tree, x);
      const Entitlements e2 =
          calc.Compute(c.tree, {demand, alloc, slack, c.capacity, Resources(), decay.factors()});
      const size_t siblings = c.tree.children(c.tree.parent(x)).size();
      for (int d = 0; d < kNumDims; ++d) {
        ASSERT_LE(after.factor[d], before.factor[d]) << c.tree.path(x);
        ASSERT_LE(e2.entitlement[x.value()].at(d),
                  e.entitlement[x.value()].at(d) + static_cast<int64_t>(siblings))
            << c.tree.path(x) << " " << DimName(static_cast<Dim>(d));
      }
      ++monotone_checks;
    }
  }
  EXPECT_GT(monotone_checks, kTrees) << "the generator must make governed pools";
}

}  // namespace
}  // namespace paceline::resmgr
