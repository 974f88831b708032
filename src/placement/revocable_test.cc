// Revocable work on slack (host_state.h): the two views of a host's free capacity, the slack,
// the excess that must be reclaimed, their indexes, placement and "why pending".

#include <gtest/gtest.h>

#include "placement/engine.h"
#include "placement/test_util.h"

namespace paceline::placement {
namespace {

using testing::Engine;
using testing::HostBuilder;
using testing::kGi;
using testing::One;
using testing::Put;
using testing::ShapeBuilder;

// Host `h` (8 cores, 32Gi) fully allocated to four 2-core regular tasks of job 1.
void FillWithRegular(ClusterSnapshot& snap, uint32_t h) {
  auto regular = ShapeBuilder(1).Cpu(2000).MemGi(4).Build();
  for (uint32_t i = 0; i < 4; ++i) ASSERT_TRUE(Put(snap, h, h * 4 + i, regular).ok());
}

TEST(Revocable, FitsOnUnallocatedCapacityPlusSlack) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Cpu(8000).MemGi(32).Build()).ok());
  FillWithRegular(snap, 0);
  auto revocable = ShapeBuilder(2).Cpu(2000).MemGi(4).Revocable().Build();
  EXPECT_EQ(Put(snap, 0, 0, revocable).code(), absl::StatusCode::kResourceExhausted)
      << "no slack known: every core is allocated";

  // The regular tasks use 0.5 core and 1Gi each: 6 cores and 12Gi are idle.
  ASSERT_TRUE(snap.SetHostSlack(HostId(0), Resources::Of(6000, 12 * kGi, 0, 5000)).ok());
  const HostState& h = *snap.host(HostId(0));
  EXPECT_EQ(h.slack(), Resources::Of(6000, 12 * kGi)) << "no slack in GPUs";
  EXPECT_EQ(h.FreeFor(true), Resources::Of(6000, 28 * kGi, 100 * kGi));
  EXPECT_EQ(h.FreeFor(false), Resources::Of(0, 16 * kGi, 100 * kGi));
  for (uint32_t i = 0; i < 3; ++i) ASSERT_TRUE(Put(snap, 0, i, revocable).ok()) << i;
  EXPECT_EQ(Put(snap, 0, 3, revocable).code(), absl::StatusCode::kResourceExhausted)
      << "the slack is used up";
  EXPECT_EQ(Put(snap, 0, 9, ShapeBuilder(3).Cpu(1000).Build()).code(),
            absl::StatusCode::kResourceExhausted)
      << "regular work does not run on slack";
  EXPECT_EQ(h.regular_allocated(), Resources::Of(8000, 16 * kGi));
  EXPECT_EQ(h.revocable_allocated(), Resources::Of(6000, 12 * kGi));
  EXPECT_TRUE(h.RevocableExcess().IsZero());
  EXPECT_TRUE(snap.Validate().ok()) << snap.Validate();

  // The regular tasks use more: 3 cores of slack are left for 6 cores of revocable work.
  ASSERT_TRUE(snap.SetHostSlack(HostId(0), Resources::Of(3000, 12 * kGi)).ok());
  EXPECT_EQ(h.RevocableExcess(), Resources::Of(3000, 0));
  EXPECT_TRUE(snap.Validate().ok()) << "an excess is reclaimed by the caller, not invalid";
  ASSERT_TRUE(snap.Release(TaskId{JobId(2), 0}).ok());
  ASSERT_TRUE(snap.Release(TaskId{JobId(2), 1}).ok());
  EXPECT_TRUE(h.RevocableExcess().IsZero());
}

TEST(Revocable, RegularWorkSeesCapacityMinusRegularAllocations) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Cpu(8000).MemGi(32).Build()).ok());
  const HostState& h = *snap.host(HostId(0));
  ASSERT_TRUE(Put(snap, 0, 0, ShapeBuilder(2).Cpu(6000).Revocable().Build()).ok())
      << "revocable work fits in unallocated capacity without any slack";
  auto regular = ShapeBuilder(1).Cpu(4000).Build();
  ASSERT_TRUE(Put(snap, 0, 0, regular).ok()) << "revocable allocations take nothing from it";
  EXPECT_EQ(h.allocated().cpu_milli(), 10000);
  EXPECT_EQ(h.RevocableExcess(), Resources::Of(2000, 0)) << "2 of 6 revocable cores must go";
  EXPECT_TRUE(snap.Validate().ok()) << snap.Validate();
  ASSERT_TRUE(Put(snap, 0, 1, regular).ok());
  EXPECT_EQ(Put(snap, 0, 2, ShapeBuilder(1).Cpu(1).Build()).code(),
            absl::StatusCode::kResourceExhausted)
      << "regular work is never over-committed";
  ASSERT_TRUE(snap.Release(TaskId{JobId(2), 0}).ok());
  EXPECT_TRUE(h.RevocableExcess().IsZero());
}

TEST(Revocable, SlackCountsUpToRegularAllocationsAndNeverForDevicesOrPorts) {
  ClusterSnapshot snap;
  ASSERT_TRUE(
      snap.AddHost(HostBuilder(0).Cpu(8000).MemGi(32).Gpus(2).Ports(31000, 31000).Build()).ok());
  const HostState& h = *snap.host(HostId(0));
  ASSERT_TRUE(snap.SetHostSlack(HostId(0), Resources::Of(8000, 0)).ok());
  EXPECT_TRUE(h.effective_slack().IsZero()) << "nothing regular holds: nothing idle";
  ASSERT_TRUE(Put(snap, 0, 0, ShapeBuilder(1).Cpu(2000).Build()).ok());
  EXPECT_EQ(h.effective_slack(), Resources::Of(2000, 0));
  EXPECT_EQ(h.FreeFor(true).cpu_milli(), 8000);
  auto gpu_task = ShapeBuilder(2).Cpu(1000).Gpu(1000).Ports(1).Revocable().Build();
  ASSERT_TRUE(Put(snap, 0, 0, gpu_task, {GpuShare{0, 1000}}, {31000}).ok());
  auto two_gpus = ShapeBuilder(3).Cpu(1000).Gpu(2000).Build();
  EXPECT_EQ(h.FreeFor(false).gpu_milli(), 1000) << "a revocable task's device is its own";
  EXPECT_FALSE(Put(snap, 0, 0, two_gpus, {GpuShare{0, 1000}, GpuShare{1, 1000}}).ok());
  EXPECT_EQ(h.free_ports(), 0u);
}

TEST(Revocable, AdoptRecordsRevocableTasksWhoseSlackIsNotKnownYet) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Cpu(8000).MemGi(32).Build()).ok());
  FillWithRegular(snap, 0);
  Assignment a;
  a.task = TaskId{JobId(2), 0};
  a.host = HostId(0);
  a.shape = ShapeBuilder(2).Cpu(2000).Revocable().Build();
  EXPECT_FALSE(snap.Commit(a).ok());
  ASSERT_TRUE(snap.Adopt(a).ok()) << "found running after a restart: recorded";
  EXPECT_EQ(snap.host(HostId(0))->RevocableExcess(), Resources::Of(2000, 0));
  a.task = TaskId{JobId(3), 0};
  a.shape = ShapeBuilder(3).Cpu(2000).Build();
  EXPECT_EQ(snap.Adopt(a).code(), absl::StatusCode::kResourceExhausted)
      << "regular work is checked as ever";
  EXPECT_TRUE(snap.Validate().ok()) << snap.Validate();
}

TEST(Revocable, EachKindOfWorkHasItsOwnFreeIndex) {
  ClusterSnapshot snap;
  for (uint32_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(snap.AddHost(HostBuilder(i).Cpu(8000).MemGi(32).Build()).ok());
    FillWithRegular(snap, i);
  }
  const int two_cores = FreeIndex::Level(2000);
  EXPECT_EQ(&snap.free_index(true), &snap.free_index(false))
      << "no revocable work and no slack anywhere: one index serves both";
  EXPECT_EQ(snap.free_index(false).CountAtLeast(Dim::kCpu, two_cores), 0u);
  EXPECT_EQ(snap.free_index(true).CountAtLeast(Dim::kCpu, two_cores), 0u);
  ASSERT_TRUE(snap.SetHostSlack(HostId(1), Resources::Of(4000, 8 * kGi)).ok());
  EXPECT_EQ(snap.free_index(false).CountAtLeast(Dim::kCpu, two_cores), 0u);
  EXPECT_EQ(snap.free_index(true).CountAtLeast(Dim::kCpu, two_cores), 1u);
  ASSERT_TRUE(snap.SetHostSlack(HostId(1), Resources()).ok());
  EXPECT_EQ(snap.free_index(true).CountAtLeast(Dim::kCpu, two_cores), 0u) << "slack gone";
  EXPECT_TRUE(snap.Validate().ok()) << snap.Validate();
}

TEST(Revocable, PlacedOnAllocatedButIdleCapacityAndExplainedWhenItIsNot) {
  ClusterSnapshot snap;
  for (uint32_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(snap.AddHost(HostBuilder(i).Cpu(8000).MemGi(32).Build()).ok());
    FillWithRegular(snap, i);
  }
  ASSERT_TRUE(snap.SetHostSlack(HostId(1), Resources::Of(4000, 8 * kGi)).ok());
  auto revocable = ShapeBuilder(2).Cpu(2000).MemGi(1).Revocable().Build();
  auto regular = ShapeBuilder(3).Cpu(1000).MemGi(1).Build();
  auto engine = Engine();
  std::vector<PlacementRequest> rs = {One(0, revocable), One(1, revocable), One(2, revocable),
                                      One(0, regular)};
  Plan plan = engine->Place(rs, snap);
  ASSERT_EQ(plan.assignments.size(), 2u);
  for (const Assignment& a : plan.assignments) EXPECT_EQ(a.host, HostId(1));
  ASSERT_EQ(plan.pending.size(), 2u);
  EXPECT_EQ(plan.pending[0].explanation.OneLine(),
            "0/3 hosts: 3 insufficient cpu slack (asked 2, best 0)");
  EXPECT_EQ(plan.pending[1].explanation.OneLine(),
            "0/3 hosts: 3 insufficient cpu (asked 1, best 0)");
  ASSERT_EQ(ApplyPlan(plan, snap).committed, 2u);
  EXPECT_TRUE(snap.host(HostId(1))->RevocableExcess().IsZero());
  EXPECT_TRUE(snap.Validate().ok()) << snap.Validate();
}

TEST(Revocable, ARememberedFailureIsRetriedWhenSlackGrows) {
  ClusterSnapshot snap;
  for (uint32_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(snap.AddHost(HostBuilder(i).Cpu(8000).MemGi(32).Build()).ok());
    FillWithRegular(snap, i);
  }
  auto revocable = ShapeBuilder(2).Cpu(2000).MemGi(1).Revocable().Build();
  auto engine = Engine();
  std::vector<PlacementRequest> rs = {One(0, revocable)};
  Plan first = engine->Place(rs, snap);
  ASSERT_EQ(first.pending.size(), 1u);
  EXPECT_EQ(first.stats.explain_scans, 1u);
  Plan second = engine->Place(rs, snap);
  ASSERT_EQ(second.pending.size(), 1u);
  EXPECT_EQ(second.stats.explain_scans, 0u) << "nothing relaxed: the failure stands";
  // Less slack relaxes nothing; more slack does.
  ASSERT_TRUE(snap.SetHostSlack(HostId(2), Resources::Of(1000, 0)).ok());
  ASSERT_TRUE(snap.SetHostSlack(HostId(2), Resources::Of(500, 0)).ok());
  ASSERT_TRUE(snap.SetHostSlack(HostId(3), Resources::Of(4000, kGi)).ok());
  Plan third = engine->Place(rs, snap);
  ASSERT_EQ(third.assignments.size(), 1u);
  EXPECT_EQ(third.assignments[0].host, HostId(3));
}

TEST(Revocable, RegularWorkAvoidsHostsWhereItWouldReclaimRevocableWork) {
  for (const std::string& profile : ProfileNames()) {
    if (profile == "random-fit") continue;  // random by design
    SCOPED_TRACE(profile);
    ClusterSnapshot snap;
    ASSERT_TRUE(snap.AddHost(HostBuilder(0).Cpu(8000).MemGi(32).Build()).ok());
    ASSERT_TRUE(snap.AddHost(HostBuilder(1).Cpu(8000).MemGi(32).Build()).ok());
    // Host 0 is the better fit for packing, but revocable work holds its free capacity.
    ASSERT_TRUE(Put(snap, 0, 0, ShapeBuilder(1).Cpu(2000).Build()).ok());
    ASSERT_TRUE(Put(snap, 0, 0, ShapeBuilder(2).Cpu(5000).Revocable().Build()).ok());
    auto regular = ShapeBuilder(3).Cpu(2000).Build();
    auto engine = Engine(profile);
    Plan plan = engine->Place(std::vector<PlacementRequest>{One(0, regular)}, snap);
    ASSERT_EQ(plan.assignments.size(), 1u);
    EXPECT_EQ(plan.assignments[0].host, HostId(1));
    ASSERT_EQ(ApplyPlan(plan, snap).committed, 1u);
    // With host 1 full, regular work takes host 0's capacity back from revocable work.
    ASSERT_TRUE(Put(snap, 1, 9, ShapeBuilder(4).Cpu(6000).Build()).ok());
    Plan next = engine->Place(std::vector<PlacementRequest>{One(1, regular)}, snap);
    ASSERT_EQ(next.assignments.size(), 1u);
    EXPECT_EQ(next.assignments[0].host, HostId(0));
    ASSERT_EQ(ApplyPlan(next, snap).committed, 1u);
    EXPECT_EQ(snap.host(HostId(0))->RevocableExcess(), Resources::Of(1000, 0));
  }
}

}  // namespace
}  // namespace paceline::placement
