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

// Hosts 0..t4-1: 4 T4s, one in use by a task of 8 cores (the walk's tightest hosts); then
// `a100` hosts of 8 idle A100s. The workload asks T4-only GPUs and GPUs of any model, so the
// T4s are under pressure and the A100s are not.
struct ModelCluster {
  ClusterSnapshot snap;
  GpuWorkload w;
  ModelCluster(uint32_t t4, uint32_t a100) {
    for (uint32_t i = 0; i < t4 + a100; ++i) {
      auto b = HostBuilder(i).Cpu(64000).MemGi(256);
      PL_CHECK(snap.AddHost(i < t4 ? b.Gpus(4, "T4").Build() : b.Gpus(8, "A100").Build()).ok());
      if (i < t4) {
        auto busy = ShapeBuilder(9).Cpu(8000).Gpu(1000).Build();
        PL_CHECK(Put(snap, i, i, busy, {GpuShare{0, 1000}}).ok());
      }
    }
    w.Add(Resources::Of(1000, kGi, 0, 1000), {"T4"});
    w.Add(Resources::Of(1000, kGi, 0, 1000), {});
  }
  // Where a task of any model goes with `candidates` candidates, and how many hosts were
  // visited.
  std::pair<HostId, uint64_t> Place(const std::string& profile, uint32_t candidates) {
    absl::StatusOr<ProfileSpec> spec = ProfileSpecFromText(profile);
    PL_CHECK(spec.ok()) << spec.status();
    EngineConfig c;
    c.custom_profile = *spec;
    c.workload = w;
    c.max_candidates = candidates;
    auto engine = PlacementEngine::Create(c);
    PL_CHECK(engine.ok()) << engine.status();
    Plan plan =
        (*engine)->Place(Instances(ShapeBuilder(2).Cpu(1000).MemGi(1).Gpu(1000).Build(), 1), snap);
    PL_CHECK(plan.assignments.size() == 1u);
    return {plan.assignments[0].host, plan.stats.hosts_visited};
  }
};

TEST(Engine, ATaskOfAnyModelSamplesEveryModelsHosts) {
  // Two candidates: the tightest-first walk meets the T4 hosts first. Shared between the two
  // models, the sample holds a T4 host and an A100 host, and model pressure picks the A100.
  ModelCluster c(6, 2);
  EXPECT_GE(c.Place("default", 2).first.value(), 6u);
  // Without model pressure the sample is the walk's first two hosts, both T4s.
  EXPECT_LT(c.Place("pack=1+gpu_fragmentation=16+gpu_stranding=32", 2).first.value(), 6u);
  // Every host scored: the A100 too.
  EXPECT_GE(c.Place("default", 0).first.value(), 6u);
}

TEST(Engine, AModelSampleWalksAtMostEightTimesItsCandidates) {
  // 40 T4 hosts before the first A100 host: with 2 candidates the walk gives up after 16
  // hosts, and the task goes to a T4 rather than walking the cluster for its sample.
  ModelCluster c(40, 1);
  auto [host, visited] = c.Place("default", 2);
  EXPECT_LT(host.value(), 40u);
  EXPECT_EQ(visited, 16u);
  // With enough candidates to reach it, the A100 host is found.
  EXPECT_EQ(c.Place("default", 8).first, HostId(40));
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
