// Admission: order, classes, the head-of-line rule, throttling and reasons. A 100-cpu cluster
// unless a test says otherwise.
#include "resmgr/admission.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "resmgr/rm_harness.h"

namespace paceline::resmgr {
namespace {

using testing::Cores;
using testing::Cpu;
using testing::CpuMem;
using ::testing::ElementsAre;
using testing::G;
using testing::GangBuilder;
using ::testing::IsEmpty;
using testing::RmHarness;
using ::testing::SizeIs;
using testing::Spec;

TEST(AdmissionTest, PriorityFirstThenArrivalOrder) {
  RmHarness h;
  PoolId a = h.Pool("/a");
  h.Add(G(1, a, 40));
  h.Add(G(2, a, 40).Priority(5));
  h.Add(G(3, a, 40));
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(2, 1));
  EXPECT_EQ(h.Reason(3).code, WaitCode::kEntitlement);
  EXPECT_EQ(h.Why(3),
            "cpu: pool /a holds 80 of regular work and the gang asks 40, above its entitlement "
            "100");
}

TEST(AdmissionTest, GangIsAdmittedWholeOrNotAtAll) {
  RmHarness h;
  PoolId a = h.Pool("/a");
  h.Add(G(1, a, 20));
  h.Add(GangBuilder(2, a).Tasks(3, Cpu(30)));  // 90 > the 80 left
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(1));
  EXPECT_EQ(h.Stats(a).allocation, Cpu(20));
  ASSERT_TRUE(h.rm().Release(h.Tasks(1)[0]).ok());
  r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(2));
  EXPECT_EQ(h.Stats(a).allocation, Cpu(90));
}

TEST(AdmissionTest, NonPreemptibleWorkOnlyWithinTheReservation) {
  RmHarness h;
  PoolId a = h.Pool("/a", Spec().Cpu(30));
  h.Add(G(1, a, 20).NonPreemptible());
  h.Add(G(2, a, 20).NonPreemptible());  // 40 > reservation 30
  h.Add(G(3, a, 50));                   // preemptible: within the entitlement
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(1, 3));
  EXPECT_EQ(h.Reason(2).code, WaitCode::kReservation);
  EXPECT_EQ(h.Why(2),
            "cpu: pool /a holds 20 of non-preemptible work and the gang asks 20, above its "
            "reservation (non-preemptible work runs only within it) 30");
  EXPECT_EQ(h.Stats(a).by_class.non_preemptible, Cpu(20));
  EXPECT_EQ(h.Stats(a).by_class.preemptible, Cpu(50));
}

// The head-of-line rule: a blocked gang holds up its own lane only.
TEST(AdmissionTest, BlockedHeadHoldsUpItsOwnLaneOnly) {
  RmHarness h;
  PoolId a = h.Pool("/a", Spec().Cpu(30));
  h.Add(G(1, a, 30));                   // preemptible, admitted
  h.Add(G(2, a, 80));                   // preemptible head: 110 > 100
  h.Add(G(3, a, 10));                   // preemptible, would fit, but waits behind 2
  h.Add(G(4, a, 10).NonPreemptible());  // other lane: admitted
  h.Add(G(5, a, 10).Controller());      // other lane: admitted
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(1, 4, 5));
  EXPECT_EQ(h.Reason(2).code, WaitCode::kEntitlement);
  EXPECT_EQ(h.Reason(3).code, WaitCode::kBlockedBehind);
  EXPECT_EQ(h.Reason(3).other, GangId(2));
  EXPECT_THAT(h.Why(3), ::testing::StartsWith("waits behind gang 2, which is earlier"));
  // Once the head fits, the lane moves in order.
  ASSERT_TRUE(h.rm().Release(h.Tasks(1)[0]).ok());
  r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(2));
  EXPECT_EQ(h.Reason(3).code, WaitCode::kEntitlement);
}

TEST(AdmissionTest, HigherPriorityGangOfAnotherLaneIsNotBlocked) {
  RmHarness h;
  PoolId a = h.Pool("/a", Spec().Cpu(10));
  EXPECT_EQ(h.rm().Enqueue(G(9, a, 20).NonPreemptible(), h.now()).code(),
            absl::StatusCode::kFailedPrecondition);
  h.Add(G(2, a, 10).NonPreemptible().Priority(9));
  h.Add(G(3, a, 5).NonPreemptible().Priority(9));  // reservation full: blocked
  h.Add(G(4, a, 90).Priority(1));                  // preemptible lane: admitted
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(2, 4));
  EXPECT_EQ(h.Reason(3).code, WaitCode::kReservation);
}

// The one cross-lane rule: a head waiting for the entitlement holds back lower-priority
// preemptible gangs of other lanes (it would preempt them), never non-preemptible ones.
TEST(AdmissionTest, HeadWaitingForEntitlementHoldsBackLowerPriorityPreemptibleWork) {
  RmHarness h;
  PoolId a = h.Pool("/a", Spec().Cpu(40, 50));
  h.Add(GangBuilder(1, a).Tasks(3, Cpu(10)).NonPreemptible());
  ASSERT_THAT(h.Cycle().admitted, SizeIs(1));
  h.Add(G(2, a, 30).Priority(5));               // needs 30 of the 20 free; nothing to preempt
  h.Add(G(3, a, 10).NonPreemptible());          // another lane, not preemptible: admitted
  h.Add(G(4, a, 10).Controller());              // another lane, preemptible, lower: held back
  h.Add(G(5, a, 10).Controller().Priority(5));  // equal priority: not held back
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(5, 3));
  EXPECT_EQ(h.Reason(2).code, WaitCode::kEntitlement);
  EXPECT_EQ(h.Reason(4).code, WaitCode::kHeldBack);
  EXPECT_EQ(h.Reason(4).other, GangId(2));
  EXPECT_THAT(h.Why(4), ::testing::StartsWith("waits behind higher-priority gang 2 of pool /a"));
}

TEST(AdmissionTest, ControllerTasksStayWithinControllerLimit) {
  RmHarness h;
  PoolId a = h.Pool("/a", Spec().Cpu(40).ControllerLimit(25));  // 10 cpus of controllers
  h.Add(G(1, a, 8).Controller());
  h.Add(G(2, a, 4).Controller());
  h.Add(G(3, a, 4));
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(1, 3));
  EXPECT_EQ(h.Reason(2).code, WaitCode::kControllerLimit);
  EXPECT_EQ(h.Why(2),
            "cpu: pool /a holds 8 of controller tasks and the gang asks 4, above its "
            "controller_limit 10");
  EXPECT_EQ(h.Stats(a).by_class.controller, Cpu(8));
}

TEST(AdmissionTest, RevocableWorkRunsOnSlack) {
  RmHarness h;
  PoolId a = h.Pool("/a");
  PoolId b = h.Pool("/b");
  h.Add(G(1, a, 60));
  CycleResult r = h.Cycle();
  ASSERT_THAT(RmHarness::AdmittedIds(r), ElementsAre(1));
  // Slack: 100 - 60 unallocated.
  h.Add(G(2, b, 30).Revocable());
  h.Add(G(3, b, 20).Revocable());
  r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(2));
  EXPECT_EQ(h.Stats(b).slack_entitlement, Cpu(40));
  EXPECT_EQ(h.Reason(3).code, WaitCode::kSlack);
  EXPECT_EQ(h.Stats(b).by_class.revocable, Cpu(30));
  EXPECT_EQ(h.Stats(b).allocation, Cpu(0));  // revocable is tracked apart
  // Allocated-but-unused capacity is slack too.
  h.set_allocated_unused(Cpu(20));
  r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(3));
  EXPECT_EQ(h.Stats(b).slack_entitlement, Cpu(50));
}

TEST(AdmissionTest, RegularDemandClaimsItsShareOfSlackBeforeItIsAdmitted) {
  RmHarness h;
  PoolId a = h.Pool("/a");
  PoolId b = h.Pool("/b");
  h.Add(G(1, b, 50).Revocable());
  h.Add(G(2, a, 60));
  CycleResult r = h.Cycle();
  // /a's 60 of regular demand is entitled, so only 40 is slack, already in this cycle.
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(2));
  EXPECT_EQ(h.Reason(1).code, WaitCode::kSlack);
  EXPECT_EQ(h.Reason(1).bound, Cores(40));
}

TEST(AdmissionTest, RevocableMemoryBoundedBySlackLimit) {
  RmHarness h(CpuMem(100, 100));
  PoolId a = h.Pool("/a", Spec().MemGi(20).SlackLimit(50));  // 10Gi of revocable memory
  EXPECT_EQ(h.rm().Enqueue(GangBuilder(1, a).Tasks(1, CpuMem(1, 12)).Revocable(), h.now()).code(),
            absl::StatusCode::kFailedPrecondition);
  h.Add(GangBuilder(2, a).Tasks(1, CpuMem(1, 8)).Revocable());
  h.Add(GangBuilder(3, a).Tasks(1, CpuMem(1, 8)).Revocable());
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(2));
  EXPECT_EQ(h.Reason(3).code, WaitCode::kSlack);
  EXPECT_EQ(h.Reason(3).dim, Dim::kMemory);
}

TEST(AdmissionTest, MaxRunningInstancesThrottlesAJobWithoutBlockingOthers) {
  RmHarness h;
  PoolId a = h.Pool("/a");
  for (uint32_t i = 0; i < 3; ++i) h.Add(GangBuilder(10 + i, a).Job(7, i).MaxRunning(2));
  h.Add(G(20, a, 1));
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(10, 11, 20));
  EXPECT_EQ(h.Reason(12).code, WaitCode::kThrottled);
  EXPECT_EQ(h.Why(12),
            "job 7 holds 2 admitted instance(s) and the gang adds 1, above "
            "max_running_instances 2");
  ASSERT_TRUE(h.rm().Release(h.Tasks(10)[0]).ok());
  r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(12));
}

TEST(AdmissionTest, GangsThatCanNeverFitAreRefusedAtEnqueue) {
  RmHarness h;
  PoolId a = h.Pool("/a", Spec().Cpu(10, 20));
  absl::Status s = h.rm().Enqueue(G(1, a, 30), h.now());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "gang 1: cpu: the gang asks 30, above the limit 20 of pool /a; it can never be "
            "admitted (update the pool or the job)");
  s = h.rm().Enqueue(GangBuilder(2, a).Tasks(3, Cpu(1)).MaxRunning(2), h.now());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("max_running_instances 2"));
}

TEST(AdmissionTest, GangThatNoLongerFitsAfterAnUpdateDoesNotBlock) {
  RmHarness h;
  PoolId a = h.Pool("/a", Spec().Cpu(0, 50));
  h.Add(G(1, a, 30));
  h.Add(G(2, a, 10));
  ASSERT_TRUE(h.rm().UpdatePool("/a", Spec().Cpu(0, 20), false).ok());
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(2));
  EXPECT_EQ(h.Reason(1).code, WaitCode::kNeverFits);
  EXPECT_EQ(h.Reason(1).cap, CapKind::kLimit);
}

TEST(AdmissionTest, ReasonsCoverGangsTheScanNeverReached) {
  RmHarness h;
  PoolId a = h.Pool("/a");
  h.Add(G(1, a, 100));
  h.Add(G(2, a, 10));
  for (uint64_t id = 3; id < 200; ++id) h.Add(G(id, a, 1));
  EXPECT_EQ(h.Reason(150).code, WaitCode::kNotEvaluated);
  CycleResult r = h.Cycle();
  EXPECT_THAT(RmHarness::AdmittedIds(r), ElementsAre(1));
  EXPECT_EQ(h.Reason(2).code, WaitCode::kEntitlement);
  EXPECT_EQ(h.Reason(199).code, WaitCode::kBlockedBehind);
  EXPECT_EQ(h.Reason(199).other, GangId(2));
  absl::StatusOr<std::vector<QueuedGangView>> q = h.rm().Queue(a);
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->size(), 198u);
  EXPECT_EQ((*q)[0].gang, GangId(2));
  EXPECT_EQ((*q)[0].position, 1u);
  EXPECT_EQ((*q)[197].position, 198u);
  EXPECT_EQ((*q)[197].reason.code, WaitCode::kBlockedBehind);
  h.Add(G(500, a, 1));
  EXPECT_EQ(h.Reason(500).code, WaitCode::kNotEvaluated);
}

TEST(AdmissionTest, PoolAboveItsEntitlementAdmitsNothing) {
  RmHarness h;
  PoolId a = h.Pool("/a");
  h.Add(G(1, a, 80));
  ASSERT_THAT(RmHarness::AdmittedIds(h.Cycle()), ElementsAre(1));
  h.set_capacity(Cpu(50));  // hosts lost
  h.Add(G(2, a, 1));
  CycleResult r = h.Cycle();
  EXPECT_THAT(r.admitted, IsEmpty());
  EXPECT_EQ(h.Reason(2).code, WaitCode::kPoolOverEntitlement);
  EXPECT_EQ(h.Why(2),
            "cpu: pool /a holds 80, above its entitlement 50; nothing new is admitted until the "
            "excess is reclaimed");
}

TEST(AdmissionQueueTest, OrdersByPriorityThenSequenceAndCountsLanes) {
  AdmissionQueue q;
  q.Push({0, 1, 10, 2});
  q.Push({5, 2, 11, 0});
  q.Push({0, 3, 12, 2});
  q.Push({-1, 4, 13, 4});
  std::vector<uint32_t> slots;
  for (const QueueEntry& e : q) slots.push_back(e.slot);
  EXPECT_THAT(slots, ElementsAre(11, 10, 12, 13));
  EXPECT_EQ(q.lane_count(2), 2u);
  EXPECT_TRUE(q.Erase({0, 1, 10, 2}));
  EXPECT_FALSE(q.Erase({0, 1, 10, 2}));
  EXPECT_EQ(q.lane_count(2), 1u);
  EXPECT_EQ(q.size(), 3u);
}

}  // namespace
}  // namespace paceline::resmgr
