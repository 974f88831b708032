// Worked examples of entitlement with exact expected numbers (see docs/resource-manager.md).
// Unless a test says otherwise the cluster has 100 cpus; every pool has share 1 and no limit.
#include "resmgr/entitlement.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "resmgr/test_builders.h"

namespace paceline::resmgr {
namespace {

using testing::Cores;
using testing::Cpu;
using testing::CpuMem;
using testing::kGi;
using testing::Spec;

// A pool tree plus per-leaf demands; Compute() runs the calculator.
class Scenario {
 public:
  Scenario& Pool(absl::string_view path, const PoolSpec& spec) {
    auto id = tree_.Create(path, spec);
    EXPECT_TRUE(id.ok()) << id.status();
    return *this;
  }
  Scenario& Demand(absl::string_view path, const Resources& r) {
    Grow();
    demand_[Id(path).value()] = r;
    return *this;
  }
  Scenario& SlackDemand(absl::string_view path, const Resources& r) {
    Grow();
    slack_demand_[Id(path).value()] = r;
    return *this;
  }
  Scenario& Allocation(absl::string_view path, const Resources& r) {
    Grow();
    allocation_[Id(path).value()] = r;
    return *this;
  }
  Scenario& Compute(Resources capacity = Cpu(100), Resources allocated_unused = Resources()) {
    Grow();
    result_ =
        calc_.Compute(tree_, {demand_, allocation_, slack_demand_, capacity, allocated_unused});
    return *this;
  }
  int64_t CpuOf(absl::string_view path) const { return Ent(path).cpu_milli(); }
  Resources Ent(absl::string_view path) const { return result_.entitlement[Id(path).value()]; }
  Resources Slack(absl::string_view path) const {
    return result_.slack_entitlement[Id(path).value()];
  }
  Resources DemandOf(absl::string_view path) const { return result_.demand[Id(path).value()]; }
  Resources SlackCapacity() const { return result_.slack_capacity; }
  PoolTree& tree() { return tree_; }

 private:
  PoolId Id(absl::string_view path) const { return *tree_.Find(path); }
  void Grow() {
    demand_.resize(tree_.slot_count());
    allocation_.resize(tree_.slot_count());
    slack_demand_.resize(tree_.slot_count());
  }
  PoolTree tree_;
  std::vector<Resources> demand_, allocation_, slack_demand_;
  EntitlementCalculator calc_;
  Entitlements result_;
};

Scenario ThreeSiblings() {
  Scenario s;
  s.Pool("/a", Spec().Cpu(20)).Pool("/b", Spec().Cpu(20)).Pool("/c", Spec().Cpu(20));
  return s;
}

TEST(EntitlementExampleTest, ThreeEqualSiblingsAsDemandChangesOverTime) {
  Scenario s = ThreeSiblings();
  // t0: everyone below its reservation. Each gets its demand, then the spare 60 by share.
  s.Demand("/a", Cpu(10)).Demand("/b", Cpu(20)).Demand("/c", Cpu(10)).Compute();
  EXPECT_EQ(s.CpuOf("/a"), Cores(30));
  EXPECT_EQ(s.CpuOf("/b"), Cores(40));
  EXPECT_EQ(s.CpuOf("/c"), Cores(30));
  // t1: /a and /b grow. Bases 20+20+10; the rest 50 by share to unmet demand: /b needs 10 only,
  // so /a gets the other 40.
  s.Demand("/a", Cpu(60)).Demand("/b", Cpu(30)).Compute();
  EXPECT_EQ(s.CpuOf("/a"), Cores(60));
  EXPECT_EQ(s.CpuOf("/b"), Cores(30));
  EXPECT_EQ(s.CpuOf("/c"), Cores(10));
  // t2: over-subscription. /a and /b split the 50 above the bases equally.
  s.Demand("/a", Cpu(100)).Demand("/b", Cpu(100)).Compute();
  EXPECT_EQ(s.CpuOf("/a"), Cores(45));
  EXPECT_EQ(s.CpuOf("/b"), Cores(45));
  EXPECT_EQ(s.CpuOf("/c"), Cores(10));
  // t3: everyone wants everything: 20 + 40/3 each; the odd millicore goes to the first pool.
  s.Demand("/c", Cpu(100)).Compute();
  EXPECT_EQ(s.CpuOf("/a"), 33334);
  EXPECT_EQ(s.CpuOf("/b"), 33333);
  EXPECT_EQ(s.CpuOf("/c"), 33333);
  // t4: nobody wants anything: the whole cluster is spare, shared by share.
  s.Demand("/a", Cpu(0)).Demand("/b", Cpu(0)).Demand("/c", Cpu(0)).Compute();
  EXPECT_EQ(s.CpuOf("/a") + s.CpuOf("/b") + s.CpuOf("/c"), Cores(100));
  EXPECT_EQ(s.CpuOf("/a"), 33334);
}

TEST(EntitlementExampleTest, DemandBelowReservationFreesTheRestForOthers) {
  Scenario s;
  s.Pool("/a", Spec().Cpu(50)).Pool("/b", Spec().Cpu(50));
  s.Demand("/a", Cpu(10)).Demand("/b", Cpu(90)).Compute();
  EXPECT_EQ(s.CpuOf("/a"), Cores(10));
  EXPECT_EQ(s.CpuOf("/b"), Cores(90));
  // /a's demand comes back: it gets its reservation again.
  s.Demand("/a", Cpu(50)).Compute();
  EXPECT_EQ(s.CpuOf("/a"), Cores(50));
  EXPECT_EQ(s.CpuOf("/b"), Cores(50));
}

TEST(EntitlementExampleTest, LimitsCapDemandAndSpare) {
  Scenario s;
  s.Pool("/a", Spec().Cpu(20, 40)).Pool("/b", Spec().Cpu(20, 30)).Pool("/c", Spec().Cpu(20));
  // /a and /b stop at their limits; the 20 left over is spare that only /c may take.
  s.Demand("/a", Cpu(100)).Demand("/b", Cpu(100)).Demand("/c", Cpu(10)).Compute();
  EXPECT_EQ(s.DemandOf("/a"), Cpu(40));
  EXPECT_EQ(s.CpuOf("/a"), Cores(40));
  EXPECT_EQ(s.CpuOf("/b"), Cores(30));
  EXPECT_EQ(s.CpuOf("/c"), Cores(30));  // 10 demanded + 20 spare (nobody else may take it)
  // No demand at all: spare is shared by share up to the limits (/b 30, then /a and /c 35).
  s.Demand("/a", Cpu(0)).Demand("/b", Cpu(0)).Demand("/c", Cpu(0)).Compute();
  EXPECT_EQ(s.CpuOf("/a"), Cores(35));
  EXPECT_EQ(s.CpuOf("/b"), Cores(30));
  EXPECT_EQ(s.CpuOf("/c"), Cores(35));
}

TEST(EntitlementExampleTest, OverSubscriptionWithOneLimitedPool) {
  Scenario s;
  s.Pool("/a", Spec().Cpu(20, 40)).Pool("/b", Spec().Cpu(20)).Pool("/c", Spec().Cpu(20));
  s.Demand("/a", Cpu(100)).Demand("/b", Cpu(100)).Demand("/c", Cpu(10)).Compute();
  EXPECT_EQ(s.CpuOf("/a"), Cores(40));
  EXPECT_EQ(s.CpuOf("/b"), Cores(50));
  EXPECT_EQ(s.CpuOf("/c"), Cores(10));
}

TEST(EntitlementExampleTest, StaticPoolGetsItsReservationWhateverTheDemand) {
  Scenario s;
  s.Pool("/a", Spec().Cpu(20)).Pool("/b", Spec().Cpu(20)).Pool("/c", Spec().Cpu(20).Static());
  s.Demand("/a", Cpu(10)).Demand("/b", Cpu(10)).Demand("/c", Cpu(0)).Compute();
  EXPECT_EQ(s.CpuOf("/c"), Cores(20));  // no demand, still its reservation
  EXPECT_EQ(s.CpuOf("/a"), Cores(40));  // 10 + half of the spare 60
  EXPECT_EQ(s.CpuOf("/b"), Cores(40));
  s.Demand("/a", Cpu(100)).Demand("/b", Cpu(100)).Demand("/c", Cpu(80)).Compute();
  EXPECT_EQ(s.CpuOf("/c"), Cores(20));   // more demand, still its reservation
  EXPECT_EQ(s.DemandOf("/c"), Cpu(80));  // the real demand is reported
  EXPECT_EQ(s.CpuOf("/a"), Cores(40));
  EXPECT_EQ(s.CpuOf("/b"), Cores(40));
}

TEST(EntitlementExampleTest, StaticPoolInsideAnElasticParentPullsItsReservationUp) {
  Scenario s;
  s.Pool("/p", Spec().Cpu(30)).Pool("/p/s", Spec().Cpu(30).Static()).Pool("/q", Spec());
  s.Demand("/p/s", Cpu(0)).Demand("/q", Cpu(100)).Compute();
  EXPECT_EQ(s.CpuOf("/p"), Cores(30));
  EXPECT_EQ(s.CpuOf("/p/s"), Cores(30));
  EXPECT_EQ(s.CpuOf("/q"), Cores(70));
}

TEST(EntitlementExampleTest, UnequalSharesSplitTheSpareByWeight) {
  Scenario s;
  s.Pool("/a", Spec().Share(3)).Pool("/b", Spec().Share(1));
  s.Demand("/a", Cpu(100)).Demand("/b", Cpu(100)).Compute();
  EXPECT_EQ(s.CpuOf("/a"), Cores(75));
  EXPECT_EQ(s.CpuOf("/b"), Cores(25));
  // The weights apply above the reservations.
  ASSERT_TRUE(s.tree().Update("/b", Spec().Cpu(40).Share(1), false).ok());
  s.Compute();
  EXPECT_EQ(s.CpuOf("/a"), Cores(45));  // 0 + 3/4 of 60
  EXPECT_EQ(s.CpuOf("/b"), Cores(55));  // 40 + 1/4 of 60
}

TEST(EntitlementExampleTest, NestedPoolsDivideTheirParentsEntitlement) {
  Scenario s;
  s.Pool("/a", Spec().Cpu(50)).Pool("/b", Spec().Cpu(50));
  s.Pool("/a/x", Spec().Cpu(25)).Pool("/a/y", Spec().Cpu(25));
  s.Demand("/a/x", Cpu(100)).Demand("/a/y", Cpu(0)).Demand("/b", Cpu(10)).Compute();
  EXPECT_EQ(s.DemandOf("/a"), Cpu(100));
  EXPECT_EQ(s.CpuOf("/a"), Cores(90));
  EXPECT_EQ(s.CpuOf("/b"), Cores(10));
  EXPECT_EQ(s.CpuOf("/a/x"), Cores(90));
  EXPECT_EQ(s.CpuOf("/a/y"), Cores(0));
  // /a/y wants 30: it gets its reservation 25 plus half of what /a has above the bases (40)
  // capped by its remaining demand 5; /a/x gets the rest.
  s.Demand("/a/y", Cpu(30)).Compute();
  EXPECT_EQ(s.CpuOf("/a"), Cores(90));
  EXPECT_EQ(s.CpuOf("/a/x"), Cores(60));
  EXPECT_EQ(s.CpuOf("/a/y"), Cores(30));
  // /b's demand comes back: /a shrinks to its reservation, /a/x to its own.
  s.Demand("/b", Cpu(100)).Compute();
  EXPECT_EQ(s.CpuOf("/a"), Cores(50));
  EXPECT_EQ(s.CpuOf("/a/x"), Cores(25));
  EXPECT_EQ(s.CpuOf("/a/y"), Cores(25));
  EXPECT_EQ(s.CpuOf("/b"), Cores(50));
}

TEST(EntitlementExampleTest, DimensionsAreIndependent) {
  Scenario s;
  s.Pool("/a", Spec()).Pool("/b", Spec());
  s.Demand("/a", CpuMem(80, 10)).Demand("/b", CpuMem(20, 100));
  s.Compute(CpuMem(100, 64));
  EXPECT_EQ(s.Ent("/a"), CpuMem(80, 10));
  EXPECT_EQ(s.Ent("/b"), CpuMem(20, 54));
}

TEST(EntitlementExampleTest, InfeasibleReservationsAreScaledByShare) {
  Scenario s;
  s.Pool("/a", Spec().Cpu(80)).Pool("/b", Spec().Cpu(80));
  s.Demand("/a", Cpu(100)).Demand("/b", Cpu(100)).Compute();
  EXPECT_EQ(s.CpuOf("/a"), Cores(50));
  EXPECT_EQ(s.CpuOf("/b"), Cores(50));
  s.Demand("/b", Cpu(30)).Compute();  // /b below its share of the shortage
  EXPECT_EQ(s.CpuOf("/a"), Cores(70));
  EXPECT_EQ(s.CpuOf("/b"), Cores(30));
}

TEST(EntitlementExampleTest, ForcedTreeStillRespectsEveryLimitOnThePath) {
  Scenario s;
  s.Pool("/a", Spec().Cpu(10, 60)).Pool("/a/x", Spec().Cpu(10, 60));
  ASSERT_TRUE(s.tree().Update("/a", Spec().Cpu(10, 30), /*force=*/true).ok());
  s.Demand("/a/x", Cpu(100)).Compute();
  EXPECT_EQ(s.CpuOf("/a"), Cores(30));
  EXPECT_EQ(s.CpuOf("/a/x"), Cores(30));
}

TEST(EntitlementExampleTest, SlackIsSharedByShareUpToRevocableDemandAndSlackLimit) {
  Scenario s;
  s.Pool("/a", Spec().MemGi(10).SlackLimit(50)).Pool("/b", Spec().Share(3)).Pool("/c", Spec());
  s.Demand("/c", Cpu(70));  // regular demand claims 70 cpus: 30 cpus and all memory are slack
  s.SlackDemand("/a", CpuMem(20, 8)).SlackDemand("/b", CpuMem(40, 8));
  s.Compute(CpuMem(100, 100));
  EXPECT_EQ(s.SlackCapacity(), CpuMem(30, 100));
  // cpu: 30 split 1:3 -> 7.5 / 22.5. memory: /a may hold 50% of its 10Gi reservation.
  EXPECT_EQ(s.Slack("/a"), Resources::Of(Cores(7.5), 5 * kGi));
  EXPECT_EQ(s.Slack("/b"), Resources::Of(Cores(22.5), 8 * kGi));
  EXPECT_EQ(s.Slack("/"), CpuMem(30, 100));
}

TEST(EntitlementExampleTest, SlackCapacityIsWhatRegularWorkDoesNotClaimPlusWhatItLeavesUnused) {
  Scenario s;
  s.Pool("/a", Spec().Cpu(50)).Pool("/b", Spec().Cpu(50)).Pool("/r", Spec());
  s.SlackDemand("/r", Cpu(100));
  // /a is entitled to its 30 of demand even before any of it is admitted.
  s.Demand("/a", Cpu(30)).Compute();
  EXPECT_EQ(s.SlackCapacity(), Cpu(70));
  // Allocated-but-unused capacity is slack too.
  s.Allocation("/a", Cpu(30)).Compute(Cpu(100), Cpu(10));
  EXPECT_EQ(s.SlackCapacity(), Cpu(80));
  EXPECT_EQ(s.Slack("/r"), Cpu(80));
  // A pool above its entitlement claims what it holds.
  s.Demand("/b", Cpu(100)).Demand("/a", Cpu(80)).Allocation("/a", Cpu(80)).Compute();
  EXPECT_EQ(s.CpuOf("/a"), Cores(50));
  EXPECT_EQ(s.SlackCapacity(), Cpu(0));
}

TEST(EntitlementExampleTest, RootLeafGetsTheWholeCapacity) {
  Scenario s;
  s.Demand("/", Cpu(10)).Compute();
  EXPECT_EQ(s.CpuOf("/"), Cores(100));
}

}  // namespace
}  // namespace paceline::resmgr
