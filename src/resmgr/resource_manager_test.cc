// The ResourceManager facade: its API contract (errors), pool lifecycle with work, and the
// views the CLI and the web UI use (stats, queues, gangs).
#include "resmgr/resource_manager.h"

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
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::kGi;
using testing::RmHarness;
using ::testing::SizeIs;
using testing::Spec;

TEST(ResourceManagerTest, EnqueueRefusesMalformedRequests) {
  RmHarness h;
  PoolId a = h.Pool("/a");
  PoolId parent = h.Pool("/p");
  h.Pool("/p/leaf");
  ResourceManager& rm = h.rm();
  h.Add(G(1, a, 1));

  absl::Status s = rm.Enqueue(G(1, a, 1).Job(9), h.now());
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(s.message(), "gang 1 is already known");
  EXPECT_EQ(rm.Enqueue(GangBuilder(2, a).Tasks(0, Cpu(1)), h.now()).message(),
            "gang 2 has no tasks");
  EXPECT_EQ(rm.Enqueue(G(3, PoolId(999), 1), h.now()).code(), absl::StatusCode::kNotFound);
  s = rm.Enqueue(G(4, parent, 1), h.now());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "gang 4: pool /p has child pools; jobs run only in leaf pools");
  s = rm.Enqueue(G(5, a, 1).Job(1), h.now());  // task 1/0 is gang 1's
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(s.message(), "gang 5: task 1/0 is already queued or holding resources in gang 1");
  EXPECT_EQ(rm.Enqueue(GangBuilder(6, a).Tasks(1, Resources::Of(-1, 0)), h.now()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(rm.Enqueue(G(7, a, 1).Priority(kMaxPriority + 1), h.now()).code(),
            absl::StatusCode::kInvalidArgument);
  GangRequest twice = G(8, a, 1);
  twice.tasks.push_back(twice.tasks[0]);
  EXPECT_THAT(rm.Enqueue(twice, h.now()).message(), HasSubstr("appears twice"));
}

TEST(ResourceManagerTest, TaskCallsFollowTheGangLifecycle) {
  RmHarness h;
  PoolId a = h.Pool("/a");
  h.Add(GangBuilder(1, a).Tasks(2, Cpu(10)));
  ResourceManager& rm = h.rm();
  const TaskId t0{JobId(1), 0}, t1{JobId(1), 1};
  EXPECT_EQ(rm.StateOf(GangId(1)), GangState::kQueued);
  EXPECT_EQ(rm.MarkRunning(t0, h.now()).code(), absl::StatusCode::kFailedPrecondition);
  absl::Status s = rm.Release(t0);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "task 1/0 is queued (gang 1) and holds nothing; use Cancel to withdraw the gang");
  ASSERT_THAT(h.Cycle().admitted, SizeIs(1));
  EXPECT_TRUE(rm.MarkRunning(t0, h.now()).ok());
  EXPECT_TRUE(rm.MarkRunning(t0, h.now()).ok());  // idempotent
  EXPECT_EQ(h.Stats(a).allocation, Cpu(20));
  EXPECT_TRUE(rm.Release(t0).ok());
  EXPECT_EQ(h.Stats(a).allocation, Cpu(10));
  EXPECT_EQ(rm.Release(t0).code(), absl::StatusCode::kNotFound);
  absl::StatusOr<GangView> v = rm.DescribeGang(GangId(1));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->state, GangState::kAdmitted);
  EXPECT_EQ(rm.StateOf(GangId(1)), GangState::kAdmitted);
  EXPECT_EQ(v->live_tasks, 1u);
  EXPECT_TRUE(rm.Release(t1).ok());
  EXPECT_EQ(rm.DescribeGang(GangId(1)).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rm.StateOf(GangId(1)), std::nullopt);
  EXPECT_EQ(h.Stats(a).admitted_gangs, 0u);
  EXPECT_EQ(rm.MarkRunning(TaskId{JobId(77), 0}, h.now()).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rm.Cancel(GangId(77)).code(), absl::StatusCode::kNotFound);
}

TEST(ResourceManagerTest, CancelWithdrawsQueuedGangsAndReleasesAdmittedOnes) {
  RmHarness h;
  PoolId a = h.Pool("/a");
  h.Add(G(1, a, 60));
  h.Add(G(2, a, 60));
  ASSERT_THAT(h.Cycle().admitted, SizeIs(1));
  EXPECT_EQ(h.Stats(a).queued, Cpu(60));
  ASSERT_TRUE(h.rm().Cancel(GangId(2)).ok());
  EXPECT_EQ(h.Stats(a).queued, Cpu(0));
  EXPECT_EQ(h.Stats(a).queued_gangs, 0u);
  ASSERT_TRUE(h.rm().Cancel(GangId(1)).ok());
  EXPECT_EQ(h.Stats(a).allocation, Cpu(0));
  EXPECT_EQ(h.rm().total_allocation(), Allocation());
  // The same gang id and tasks may come back once the gang is gone.
  h.Add(G(1, a, 60));
  EXPECT_THAT(h.Cycle().admitted, SizeIs(1));
}

TEST(ResourceManagerTest, AdoptRecordsRunningWorkWithoutQueueing) {
  RmHarness h;
  PoolId a = h.Pool("/a");
  ResourceManager& rm = h.rm();
  ASSERT_TRUE(rm.Adopt(G(1, a, 30), h.now()).ok());
  EXPECT_EQ(h.Stats(a).allocation, Cpu(30));
  EXPECT_EQ(h.Stats(a).queued_gangs, 0u);
  absl::StatusOr<GangView> v = rm.DescribeGang(GangId(1));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->state, GangState::kAdmitted);
  // Adopted work is running: it is released like any other, and adopting twice is refused.
  EXPECT_EQ(rm.Adopt(G(1, a, 30), h.now()).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_TRUE(rm.Release(TaskId{JobId(1), 0}).ok());
  EXPECT_EQ(h.Stats(a).allocation, Cpu(0));
}

TEST(ResourceManagerTest, BeginPreemptionCountsTheGangAsBeingFreed) {
  RmHarness h;
  PoolId a = h.Pool("/a", Spec().Cpu(100));
  ResourceManager& rm = h.rm();
  h.Add(G(1, a, 30).Revocable());
  h.Add(G(2, a, 10).NonPreemptible());
  ASSERT_THAT(h.Cycle().admitted, SizeIs(2));
  EXPECT_EQ(rm.BeginPreemption(GangId(2)).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(rm.BeginPreemption(GangId(9)).code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(rm.BeginPreemption(GangId(1)).ok());
  EXPECT_TRUE(rm.BeginPreemption(GangId(1)).ok()) << "idempotent";
  EXPECT_EQ(rm.total_allocation().preempting_revocable, Cpu(30));
  absl::StatusOr<GangView> v = rm.DescribeGang(GangId(1));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->state, GangState::kPreempting);
  // Regular demand claims the whole cluster: the pool's revocable work is above its slack, but
  // the gang already being freed covers that, so nothing else is preempted for it.
  h.Add(G(3, a, 100));
  EXPECT_EQ(rm.BeginPreemption(GangId(3)).code(), absl::StatusCode::kFailedPrecondition)
      << "queued";
  for (int i = 0; i < 4; ++i) EXPECT_THAT(h.Cycle().preempted, IsEmpty()) << i;
  EXPECT_TRUE(rm.Release(TaskId{JobId(1), 0}).ok());
  EXPECT_EQ(rm.total_allocation().revocable, Cpu(0));
}

TEST(ResourceManagerTest, OnlyLeavesHoldWorkAndOnlyEmptyLeavesAreDeleted) {
  RmHarness h;
  PoolId a = h.Pool("/a");
  h.Add(G(1, a, 1));
  absl::StatusOr<PoolId> child = h.rm().CreatePool("/a/x", PoolSpec());
  EXPECT_EQ(child.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(child.status().message(),
            "cannot create pool /a/x: pool /a holds work (1 queued gang(s), 0 admitted) and jobs "
            "run only in leaf pools");
  absl::Status s = h.rm().DeletePool("/a");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "pool /a still holds work (1 queued gang(s), 0 admitted); cancel or release it first");
  ASSERT_THAT(h.Cycle().admitted, SizeIs(1));
  EXPECT_EQ(h.rm().DeletePool("/a").code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(h.rm().Release(TaskId{JobId(1), 0}).ok());
  EXPECT_TRUE(h.rm().CreatePool("/a/x", PoolSpec()).ok());  // empty now: may get children
  EXPECT_TRUE(h.rm().DeletePool("/a/x").ok());
  EXPECT_TRUE(h.rm().DeletePool("/a").ok());
  EXPECT_EQ(h.rm().DeletePool("/a").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(h.rm().CreatePool("bad", PoolSpec()).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Cycles keep working after deletions.
  EXPECT_THAT(h.Cycle().pools, SizeIs(h.rm().tree().slot_count()));
}

TEST(ResourceManagerTest, ForcedUpdateReportsWhatItBroke) {
  RmHarness h;
  h.Pool("/a", Spec().Cpu(40, 80));
  h.Pool("/a/x", Spec().Cpu(30, 80));
  absl::StatusOr<std::vector<std::string>> broken =
      h.rm().UpdatePool("/a", Spec().Cpu(40, 50), /*force=*/true);
  ASSERT_TRUE(broken.ok());
  EXPECT_THAT(*broken, ElementsAre("pool /a: cpu limit 50 is below the cpu limit 80 of child "
                                   "/a/x"));
}

// The data behind `paceline pool list` / `pool get`.
TEST(ResourceManagerTest, StatsPerPoolAndDimension) {
  RmHarness h(CpuMem(100, 100));
  PoolId ads = h.Pool("/ads", Spec().Cpu(60, 90, 2).MemGi(50));
  PoolId t = h.Pool("/ads/training", Spec().Cpu(40, 90).MemGi(30));
  PoolId s = h.Pool("/ads/serving", Spec().Cpu(20, 90).MemGi(20));
  PoolId web = h.Pool("/web", Spec().Cpu(40).MemGi(50));
  h.Add(GangBuilder(1, t).Tasks(4, CpuMem(10, 5)));
  h.Add(GangBuilder(2, s).Tasks(1, CpuMem(10, 5)).NonPreemptible());
  h.Add(GangBuilder(3, web).Tasks(1, CpuMem(80, 10)));
  h.Add(GangBuilder(4, web).Tasks(1, CpuMem(1, 1)).Revocable());
  CycleResult r = h.Cycle();
  ASSERT_EQ(r.pools.size(), h.rm().tree().slot_count());

  const PoolStats& st = r.pools[t.value()];
  EXPECT_EQ(st.reservation, CpuMem(40, 30));
  EXPECT_EQ(st.limit, Resources::Of(Cores(90), kUnlimited, kUnlimited, kUnlimited));
  EXPECT_EQ(st.demand, CpuMem(40, 20));
  EXPECT_EQ(st.allocation, CpuMem(40, 20));
  EXPECT_EQ(st.entitlement.cpu_milli(), Cores(40));

  // An inner pool covers its subtree.
  const PoolStats& sa = r.pools[ads.value()];
  EXPECT_EQ(sa.share[static_cast<int>(Dim::kCpu)], 2);
  EXPECT_EQ(sa.limit.cpu_milli(), Cores(90));
  EXPECT_EQ(sa.demand, CpuMem(50, 25));
  EXPECT_EQ(sa.allocation, CpuMem(50, 25));
  EXPECT_EQ(sa.by_class.non_preemptible, CpuMem(10, 5));
  EXPECT_EQ(sa.admitted_gangs, 2u);
  EXPECT_EQ(sa.entitlement.cpu_milli(), Cores(50));  // its demand, below its reservation
  EXPECT_EQ(r.pools[s.value()].entitlement.cpu_milli(), Cores(10));

  // /web: 80 cpus asked; its reservation 40 plus the 10 /ads leaves. Memory nobody asks for
  // is spare, shared by share. The revocable gang is tracked apart.
  const PoolStats& sw = r.pools[web.value()];
  EXPECT_EQ(sw.demand, CpuMem(80, 10));
  EXPECT_EQ(sw.entitlement, Resources::Of(Cores(50), 85 * kGi / 2));
  EXPECT_EQ(sa.entitlement.memory_bytes(), 115 * kGi / 2);
  EXPECT_EQ(sw.queued, CpuMem(80, 10));
  EXPECT_EQ(sw.queued_gangs, 2u);  // the regular one and the revocable one
  // Regular work claims every cpu (100 of demand entitled), so the revocable gang waits.
  EXPECT_EQ(sw.slack_demand, CpuMem(1, 1));
  EXPECT_EQ(sw.slack_entitlement, CpuMem(0, 1));
  EXPECT_EQ(sw.by_class.revocable, Resources());

  // The root reports the capacity as its reservation and limit.
  EXPECT_EQ(r.pools[kRootPool.value()].reservation, CpuMem(100, 100));
  EXPECT_EQ(r.pools[kRootPool.value()].allocation, CpuMem(50, 25));
  // Stats between cycles: live allocation, last entitlement.
  ASSERT_TRUE(h.rm().Release(TaskId{JobId(1), 0}).ok());
  EXPECT_EQ(h.Stats(t).allocation, CpuMem(30, 15));
  EXPECT_EQ(h.Stats(t).entitlement.cpu_milli(), Cores(40));
  EXPECT_EQ(h.rm().Stats(PoolId(999)).status().code(), absl::StatusCode::kNotFound);
}

TEST(ResourceManagerTest, QueueViewGivesPositionAndReasonOfEachGang) {
  RmHarness h(Cpu(60));
  PoolId a = h.Pool("/a", Spec().Cpu(10, 50));
  h.Add(G(1, a, 40));
  h.Add(G(2, a, 20).Priority(-1));
  h.Add(G(3, a, 20).Priority(3));
  h.Add(G(4, a, 45).Revocable());
  CycleResult r = h.Cycle();
  ASSERT_THAT(RmHarness::AdmittedIds(r), ElementsAre(3));
  absl::StatusOr<std::vector<QueuedGangView>> q = h.rm().Queue(a);
  ASSERT_TRUE(q.ok());
  ASSERT_THAT(*q, SizeIs(3));
  EXPECT_EQ((*q)[0].gang, GangId(1));
  EXPECT_EQ((*q)[0].position, 1u);
  EXPECT_EQ((*q)[0].reason.code, WaitCode::kEntitlement);
  EXPECT_EQ((*q)[0].why,
            "cpu: pool /a holds 20 of regular work and the gang asks 40, above its entitlement "
            "50");
  EXPECT_EQ((*q)[1].gang, GangId(2));
  EXPECT_EQ((*q)[1].position, 2u);
  EXPECT_EQ((*q)[1].priority, -1);
  EXPECT_EQ((*q)[1].reason.code, WaitCode::kBlockedBehind);
  EXPECT_EQ((*q)[2].gang, GangId(4));
  EXPECT_EQ((*q)[2].position, 3u);
  EXPECT_EQ((*q)[2].sla, SlaClass::kRevocable);
  EXPECT_EQ((*q)[2].reason.code, WaitCode::kSlack);
  EXPECT_EQ((*q)[2].why,
            "cpu: pool /a holds 0 of revocable work and the gang asks 45, above its slack "
            "entitlement 10");
  absl::StatusOr<GangView> v = h.rm().DescribeGang(GangId(4));
  ASSERT_TRUE(v.ok() && v->queued.has_value());
  EXPECT_EQ(v->queued->position, 3u);
  EXPECT_EQ(v->state, GangState::kQueued);
  EXPECT_EQ(h.rm().Queue(PoolId(999)).status().code(), absl::StatusCode::kNotFound);
}

TEST(ResourceManagerTest, DescribeWaitCoversEveryCode) {
  for (int c = 0; c <= static_cast<int>(WaitCode::kHeldBack); ++c) {
    WaitReason r;
    r.code = static_cast<WaitCode>(c);
    EXPECT_NE(DescribeWait(r, "/a", JobId(1)), "?") << c;
    EXPECT_NE(WaitCodeName(r.code), "?") << c;
  }
}

}  // namespace
}  // namespace paceline::resmgr
