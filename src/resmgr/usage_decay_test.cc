// Fair share with memory: decayed usage, the fair-share factor, and the entitlement it yields,
// with the worked example of docs/resource-manager.md ("Fair share with memory"). The cluster
// has 100 cpus; the parent /org divides among /org/a and /org/b (share 1, no reservation)
// unless a test says otherwise.
#include "resmgr/usage_decay.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "resmgr/entitlement.h"
#include "resmgr/resource_manager.h"
#include "resmgr/rm_harness.h"
#include "resmgr/test_builders.h"

namespace paceline::resmgr {
namespace {

using testing::Cores;
using testing::Cpu;
using testing::Spec;

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);
constexpr double kHour = 3600;

// A pool tree, each leaf's allocation and demand, a UsageDecay and a calculator, stepped hour
// by hour. Run(hours) holds the given allocations for that long.
class Org {
 public:
  explicit Org(std::optional<absl::Duration> half_life = absl::Hours(24),
               PoolSpec b = Spec().Build()) {
    PoolSpec org = Spec().Cpu(100);  // room for a child's reservation
    if (half_life) org.fair_share = FairShareSpec{*half_life};
    EXPECT_TRUE(tree_.Create("/org", org).ok());
    a_ = *tree_.Create("/org/a", PoolSpec());
    b_ = *tree_.Create("/org/b", b);
    alloc_.resize(tree_.slot_count());
    demand_.resize(tree_.slot_count());
    decay_.Advance(tree_, alloc_, Cpu(100), now_);
  }
  // Holds `a` and `b` cpus for `hours`, advancing once per `step`.
  void Hold(double a, double b, double hours, absl::Duration step = absl::Hours(1)) {
    alloc_[a_.value()] = Cpu(a);
    alloc_[b_.value()] = Cpu(b);
    const absl::Time end = now_ + absl::Seconds(hours * kHour);
    while (now_ < end) {
      now_ = std::min(end, now_ + step);
      decay_.Advance(tree_, alloc_, Cpu(100), now_);
    }
  }
  // Today's entitlements in cpus when both want the whole cluster.
  std::pair<double, double> Split() {
    demand_[a_.value()] = Cpu(100);
    demand_[b_.value()] = Cpu(100);
    std::vector<Resources> slack(tree_.slot_count());
    const Entitlements& e =
        calc_.Compute(tree_, {demand_, alloc_, slack, Cpu(100), Resources(), decay_.factors()});
    return {e.entitlement[a_.value()].cpu_milli() / 1000.0,
            e.entitlement[b_.value()].cpu_milli() / 1000.0};
  }
  // Both want the whole cluster and hold their entitlement, for `hours`, re-divided hourly.
  void Contend(double hours) {
    for (int h = 0; h < hours; ++h) {
      auto [a, b] = Split();
      Hold(a, b, 1);
    }
  }
  FairShareView View(PoolId id) const { return *decay_.View(tree_, id); }
  double UsageHours(PoolId id) const { return View(id).decayed_usage / kHour; }
  PoolId a() const { return a_; }
  PoolId b() const { return b_; }
  UsageDecay& decay() { return decay_; }
  PoolTree& tree() { return tree_; }

 private:
  PoolTree tree_;
  PoolId a_, b_;
  std::vector<Resources> alloc_, demand_;
  UsageDecay decay_;
  EntitlementCalculator calc_;
  absl::Time now_ = kT0;
};

TEST(UsageDecayTest, UsageIsTheExactIntegralWhateverTheCycle) {
  // Half the cluster for 8 hours, half-life 1 day: (h / ln 2)(1 − 2^(−8/24)) · 0.5.
  const double h = 24 * kHour;
  const double expected = 0.5 * h / std::numbers::ln2 * (1 - std::exp2(-8.0 / 24));
  for (absl::Duration step : {absl::Seconds(1), absl::Minutes(7), absl::Hours(8)}) {
    Org org;
    org.Hold(50, 0, 8, step);
    EXPECT_NEAR(org.View(org.a()).decayed_usage, expected, 1e-6 * expected) << step;
    EXPECT_EQ(org.View(org.b()).decayed_usage, 0) << step;
  }
  // Roughly what was held: 4 cluster-hours, a little less for the decay during the 8 hours.
  EXPECT_NEAR(expected / kHour, 3.57, 0.01);
}

TEST(UsageDecayTest, IdleUsageHalvesEveryHalfLife) {
  Org org(absl::Hours(6));
  org.Hold(100, 0, 1);
  const double u = org.View(org.a()).decayed_usage;
  org.Hold(0, 0, 6);
  EXPECT_NEAR(org.View(org.a()).decayed_usage, u / 2, 1e-9 * u);
  org.Hold(0, 0, 12);
  EXPECT_NEAR(org.View(org.a()).decayed_usage, u / 8, 1e-9 * u);
}

TEST(UsageDecayTest, FactorIsSlurmsClassicFormula) {
  Org org;
  org.Hold(30, 10, 5);  // a used three times what b used
  const FairShareView a = org.View(org.a()), b = org.View(org.b());
  EXPECT_NEAR(a.usage_fraction, 0.75, 1e-12);
  EXPECT_NEAR(b.usage_fraction, 0.25, 1e-12);
  EXPECT_DOUBLE_EQ(a.share_fraction[0], 0.5);
  EXPECT_NEAR(a.factor[0], std::exp2(-1.5), 1e-12);  // 2^(−U/S) = 2^(−0.75/0.5)
  EXPECT_NEAR(b.factor[0], std::exp2(-0.5), 1e-12);
  EXPECT_EQ(a.half_life, absl::Hours(24));
  ASSERT_EQ(org.decay().factors().size(), org.tree().slot_count());
  EXPECT_EQ(org.decay().factors()[org.a().value()][0], a.factor[0]);
}

// The worked example of docs/resource-manager.md: yesterday /org/a held the whole cluster for 8
// hours and /org/b nothing; then 16 quiet hours. Today both want everything.
TEST(UsageDecayTest, WorkedExampleYesterdaysHeavyUserYieldsToday) {
  Org org;
  org.Hold(100, 0, 8);
  org.Hold(0, 0, 16);
  EXPECT_NEAR(org.UsageHours(org.a()), 4.50, 0.01);  // 7.14 cluster-hours, decayed 16 h
  // U = 1 and 0, S = 1/2 each: F = 2^-2 = 0.25 and 1; the cluster is split 0.25 : 1.
  EXPECT_NEAR(org.View(org.a()).factor[0], 0.25, 1e-12);
  EXPECT_EQ(org.View(org.b()).factor[0], 1.0);
  EXPECT_EQ(org.Split(), std::make_pair(20.0, 80.0));

  // As b uses its larger part and a's usage decays, the split comes back towards 50 : 50. Both
  // hold what they are entitled to, re-divided every hour (the table of the docs).
  const std::vector<std::pair<int, double>> table = {{1, 27.3},  {2, 32.7},  {3, 36.5}, {6, 42.8},
                                                     {12, 47.2}, {24, 49.2}, {48, 49.9}};
  int hour = 0;
  for (const auto& [at, a_cpus] : table) {
    org.Contend(at - hour);
    hour = at;
    auto [a, b] = org.Split();
    EXPECT_NEAR(a, a_cpus, 0.05) << "hour " << at;
    EXPECT_EQ(a + b, 100.0) << "hour " << at;
  }
  EXPECT_NEAR(org.UsageHours(org.a()), 13.6, 0.05);
  EXPECT_NEAR(org.UsageHours(org.b()), 13.5, 0.05);
}

TEST(UsageDecayTest, TheEffectFadesWithTheHalfLife) {
  // b has held 10 cpus all along; a held 90 for a day, then stopped. The longer ago a's day
  // was, the more of today's split it gets back.
  std::vector<double> a_part;
  for (int days_ago : {0, 1, 2, 4}) {
    Org org;
    org.Hold(90, 10, 24);
    org.Hold(0, 10, 24.0 * days_ago);
    a_part.push_back(org.Split().first);
  }
  EXPECT_THAT(a_part, ::testing::ElementsAre(::testing::Lt(a_part[1]), ::testing::Lt(a_part[2]),
                                             ::testing::Lt(a_part[3]), ::testing::Gt(40.0)));
  // Used 90 % yesterday: U = 0.9 and 0.1, F = 2^-1.8 and 2^-0.2: a gets 0.287 / 1.158 of it.
  EXPECT_NEAR(a_part[0], 24.8, 0.1);
}

TEST(UsageDecayTest, WithoutThePolicyNothingChanges) {
  Org org(std::nullopt);
  org.Hold(100, 0, 8);
  EXPECT_TRUE(org.decay().factors().empty());
  EXPECT_FALSE(org.decay().View(org.tree(), org.a()).has_value());
  EXPECT_EQ(org.Split(), std::make_pair(50.0, 50.0));
}

TEST(UsageDecayTest, ReservationsAreNeverWeighed) {
  // b reserves 40: it gets them first even though it used everything; only the 60 above the
  // reservations are divided by share × factor.
  Org org(absl::Hours(24), Spec().Cpu(40));
  org.Hold(0, 100, 8);
  EXPECT_NEAR(org.View(org.b()).factor[0], 0.25, 1e-12);
  auto [a, b] = org.Split();
  EXPECT_EQ(a, 48.0);  // 60 split 1 : 0.25
  EXPECT_EQ(b, 52.0);  // 40 reserved + 12
}

TEST(UsageDecayTest, UnequalSharesAndTheFloor) {
  // b has share 3: S = 1/4 and 3/4. Alone-used a: U = 1 → F = 2^-4.
  Org org(absl::Hours(24), Spec().Cpu(0, -1, 3));
  org.Hold(100, 0, 1);
  EXPECT_NEAR(org.View(org.a()).factor[0], 1.0 / 16, 1e-12);
  // Many siblings with a tiny share each: the factor stops at the floor.
  PoolTree tree;
  PoolSpec parent;
  parent.fair_share = FairShareSpec{absl::Hours(1)};
  ASSERT_TRUE(tree.Create("/p", parent).ok());
  PoolId first;
  for (int i = 0; i < 20; ++i) {
    PoolId id = *tree.Create(absl::StrCat("/p/c", i), PoolSpec());
    if (i == 0) first = id;
  }
  std::vector<Resources> alloc(tree.slot_count());
  alloc[first.value()] = Cpu(10);
  UsageDecay decay;
  decay.Advance(tree, alloc, Cpu(100), kT0);
  decay.Advance(tree, alloc, Cpu(100), kT0 + absl::Minutes(10));
  EXPECT_EQ(decay.View(tree, first)->factor[0], kMinFairShareFactor);  // 2^-20 without it
}

TEST(UsageDecayTest, DominantShareCountsTheScarcestDimension) {
  PoolTree tree;
  PoolSpec parent;
  parent.fair_share = FairShareSpec{absl::Hours(24)};
  ASSERT_TRUE(tree.Create("/p", parent).ok());
  PoolId x = *tree.Create("/p/x", PoolSpec());
  PoolId y = *tree.Create("/p/y", PoolSpec());
  std::vector<Resources> alloc(tree.slot_count());
  alloc[x.value()] = testing::CpuMem(10, 60);  // 10 % of the cpus, 60 % of the memory
  alloc[y.value()] = testing::CpuMem(30, 6);   // 30 %, 6 %
  UsageDecay decay;
  const Resources capacity = testing::CpuMem(100, 100);
  decay.Advance(tree, alloc, capacity, kT0);
  decay.Advance(tree, alloc, capacity, kT0 + absl::Seconds(10));
  EXPECT_NEAR(decay.View(tree, x)->usage_fraction, 0.6 / 0.9, 1e-9);
}

TEST(UsageDecayTest, ClockJumpBackAccruesNothing) {
  PoolTree tree;
  PoolSpec parent;
  parent.fair_share = FairShareSpec{absl::Hours(1)};
  ASSERT_TRUE(tree.Create("/p", parent).ok());
  PoolId x = *tree.Create("/p/x", PoolSpec());
  std::vector<Resources> alloc(tree.slot_count());
  alloc[x.value()] = Cpu(100);
  UsageDecay decay;
  decay.Advance(tree, alloc, Cpu(100), kT0);
  decay.Advance(tree, alloc, Cpu(100), kT0 + absl::Minutes(10));
  const double u = decay.View(tree, x)->decayed_usage;
  decay.Advance(tree, alloc, Cpu(100), kT0 - absl::Hours(5));
  EXPECT_EQ(decay.View(tree, x)->decayed_usage, u);
  decay.Advance(tree, alloc, Cpu(100), kT0 + absl::Minutes(11));  // one minute after the last
  EXPECT_NEAR(decay.View(tree, x)->decayed_usage, u * std::exp2(-1.0 / 60) + 60 * 0.99, 1);
}

TEST(UsageDecayTest, SeedAndItsErrors) {
  Org org(absl::Hours(10));
  UsageDecay fresh;
  // Before the first Advance a seed waits for it, and is decayed from as_of to then.
  ASSERT_TRUE(fresh.Seed(org.tree(), org.a(), 1000, kT0 - absl::Hours(10)).ok());
  std::vector<Resources> alloc(org.tree().slot_count());
  fresh.Advance(org.tree(), alloc, Cpu(100), kT0);
  EXPECT_NEAR(fresh.View(org.tree(), org.a())->decayed_usage, 500, 1e-9);
  EXPECT_NEAR(fresh.View(org.tree(), org.a())->factor[0], 0.25, 1e-12);
  // After it, decayed to the last Advance.
  ASSERT_TRUE(fresh.Seed(org.tree(), org.b(), 1000, kT0 - absl::Hours(20)).ok());
  EXPECT_NEAR(fresh.View(org.tree(), org.b())->decayed_usage, 250, 1e-9);

  EXPECT_EQ(fresh.Seed(org.tree(), org.a(), -1, kT0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(fresh.Seed(org.tree(), org.a(), NAN, kT0).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(fresh.Seed(org.tree(), PoolId(99), 1, kT0).code(), absl::StatusCode::kNotFound);
  const absl::Status s = fresh.Seed(org.tree(), *org.tree().Find("/org"), 1, kT0);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "pool /org: its parent has no fair_share policy, so it keeps no usage");
}

TEST(UsageDecayTest, DroppingThePolicyForgetsTheUsage) {
  Org org;
  org.Hold(100, 0, 2);
  ASSERT_GT(org.View(org.a()).decayed_usage, 0);
  ASSERT_TRUE(org.tree().Update("/org", PoolSpec(), false).ok());
  org.Hold(100, 0, 1);
  EXPECT_TRUE(org.decay().factors().empty());
  PoolSpec again;
  again.fair_share = FairShareSpec{absl::Hours(24)};
  ASSERT_TRUE(org.tree().Update("/org", again, false).ok());
  org.Hold(0, 50, 1);
  EXPECT_EQ(org.View(org.a()).decayed_usage, 0);
  EXPECT_EQ(org.View(org.a()).factor[0], 1.0);
}

// Through the facade: RunCycle keeps the usage and the views show it.
TEST(UsageDecayTest, ResourceManagerWeighsTheEntitlement) {
  testing::RmHarness h;
  h.Pool("/org", Spec().FairShare(absl::Hours(24)));
  const PoolId a = h.Pool("/org/a");
  const PoolId b = h.Pool("/org/b");
  ResourceManager& rm = h.rm();
  // a alone: one 100-cpu gang for 8 hours.
  h.Add(testing::G(1, a, 100));
  h.StartAll(h.Cycle());
  h.Advance(absl::Hours(8));
  h.Cycle();
  ASSERT_TRUE(rm.Release(TaskId{JobId(1), 0}).ok());
  h.Advance(absl::Hours(16));
  h.Cycle();
  const std::optional<FairShareView> va = rm.fair_share().View(rm.tree(), a);
  ASSERT_TRUE(va.has_value());
  EXPECT_NEAR(va->decayed_usage / kHour, 4.50, 0.01);
  EXPECT_NEAR(va->factor[0], 0.25, 1e-12);
  // Both want everything now: 20 / 80.
  h.Add(testing::G(2, a, 100));
  h.Add(testing::G(3, b, 100));
  h.Cycle();
  EXPECT_EQ(h.Stats(a).entitlement.cpu_milli(), Cores(20));
  EXPECT_EQ(h.Stats(b).entitlement.cpu_milli(), Cores(80));
  EXPECT_FALSE(rm.fair_share().View(rm.tree(), *rm.tree().Find("/org")).has_value());
}

}  // namespace
}  // namespace paceline::resmgr
