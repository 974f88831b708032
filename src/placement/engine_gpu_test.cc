// Scenario tests of the placement engine on GPU hosts: sharing devices, models, health, the
// learned workload and the GPU scorers of the default profile.

#include <gtest/gtest.h>

#include "placement/engine.h"
#include "placement/test_util.h"

namespace paceline::placement {
namespace {

using testing::Engine;
using testing::HostBuilder;
using testing::Instances;
using testing::kGi;
using testing::One;
using testing::Put;
using testing::ShapeBuilder;
using testing::Task;

TEST(Engine, ScoresMoreCandidatesOnceTheWorkloadHasGpuTasks) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Gpus(2).Build()).ok());
  auto e = Engine();
  e->Place(std::vector{One(0, ShapeBuilder(1).Build())}, snap);
  EXPECT_EQ(e->max_candidates(), 16u);
  e->Place(std::vector{One(0, ShapeBuilder(2).Gpu(1000).Build())}, snap);
  EXPECT_EQ(e->max_candidates(), 256u);
  auto fixed = Engine("default", 5);  // the configuration overrides both
  fixed->Place(std::vector{One(0, ShapeBuilder(2).Gpu(1000).Build())}, snap);
  EXPECT_EQ(fixed->max_candidates(), 5u);
}

TEST(Engine, AGpuTaskGoesOnlyToAHealthyDevice) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Gpus(2).Build()).ok());
  ASSERT_TRUE(snap.SetGpuHealth(HostId(0), 0, false).ok());
  ASSERT_TRUE(snap.SetGpuHealth(HostId(0), 1, false).ok());
  auto engine = Engine();
  Plan share = engine->Place(Instances(ShapeBuilder(8).Gpu(500).Build(), 1), snap);
  EXPECT_TRUE(share.assignments.empty()) << "no share of an unhealthy device";
  ASSERT_TRUE(snap.AddHost(HostBuilder(1).Gpus(1).Build()).ok());
  Plan plan = engine->Place(Instances(ShapeBuilder(7).Gpu(1000).Build(), 2), snap);
  ASSERT_EQ(plan.assignments.size(), 1u);
  EXPECT_EQ(plan.assignments[0].host, HostId(1)) << "host 0's devices are both unhealthy";
  EXPECT_EQ(plan.pending.size(), 1u);
}

TEST(Engine, ATaskOfAnyModelLeavesTheScarceModelToTheTasksThatNeedIt) {
  // 4 T4s, one in use, and 8 idle A100s. The workload asks as much T4-only as A100-only GPU,
  // so the T4s are four times as much in demand. Fragmentation sees both models alike (each
  // is the other type's waste), packing prefers the fuller T4 host; model pressure sends a
  // task of any model to the A100s. Without it, the same weights put it on a T4.
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Cpu(64000).Gpus(4, "T4").Build()).ok());
  ASSERT_TRUE(snap.AddHost(HostBuilder(1).Cpu(64000).Gpus(8, "A100").Build()).ok());
  ASSERT_TRUE(
      Put(snap, 0, 0, ShapeBuilder(9).Cpu(1000).Gpu(1000).Build(), {GpuShare{0, 1000}}).ok());
  GpuWorkload w;
  w.Add(Resources::Of(1000, kGi, 0, 1000), {"T4"});
  w.Add(Resources::Of(1000, kGi, 0, 1000), {"A100"});
  w.Add(Resources::Of(1000, kGi, 0, 1000), {});
  auto any = ShapeBuilder(2).Cpu(1000).MemGi(1).Gpu(1000).Build();
  auto host_for = [&](const std::string& profile) {
    absl::StatusOr<ProfileSpec> spec = ProfileSpecFromText(profile);
    PL_CHECK(spec.ok()) << spec.status();
    EngineConfig c;
    c.custom_profile = *spec;
    c.workload = w;
    auto engine = PlacementEngine::Create(c);
    PL_CHECK(engine.ok()) << engine.status();
    Plan plan = (*engine)->Place(Instances(any, 1), snap);
    PL_CHECK(plan.assignments.size() == 1u);
    return plan.assignments[0].host;
  };
  EXPECT_EQ(host_for("default"), HostId(1));
  EXPECT_EQ(host_for("pack=1+gpu_fragmentation=16+gpu_stranding=32"), HostId(0));
}

TEST(Engine, FractionalGpuTasksShareDevicesWithoutExceedingOneDevice) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Cpu(64000).MemGi(256).Gpus(2).Build()).ok());
  auto shape = ShapeBuilder().Gpu(400).Build();
  for (const std::string profile : {"default", "best-fit", "fgd", "gpu-packing", "random-fit"}) {
    SCOPED_TRACE(profile);
    ClusterSnapshot s = snap;
    Plan plan = Engine(profile)->Place(Instances(shape, 5), s);
    ASSERT_EQ(plan.assignments.size(), 4u);  // two 0.4 shares per device
    ASSERT_EQ(plan.pending.size(), 1u);
    // 0.4 of GPU is free in total, but no single device has it.
    EXPECT_EQ(plan.pending[0].explanation.OneLine(), "0/1 hosts: 1 no GPU with 0.4 free");
    ASSERT_EQ(ApplyPlan(plan, s).committed, 4u);
    ASSERT_TRUE(s.Validate().ok()) << s.Validate();
    EXPECT_EQ(s.host(HostId(0))->gpus()[0].milli_allocated, 800);
    EXPECT_EQ(s.host(HostId(0))->gpus()[1].milli_allocated, 800);
  }
}

TEST(Engine, BestFitPacksFractionsOntoTheFullestDevice) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Cpu(64000).MemGi(256).Gpus(2).Build()).ok());
  ASSERT_TRUE(Put(snap, 0, 0, ShapeBuilder(9).Gpu(600).Build(), {GpuShare{1, 600}}).ok());
  std::vector<PlacementRequest> rs = {One(0, ShapeBuilder().Gpu(400).Build())};
  Plan plan = Engine("best-fit")->Place(rs, snap);
  ASSERT_EQ(plan.assignments.size(), 1u);
  EXPECT_EQ(plan.assignments[0].gpus, (GpuShares{GpuShare{1, 400}}));
}

TEST(Engine, GpuModelsAreHonoured) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Gpus(4, "T4").Build()).ok());
  ASSERT_TRUE(snap.AddHost(HostBuilder(1).Gpus(2, "A100").Build()).ok());
  auto a100 = ShapeBuilder(1).Gpu(1000).Models({"A100"}).Build();
  auto any = ShapeBuilder(2).Gpu(2000).Build();
  auto engine = Engine();
  std::vector<PlacementRequest> rs = Instances(a100, 3);
  rs.push_back(One(0, any));
  Plan plan = engine->Place(rs, snap);
  ASSERT_EQ(plan.assignments.size(), 3u);
  for (const Assignment& a : plan.assignments) {
    if (a.shape == a100) {
      EXPECT_EQ(a.host.value(), 1u);
    } else {
      EXPECT_EQ(a.host.value(), 0u);
      EXPECT_EQ(a.gpus.size(), 2u);
    }
  }
  ASSERT_EQ(plan.pending.size(), 1u);
  EXPECT_EQ(plan.pending[0].explanation.OneLine(),
            "0/2 hosts: 1 no GPU of model [A100], 1 insufficient gpu (asked 1, best 0)");
}

TEST(Engine, LearnsTheWorkloadFromRequests) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Gpus(8).Cpu(64000).MemGi(256).Build()).ok());
  auto engine = Engine("fgd");
  EXPECT_TRUE(engine->workload().empty());
  engine->Place(Instances(ShapeBuilder().Gpu(500).Build(), 3), snap);
  ASSERT_EQ(engine->workload().size(), 1u);
  EXPECT_DOUBLE_EQ(engine->workload().total_weight(), 3);
}

}  // namespace
}  // namespace paceline::placement
