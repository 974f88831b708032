// Preemption: inter-pool reclamation with hysteresis, victim order, the per-cycle cap,
// intra-pool preemption and earmarks. A 100-cpu cluster unless a test says otherwise.
#include "resmgr/preemption.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "resmgr/rm_harness.h"

namespace paceline::resmgr {
namespace {

using testing::Cpu;
using ::testing::ElementsAre;
using testing::G;
using testing::GangBuilder;
using ::testing::IsEmpty;
using testing::RmHarness;
using ::testing::SizeIs;
using testing::Spec;

ResourceManagerConfig WithHysteresis(int cycles) {
  ResourceManagerConfig c;
  c.preemption.hysteresis_cycles = cycles;
  return c;
}

// /a (reservation 50) runs ten 10-cpu gangs, ids 1..10, started in that order.
void FillA(RmHarness& h, PoolId a) {
  for (uint64_t id = 1; id <= 10; ++id) h.Add(G(id, a, 10));
  CycleResult r = h.Cycle();
  ASSERT_THAT(r.admitted, SizeIs(10));
  h.StartAll(r);
}

TEST(PreemptionTest, PoolAboveItsEntitlementGivesBackTheExcessAfterHysteresis) {
  RmHarness h(Cpu(100), WithHysteresis(2));
  PoolId a = h.Pool("/a", Spec().Cpu(50));
  PoolId b = h.Pool("/b", Spec().Cpu(50));
  FillA(h, a);
  h.Add(G(100, b, 50));
  CycleResult r = h.Cycle();  // first cycle over: nothing yet
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(100));
  EXPECT_THAT(r.preempted, IsEmpty());
  EXPECT_EQ(h.Stats(a).entitlement, Cpu(50));
  EXPECT_EQ(h.Stats(a).over_cycles, 1u);
  r = h.Cycle();  // second cycle over: the excess 50 goes, most recently started first
  EXPECT_THAT(RmHarness::PreemptedIds(r), ElementsAre(10, 9, 8, 7, 6));
  const PreemptionDecision& d = r.preempted[0];
  EXPECT_EQ(d.cause, PreemptionCause::kPoolOverEntitlement);
  EXPECT_EQ(d.pool, a);
  ASSERT_TRUE(d.has_for_pool);
  EXPECT_EQ(d.for_pool, b);
  EXPECT_THAT(d.tasks, ElementsAre(TaskId{JobId(10), 0}));
  EXPECT_EQ(d.resources, Cpu(10));
  EXPECT_EQ(d.reason,
            "pool /a holds cpu 100 of regular work, above its entitlement 50 (for 2 cycles); "
            "reclaimed for pool /b, whose entitlement grew with its demand");
  // Victims still being killed are not chosen again, and nobody else is taken for them.
  r = h.Cycle();
  EXPECT_THAT(r.preempted, IsEmpty());
  h.ReleasePreempted(h.Cycle());  // nothing new
  for (uint64_t id = 6; id <= 10; ++id) ASSERT_TRUE(h.rm().Release(h.Tasks(id)[0]).ok());
  r = h.Cycle();
  EXPECT_THAT(r.preempted, IsEmpty());
  EXPECT_EQ(h.Stats(a).allocation, Cpu(50));
  EXPECT_EQ(h.Stats(a).over_cycles, 0u);
}

TEST(PreemptionTest, VictimOrderNotRunningThenLowestPriorityThenMostRecentlyStarted) {
  RmHarness h(Cpu(100), WithHysteresis(1));
  PoolId a = h.Pool("/a");
  PoolId b = h.Pool("/b", Spec().Cpu(100));
  h.Add(G(1, a, 10).Priority(1));
  h.Add(G(2, a, 10));
  h.Add(G(3, a, 10));
  h.Add(G(4, a, 10).Priority(5));
  ASSERT_THAT(h.Cycle().admitted, SizeIs(4));
  h.Start(1);
  h.Start(2);
  h.Start(3);  // 4 never starts
  h.Add(G(100, b, 100));
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::PreemptedIds(r), ElementsAre(4, 3, 2, 1));
}

TEST(PreemptionTest, OnlyGangsHoldingAnOverAllocatedDimensionAreTaken) {
  RmHarness h(Resources::Of(100'000, 0, 0, 4'000), WithHysteresis(1));
  PoolId a = h.Pool("/a");
  PoolId b = h.Pool("/b", Spec().Dim(Dim::kGpu, 4'000, kUnlimited, 1));
  h.Add(GangBuilder(1, a).Tasks(1, Resources::Of(10'000, 0, 0, 2'000)));
  h.Add(GangBuilder(2, a).Tasks(1, Resources::Of(10'000, 0, 0, 0)));  // cpu only
  ASSERT_THAT(h.Cycle().admitted, SizeIs(2));
  h.Start(1);
  h.Start(2);  // started last: first in victim order, but holds no gpu
  h.Add(GangBuilder(100, b).Tasks(1, Resources::Of(1'000, 0, 0, 4'000)));
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::PreemptedIds(r), ElementsAre(1));
}

TEST(PreemptionTest, NonPreemptibleWorkIsNeverPreempted) {
  RmHarness h(Cpu(100), WithHysteresis(1));
  PoolId a = h.Pool("/a", Spec().Cpu(40));
  PoolId b = h.Pool("/b", Spec().Cpu(60));
  for (uint64_t id = 1; id <= 3; ++id) h.Add(G(id, a, 10).NonPreemptible());
  for (uint64_t id = 4; id <= 9; ++id) h.Add(G(id, a, 10));
  h.StartAll(h.Cycle());
  h.Add(G(100, b, 60));
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::PreemptedIds(r), ElementsAre(9, 8, 7, 6, 5));
  h.ReleasePreempted(r);
  // Capacity shrinks below the reservations (20 for /a 40 and /b 60): the last preemptible
  // gangs go, the non-preemptible ones stay even above the entitlement.
  h.set_capacity(Cpu(20));
  r = h.Cycle();
  EXPECT_THAT(RmHarness::PreemptedIds(r), ElementsAre(4, 100));
  h.ReleasePreempted(r);
  r = h.Cycle();
  EXPECT_THAT(r.preempted, IsEmpty());
  EXPECT_EQ(h.Stats(a).by_class.non_preemptible, Cpu(30));
  EXPECT_EQ(h.Stats(a).entitlement, Cpu(20));
}

TEST(PreemptionTest, PerCycleCapSpreadsPreemptionOverCycles) {
  ResourceManagerConfig config = WithHysteresis(1);
  config.preemption.max_per_cycle = Resources::Of(20'000, kUnlimited, kUnlimited, kUnlimited);
  RmHarness h(Cpu(100), config);
  PoolId a = h.Pool("/a", Spec().Cpu(50));
  PoolId b = h.Pool("/b", Spec().Cpu(50));
  FillA(h, a);
  h.Add(G(100, b, 50));
  EXPECT_THAT(RmHarness::PreemptedIds(h.Cycle()), ElementsAre(10, 9));
  EXPECT_THAT(RmHarness::PreemptedIds(h.Cycle()), ElementsAre(8, 7));
  EXPECT_THAT(RmHarness::PreemptedIds(h.Cycle()), ElementsAre(6));
  EXPECT_THAT(h.Cycle().preempted, IsEmpty());
}

TEST(PreemptionTest, FirstVictimOfACycleIsAllowedEvenAboveTheCap) {
  ResourceManagerConfig config = WithHysteresis(1);
  config.preemption.max_per_cycle = Cpu(5);
  RmHarness h(Cpu(100), config);
  PoolId a = h.Pool("/a", Spec().Cpu(50));
  PoolId b = h.Pool("/b", Spec().Cpu(50));
  FillA(h, a);
  h.Add(G(100, b, 20));
  EXPECT_THAT(RmHarness::PreemptedIds(h.Cycle()), ElementsAre(10));
  EXPECT_THAT(RmHarness::PreemptedIds(h.Cycle()), ElementsAre(9));
}

TEST(PreemptionTest, HysteresisRestartsWhenTheExcessGoesAway) {
  RmHarness h(Cpu(100), WithHysteresis(3));
  PoolId a = h.Pool("/a", Spec().Cpu(50));
  PoolId b = h.Pool("/b", Spec().Cpu(50));
  FillA(h, a);
  h.Add(G(100, b, 50));
  EXPECT_THAT(h.Cycle().preempted, IsEmpty());  // over 1
  EXPECT_THAT(h.Cycle().preempted, IsEmpty());  // over 2
  ASSERT_TRUE(h.rm().Cancel(GangId(100)).ok());
  EXPECT_THAT(h.Cycle().preempted, IsEmpty());  // not over: counter restarts
  EXPECT_EQ(h.Stats(a).over_cycles, 0u);
  h.Add(G(101, b, 50));
  EXPECT_THAT(h.Cycle().preempted, IsEmpty());  // over 1
  EXPECT_THAT(h.Cycle().preempted, IsEmpty());  // over 2
  EXPECT_THAT(h.Cycle().preempted, SizeIs(5));  // over 3
}

TEST(PreemptionTest, RevocableWorkIsReclaimedWhenSlackShrinks) {
  RmHarness h(Cpu(100), WithHysteresis(1));
  PoolId a = h.Pool("/a");
  PoolId b = h.Pool("/b");
  for (uint64_t id = 1; id <= 5; ++id) h.Add(G(id, b, 10).Revocable());
  h.StartAll(h.Cycle());
  h.Add(G(100, a, 80));
  // The new regular demand claims 80 at once: slack is 20 in this very cycle.
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(100));
  EXPECT_EQ(h.Stats(b).slack_entitlement, Cpu(20));
  EXPECT_THAT(RmHarness::PreemptedIds(r), ElementsAre(5, 4, 3));
  EXPECT_EQ(r.preempted[0].cause, PreemptionCause::kPoolOverSlack);
  EXPECT_THAT(r.preempted[0].reason,
              ::testing::EndsWith("reclaimed because the cluster's slack shrank (regular work "
                                  "took capacity back)"));
}

// /a (limit 50) runs five 10-cpu priority-0 gangs, ids 1..5, started in that order.
void FillLimitedA(RmHarness& h, PoolId a) {
  for (uint64_t id = 1; id <= 5; ++id) h.Add(G(id, a, 10));
  CycleResult r = h.Cycle();
  ASSERT_THAT(r.admitted, SizeIs(5));
  h.StartAll(r);
}

TEST(PreemptionTest, HigherPriorityGangPreemptsLowerPriorityWorkOfItsPool) {
  RmHarness h;
  PoolId a = h.Pool("/a", Spec().Cpu(10, 50));
  FillLimitedA(h, a);
  h.Add(G(20, a, 20).Priority(10));
  CycleResult r = h.Cycle();
  EXPECT_THAT(r.admitted, IsEmpty());
  EXPECT_THAT(RmHarness::PreemptedIds(r), ElementsAre(5, 4));
  EXPECT_EQ(r.preempted[0].cause, PreemptionCause::kHigherPriorityGang);
  ASSERT_TRUE(r.preempted[0].has_for_gang);
  EXPECT_EQ(r.preempted[0].for_gang, GangId(20));
  EXPECT_EQ(r.preempted[0].reason,
            "preempted for gang 20 (job 20, priority 10, cpu=20 memory=0 disk=0 gpu=0) of pool "
            "/a, which cannot be admitted while lower-priority work holds the pool's "
            "entitlement");
  EXPECT_EQ(h.Reason(20).code, WaitCode::kAwaitingPreemption);
  // Until the victims are gone nothing else is preempted for it.
  EXPECT_THAT(h.Cycle().preempted, IsEmpty());
  h.ReleasePreempted(r);
  // The victims come back to the queue (lower priority: they cannot preempt anything).
  h.Add(G(104, a, 10));
  h.Add(G(105, a, 10));
  r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(20));
  EXPECT_THAT(r.preempted, IsEmpty());
  EXPECT_EQ(h.Reason(104).code, WaitCode::kEntitlement);
}

TEST(PreemptionTest, EqualPriorityDoesNotPreempt) {
  RmHarness h;
  PoolId a = h.Pool("/a", Spec().Cpu(10, 50));
  FillLimitedA(h, a);
  h.Add(G(20, a, 20));
  CycleResult r = h.Cycle();
  EXPECT_THAT(r.preempted, IsEmpty());
  EXPECT_EQ(h.Reason(20).code, WaitCode::kEntitlement);
}

TEST(PreemptionTest, IntraPoolPreemptionCanBeTurnedOff) {
  ResourceManagerConfig config;
  config.preemption.intra_pool = false;
  RmHarness h(Cpu(100), config);
  PoolId a = h.Pool("/a", Spec().Cpu(10, 50));
  FillLimitedA(h, a);
  h.Add(G(20, a, 20).Priority(10));
  EXPECT_THAT(h.Cycle().preempted, IsEmpty());
}

TEST(PreemptionTest, FreedCapacityIsEarmarkedForTheGangThatCausedIt) {
  RmHarness h;
  PoolId a = h.Pool("/a", Spec().Cpu(10, 50));
  FillLimitedA(h, a);
  h.Add(G(20, a, 20).Priority(10));
  CycleResult r = h.Cycle();
  ASSERT_THAT(RmHarness::PreemptedIds(r), ElementsAre(5, 4));
  // A lower-priority gang of another lane that would fit into what is freed.
  h.Add(G(30, a, 10).NonPreemptible());
  ASSERT_TRUE(h.rm().Release(h.Tasks(5)[0]).ok());  // half of the room is free
  r = h.Cycle();
  EXPECT_THAT(r.admitted, IsEmpty());
  EXPECT_EQ(h.Reason(20).code, WaitCode::kAwaitingPreemption);
  EXPECT_EQ(h.Reason(30).code, WaitCode::kEarmarked);
  EXPECT_EQ(h.Reason(30).other, GangId(20));
  EXPECT_EQ(h.Why(30),
            "cpu: 10 of the free capacity of pool /a is earmarked for higher-priority gang 20 "
            "(work was preempted for it)");
  ASSERT_TRUE(h.rm().Release(h.Tasks(4)[0]).ok());
  r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(20));
  EXPECT_EQ(h.Reason(30).code, WaitCode::kEntitlement);
}

TEST(PreemptionTest, EarmarkIsDroppedWhenItsGangGivesUp) {
  RmHarness h;
  PoolId a = h.Pool("/a", Spec().Cpu(10, 50));
  FillLimitedA(h, a);
  h.Add(G(20, a, 20).Priority(10));
  ASSERT_THAT(h.Cycle().preempted, SizeIs(2));
  h.Add(G(30, a, 10).NonPreemptible());
  ASSERT_TRUE(h.rm().Release(h.Tasks(5)[0]).ok());
  ASSERT_TRUE(h.rm().Cancel(GangId(20)).ok());
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(30));
}

TEST(PreemptionTest, EarmarkTimesOut) {
  ResourceManagerConfig config;
  config.preemption.earmark_timeout = absl::Seconds(10);
  RmHarness h(Cpu(100), config);
  PoolId a = h.Pool("/a", Spec().Cpu(10, 50));
  FillLimitedA(h, a);
  h.Add(G(20, a, 20).Priority(10));
  ASSERT_THAT(h.Cycle().preempted, SizeIs(2));
  h.Add(G(30, a, 10).NonPreemptible());
  ASSERT_TRUE(h.rm().Release(h.Tasks(5)[0]).ok());
  EXPECT_THAT(h.Cycle().admitted, IsEmpty());
  h.Advance(absl::Seconds(10));
  EXPECT_THAT(RmHarness::AdmittedIds(h.Cycle()), ElementsAre(30));
}

}  // namespace
}  // namespace paceline::resmgr
