// One test suite per scorer: each checks the preference it encodes on two hosts.

#include <gtest/gtest.h>

#include <cmath>

#include "placement/scorers/avoid_reclaim_scorer.h"
#include "placement/scorers/dot_product_scorer.h"
#include "placement/scorers/gpu_fragmentation_scorer.h"
#include "placement/scorers/gpu_model_pressure_scorer.h"
#include "placement/scorers/gpu_packing_scorer.h"
#include "placement/scorers/gpu_stranding_scorer.h"
#include "placement/scorers/image_locality_scorer.h"
#include "placement/scorers/pack_scorer.h"
#include "placement/scorers/previous_host_scorer.h"
#include "placement/scorers/random_scorer.h"
#include "placement/scorers/spread_scorer.h"
#include "placement/scorers/stateful_sticky_scorer.h"
#include "placement/test_util.h"

namespace paceline::placement {
namespace {

using testing::Ctx;
using testing::HostBuilder;
using testing::Put;
using testing::ShapeBuilder;
using testing::Task;

class ScorerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(snap_.AddHost(HostBuilder(0).Cpu(8000).MemGi(32).Build()).ok());
    ASSERT_TRUE(snap_.AddHost(HostBuilder(1).Cpu(8000).MemGi(32).Build()).ok());
    // Host 0 is half full.
    ASSERT_TRUE(Put(snap_, 0, 0, ShapeBuilder(9).Cpu(4000).MemGi(16).Build()).ok());
  }
  double Score(const Scorer& s, const Ctx& c, uint32_t host, const GpuShares& gpus = {}) {
    return s.Score(ScoreInput{c.get(), *snap_.host(HostId(host)), gpus, env_});
  }
  ClusterSnapshot snap_;
  ScoreEnv env_;
};

TEST_F(ScorerTest, PackPrefersTheFullerHost) {
  PackScorer s;
  Ctx c(Task(0, ShapeBuilder().Cpu(1000).MemGi(4).Build()));
  double full = Score(s, c, 0);
  double empty = Score(s, c, 1);
  EXPECT_GT(full, empty);
  // (4000 + 1000) / 8000 and (16 + 4) / 32 and 0 disk of 100Gi → mean of three dims.
  EXPECT_NEAR(full, (5.0 / 8 + 20.0 / 32 + 0) / 3, 1e-9);
}

TEST_F(ScorerTest, SpreadPrefersTheEmptierHost) {
  SpreadScorer s;
  Ctx c(Task(0, ShapeBuilder().Cpu(1000).MemGi(4).Build()));
  EXPECT_GT(Score(s, c, 1), Score(s, c, 0));
  EXPECT_NEAR(Score(s, c, 1) + PackScorer().Score(
                                   ScoreInput{c.get(), *snap_.host(HostId(1)), GpuShares{}, env_}),
              1.0, 1e-9);
}

TEST_F(ScorerTest, DotProductPrefersLessFreeWhereTheTaskAsks) {
  DotProductScorer s;
  Ctx c(Task(0, ShapeBuilder().Cpu(2000).MemGi(1).Build()));
  EXPECT_GT(Score(s, c, 0), Score(s, c, 1));
  double v = Score(s, c, 1);
  EXPECT_GE(v, 0.0);
  EXPECT_LE(v, 1.0);
}

TEST(GpuPackingScorer, PrefersUsedDevicesAndKeepsCpuTasksOffGpuHosts) {
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Gpus(2).Build()).ok());
  ASSERT_TRUE(snap.AddHost(HostBuilder(1).Gpus(2).Build()).ok());
  ASSERT_TRUE(snap.AddHost(HostBuilder(2).Build()).ok());
  ASSERT_TRUE(Put(snap, 0, 0, ShapeBuilder(9).Gpu(300).Build(), {GpuShare{1, 300}}).ok());
  GpuPackingScorer s;
  EXPECT_TRUE(s.device_aware());
  ScoreEnv env;
  Ctx frac(Task(0, ShapeBuilder().Gpu(500).Build()));
  const HostState& h0 = *snap.host(HostId(0));
  double used_dev = s.Score({frac.get(), h0, GpuShares{GpuShare{1, 500}}, env});
  double idle_dev = s.Score({frac.get(), h0, GpuShares{GpuShare{0, 500}}, env});
  double idle_host = s.Score({frac.get(), *snap.host(HostId(1)), GpuShares{GpuShare{0, 500}}, env});
  EXPECT_GT(used_dev, idle_dev);
  EXPECT_GT(idle_dev, idle_host);
  Ctx cpu(Task(0, ShapeBuilder().Build()));
  EXPECT_GT(s.Score({cpu.get(), *snap.host(HostId(2)), GpuShares{}, env}),
            s.Score({cpu.get(), h0, GpuShares{}, env}));
}

TEST_F(ScorerTest, ImageLocalityPrefersTheHostWithTheImageByItsSize) {
  ImageLocalityScorer s;
  const std::string big = "r.io/big:1", small = "r.io/small:1";
  ASSERT_TRUE(snap_.SetHostImages(HostId(1), {{big, int64_t{2} << 30}, {small, 1 << 20}}).ok());
  Ctx plain(Task(0, ShapeBuilder().Cpu(1000).MemGi(1).Build()));
  EXPECT_FALSE(s.Applies(plain.get(), snap_, ScoreEnv{}));  // no image
  Ctx unknown(Task(0, ShapeBuilder().Cpu(1000).MemGi(1).Image("r.io/nowhere:1").Build()));
  EXPECT_FALSE(s.Applies(unknown.get(), snap_, ScoreEnv{}));  // no host has it: every host the same

  Ctx c(Task(0, ShapeBuilder().Cpu(1000).MemGi(1).Image(big).Build()));
  ASSERT_TRUE(s.Applies(c.get(), snap_, ScoreEnv{}));
  EXPECT_EQ(Score(s, c, 1), 1.0);
  EXPECT_EQ(Score(s, c, 0), 0.0);  // 2 GiB to pull: the whole weight
  Ctx d(Task(0, ShapeBuilder().Cpu(1000).MemGi(1).Image(small).Build()));
  ASSERT_TRUE(s.Applies(d.get(), snap_, ScoreEnv{}));
  EXPECT_EQ(Score(s, d, 1), 1.0);
  EXPECT_NEAR(Score(s, d, 0), 1.0 - 1.0 / 1024, 1e-9);  // 1 MiB barely matters
}

TEST_F(ScorerTest, AvoidReclaimKeepsRegularWorkOffRevocableWork) {
  // Host 1 gets 5 revocable cores: 3 of its 8 cores fit regular work beside them.
  ASSERT_TRUE(Put(snap_, 1, 0, ShapeBuilder(8).Cpu(5000).Revocable().Build()).ok());
  AvoidReclaimScorer s;
  Ctx small(Task(0, ShapeBuilder(1).Cpu(3000).MemGi(1).Build()));
  Ctx large(Task(0, ShapeBuilder(1).Cpu(4000).MemGi(1).Build()));
  Ctx revocable(Task(0, ShapeBuilder(2).Cpu(4000).MemGi(1).Revocable().Build()));
  EXPECT_EQ(Score(s, small, 1), 1.0);
  EXPECT_EQ(Score(s, large, 1), 0.0) << "it would reclaim a revocable core";
  EXPECT_EQ(Score(s, large, 0), 1.0) << "no revocable work on host 0";
  EXPECT_EQ(Score(s, revocable, 1), 1.0);
}

TEST_F(ScorerTest, PreviousHostScoresOnlyThePreviousHostOfARestart) {
  PreviousHostScorer s;
  PlacementTask t = Task(0, ShapeBuilder().Build());
  t.previous = PreviousHost{HostId(1), false};
  Ctx c(t);
  EXPECT_EQ(Score(s, c, 1), 1.0);
  EXPECT_EQ(Score(s, c, 0), 0.0);
  t.previous->stateful = true;
  Ctx stateful(t);
  EXPECT_EQ(Score(s, stateful, 1), 0.0);  // stateful_sticky's business
  Ctx fresh(Task(0, ShapeBuilder().Build()));
  EXPECT_EQ(Score(s, fresh, 1), 0.0);
}

TEST_F(ScorerTest, StatefulStickyScoresOnlyTheVolumeHost) {
  StatefulStickyScorer s;
  PlacementTask t = Task(0, ShapeBuilder().Build());
  t.previous = PreviousHost{HostId(0), true};
  Ctx c(t);
  EXPECT_EQ(Score(s, c, 0), 1.0);
  EXPECT_EQ(Score(s, c, 1), 0.0);
  t.previous->stateful = false;
  Ctx restart(t);
  EXPECT_EQ(Score(s, restart, 0), 0.0);
}

TEST_F(ScorerTest, RandomIsDeterministicPerSeedAndSpreadsOverHosts) {
  RandomScorer s;
  Ctx c(Task(0, ShapeBuilder().Build()));
  env_.seed = 7;
  env_.sequence = 3;
  double a0 = Score(s, c, 0);
  double a1 = Score(s, c, 1);
  EXPECT_EQ(a0, Score(s, c, 0));
  EXPECT_NE(a0, a1);
  env_.seed = 8;
  EXPECT_NE(a0, Score(s, c, 0));
  // Roughly uniform: the mean of many draws is near 0.5.
  double sum = 0;
  for (uint64_t i = 0; i < 2000; ++i) {
    env_.sequence = i;
    double v = Score(s, c, 0);
    ASSERT_GE(v, 0.0);
    ASSERT_LT(v, 1.0);
    sum += v;
  }
  EXPECT_NEAR(sum / 2000, 0.5, 0.05);
}

TEST(GpuFragmentationScorer, PutsAFractionWhereItFragmentsLeast) {
  // The workload is mostly whole-GPU tasks: breaking a fresh device into a fraction makes
  // that device unusable for them, so a 0.5 task should go next to another fraction.
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Gpus(2).Build()).ok());
  ASSERT_TRUE(Put(snap, 0, 0, ShapeBuilder(9).Gpu(500).Build(), {GpuShare{0, 500}}).ok());
  GpuWorkload w;
  w.Add(Resources::Of(1000, 1 << 30, 0, 1000), {}, 9);
  w.Add(Resources::Of(1000, 1 << 30, 0, 500), {}, 1);
  ScoreEnv env;
  env.workload = &w;
  env.workload_generation = 1;
  GpuFragmentationScorer s;
  EXPECT_TRUE(s.device_aware());
  Ctx c(Task(0, ShapeBuilder().Gpu(500).Build()));
  const HostState& h = *snap.host(HostId(0));
  double shared = s.Score({c.get(), h, GpuShares{GpuShare{0, 500}}, env});
  double fresh = s.Score({c.get(), h, GpuShares{GpuShare{1, 500}}, env});
  EXPECT_GT(shared, fresh);
  EXPECT_GT(shared, 0.5);  // filling the half-used device removes fragmentation
  EXPECT_LT(fresh, 0.5);
  // A host without GPUs is neutral.
  ASSERT_TRUE(snap.AddHost(HostBuilder(1).Build()).ok());
  Ctx cpu(Task(0, ShapeBuilder().Build()));
  EXPECT_EQ(s.Score({cpu.get(), *snap.host(HostId(1)), GpuShares{}, env}), 0.5);
}

TEST(GpuStrandingScorer, SendsCpuTasksWhereTheGpusKeepTheirCpu) {
  // Two idle 2-GPU hosts, 8 and 32 cores; the workload's GPU tasks want 4 cores per GPU. A
  // 6-core task on the small host would leave 2 cores for 2 GPUs (1.5 GPUs stranded).
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Cpu(8000).Gpus(2).Build()).ok());
  ASSERT_TRUE(snap.AddHost(HostBuilder(1).Cpu(32000).Gpus(2).Build()).ok());
  ASSERT_TRUE(snap.AddHost(HostBuilder(2).Build()).ok());
  GpuWorkload w;
  w.Add(Resources::Of(4000, 1 << 30, 0, 1000), {});
  ScoreEnv env;
  env.workload = &w;
  env.workload_generation = 1;
  GpuStrandingScorer s;
  Ctx c(Task(0, ShapeBuilder().Cpu(6000).Build()));
  double small = s.Score({c.get(), *snap.host(HostId(0)), GpuShares{}, env});
  double big = s.Score({c.get(), *snap.host(HostId(1)), GpuShares{}, env});
  EXPECT_NEAR(small, 0.5 - 0.5 * std::tanh(1.5), 1e-12);
  EXPECT_EQ(big, 0.5);
  EXPECT_EQ(s.Score({c.get(), *snap.host(HostId(2)), GpuShares{}, env}), 0.5);  // no GPUs
}

TEST(GpuModelPressureScorer, LeavesTheModelsConstrainedTasksNeedToThem) {
  // One 2-GPU T4 host, one 8-GPU A100 host. Half the workload's GPU
  // asks are T4-only: filling the 10 devices they would need 5 T4s, and there are 2: T4
  // pressure 2.5, A100 0.
  ClusterSnapshot snap;
  ASSERT_TRUE(snap.AddHost(HostBuilder(0).Cpu(32000).Gpus(2, "T4").Build()).ok());
  ASSERT_TRUE(snap.AddHost(HostBuilder(1).Cpu(32000).Gpus(8, "A100").Build()).ok());
  GpuWorkload w;
  w.Add(Resources::Of(1000, 1 << 30, 0, 1000), {}, 1);
  w.Add(Resources::Of(1000, 1 << 30, 0, 1000), {"T4"}, 1);
  ScoreEnv env;
  env.workload = &w;
  env.workload_generation = 1;
  GpuModelPressureScorer s;
  auto score = [&](const Ctx& c, uint32_t host, GpuShares g) {
    return s.Score({c.get(), *snap.host(HostId(host)), g, env});
  };

  Ctx any(Task(0, ShapeBuilder().Gpu(1000).Build()));
  ASSERT_TRUE(s.Applies(any.get(), snap, env));
  EXPECT_DOUBLE_EQ(score(any, 0, {GpuShare{0, 1000}}), 1.0 / 3.5);
  EXPECT_DOUBLE_EQ(score(any, 1, {GpuShare{0, 1000}}), 1.0);
  // A task without GPUs is not its business.
  Ctx cpu(Task(0, ShapeBuilder().Cpu(4000).Build()));
  EXPECT_FALSE(s.Applies(cpu.get(), snap, env));
  // One acceptable model: every host it may use scores the same.
  Ctx t4(Task(0, ShapeBuilder().Gpu(1000).Models({"T4"}).Build()));
  EXPECT_FALSE(s.Applies(t4.get(), snap, env));
  Ctx two(Task(0, ShapeBuilder().Gpu(1000).Models({"A100", "T4"}).Build()));
  EXPECT_TRUE(s.Applies(two.get(), snap, env));

  // More T4s: less pressure, once the scorer sees the new host (static_seq).
  ASSERT_TRUE(snap.AddHost(HostBuilder(3).Cpu(32000).Gpus(8, "T4").Build()).ok());
  ASSERT_TRUE(s.Applies(any.get(), snap, env));
  EXPECT_DOUBLE_EQ(score(any, 0, {GpuShare{0, 1000}}), 1.0 / (1.0 + 0.5 * 18 / 10));

  // No constrained type: nothing to tell hosts apart by.
  GpuWorkload plain;
  plain.Add(Resources::Of(1000, 1 << 30, 0, 1000), {});
  env.workload = &plain;
  env.workload_generation = 2;
  EXPECT_FALSE(s.Applies(any.get(), snap, env));
  env.workload = nullptr;
  EXPECT_FALSE(s.Applies(any.get(), snap, env));
}

}  // namespace
}  // namespace paceline::placement
