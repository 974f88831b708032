#include "placement/gpu_workload.h"

#include <gtest/gtest.h>

#include <vector>

#include "placement/test_util.h"

namespace paceline::placement {
namespace {

using testing::HostBuilder;
using testing::kGi;
using testing::Put;
using testing::ShapeBuilder;

Resources Gpu(int64_t milli, int64_t cpu = 1000) { return Resources::Of(cpu, kGi, 0, milli); }

class GpuWorkloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Two devices; device 0 has 0.5 allocated.
    ASSERT_TRUE(snap_.AddHost(HostBuilder(0).Cpu(8000).Gpus(2).Build()).ok());
    ASSERT_TRUE(Put(snap_, 0, 0, ShapeBuilder(9).Gpu(500).Build(), {GpuShare{0, 500}}).ok());
  }
  const HostState& host() { return *snap_.host(HostId(0)); }
  ClusterSnapshot snap_;
};

TEST_F(GpuWorkloadTest, WholeGpuTasksCannotUseAHalfUsedDevice) {
  GpuWorkload w;
  w.Add(Gpu(1000), {});
  EXPECT_DOUBLE_EQ(w.Fragmentation(host()), 500);
}

TEST_F(GpuWorkloadTest, FragmentationIsTheWeightedMeanOverTaskTypes) {
  GpuWorkload w;
  w.Add(Gpu(1000), {}, 1);
  w.Add(Gpu(500), {}, 1);  // can use the 0.5 left on device 0
  w.Add(Gpu(700), {}, 2);  // cannot: 0.5 < 0.7
  EXPECT_DOUBLE_EQ(w.Fragmentation(host()), (500.0 + 0 + 2 * 500) / 4);
}

TEST_F(GpuWorkloadTest, ATaskThatCannotRunCountsEveryFreeGpu) {
  GpuWorkload w;
  w.Add(Gpu(1000, 16000), {});  // more cpu than the host has
  EXPECT_DOUBLE_EQ(w.Fragmentation(host()), 1500);
  GpuWorkload cpu_only;
  cpu_only.Add(Gpu(0), {});
  EXPECT_DOUBLE_EQ(cpu_only.Fragmentation(host()), 0);
  // After taking all the cpu, even a cpu task cannot run: every free GPU is stranded.
  EXPECT_DOUBLE_EQ(cpu_only.Fragmentation(host(), Resources::Of(7000, 0)), 1500);
}

// The host: 7 cores, 31 GiB and 1.5 GPUs free (SetUp).
TEST_F(GpuWorkloadTest, StrandingIsTheFreeGpuThatFreeCpuAndMemoryCannotServe) {
  GpuWorkload w;
  w.Add(Gpu(1000, 4000), {});                // 4 cores and 1 GiB per GPU
  w.Add(Resources::Of(64000, kGi), {}, 5);   // CPU-only types set no ratio
  EXPECT_DOUBLE_EQ(w.Stranding(host()), 0);  // 7 cores serve 1.75 GPUs
  // A task taking 3 cores leaves 4: one GPU's worth, so 0.5 GPU is stranded.
  EXPECT_DOUBLE_EQ(w.Stranding(host(), Resources::Of(3000, 0)), 500);
  // Taking 30 GiB leaves memory for one GPU.
  EXPECT_DOUBLE_EQ(w.Stranding(host(), Resources::Of(0, 30 * kGi)), 500);
  // A whole device taken: 0.5 GPU left, which 7 cores serve.
  EXPECT_DOUBLE_EQ(w.Stranding(host(), Resources::Of(0, 0), std::vector<GpuShare>{{1, 1000}}), 0);
  // The ratios are weighted by the GPU each type asks: (4000 + 2 x 500) / (1000 + 2 x 500)
  // = 2.5 milli-cores per milli-GPU; 3 cores left serve 1.2 GPUs.
  w.Add(Gpu(500, 500), {}, 2);
  EXPECT_DOUBLE_EQ(w.Stranding(host(), Resources::Of(4000, 0)), 300);
  EXPECT_DOUBLE_EQ(GpuWorkload().Stranding(host()), 0);
}

TEST_F(GpuWorkloadTest, DevicesOfOtherModelsAreFragmentsForRestrictedTasks) {
  GpuWorkload w;
  w.Add(Gpu(500), {"A100"});
  EXPECT_DOUBLE_EQ(w.Fragmentation(host()), 1500);  // the host has T4s only
  GpuWorkload t4;
  t4.Add(Gpu(500), {"T4"});
  EXPECT_DOUBLE_EQ(t4.Fragmentation(host()), 0);
}

TEST_F(GpuWorkloadTest, HypotheticalSharesAreApplied) {
  GpuWorkload w;
  w.Add(Gpu(1000), {});
  // Filling device 0 removes its fragment; breaking device 1 instead adds one.
  EXPECT_DOUBLE_EQ(w.Fragmentation(host(), Gpu(500), GpuShares{GpuShare{0, 500}}), 0);
  // Device 1 broken to 0.5: no whole device left, so the task cannot run at all.
  EXPECT_DOUBLE_EQ(w.Fragmentation(host(), Gpu(500), GpuShares{GpuShare{1, 500}}), 1000);
}

TEST(GpuWorkload, TopKeepsTheHeaviestTypes) {
  GpuWorkload w;
  w.Add(Gpu(1000), {}, 1);
  w.Add(Gpu(500), {}, 5);
  w.Add(Gpu(500), {}, 1);  // merges with the previous type
  w.Add(Gpu(250), {}, 3);
  EXPECT_EQ(w.size(), 3u);
  EXPECT_DOUBLE_EQ(w.total_weight(), 10);
  GpuWorkload top = w.Top(2);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top.types()[0].resources.gpu_milli(), 500);
  EXPECT_DOUBLE_EQ(top.types()[0].weight, 6);
  EXPECT_EQ(top.types()[1].resources.gpu_milli(), 250);
}

TEST(GpuWorkload, ModelPressureIsWhatConstrainedTasksWouldTakeOfEachModel) {
  // 100 A100s and 300 T4s. The workload asks 4 GPUs in all per unit of weight: 2 of any model,
  // 1 of T4 only, 1 of "A100 or T4" (spread 1:3 by their devices). Filling the 400 devices,
  // T4-only tasks need 100 of the T4s and the A100-or-T4 ones 25 A100s and 75 T4s.
  GpuWorkload w;
  w.Add(Gpu(1000), {}, 2);
  w.Add(Gpu(1000), {"T4"}, 1);
  w.Add(Gpu(500), {"A100", "T4", "T4"}, 2);      // a model listed twice counts once
  w.Add(Resources::Of(4000, kGi, 0, 0), {}, 5);  // no GPU: asks none
  absl::flat_hash_map<std::string, double> p = w.ModelPressure({{"A100", 100}, {"T4", 300}});
  ASSERT_EQ(p.size(), 2u);
  EXPECT_DOUBLE_EQ(p["A100"], 25.0 / 100);
  EXPECT_DOUBLE_EQ(p["T4"], (100.0 + 75.0) / 300);

  // A model without devices takes no part; a type whose models have none needs nothing.
  w.Add(Gpu(1000), {"V100"}, 4);
  p = w.ModelPressure({{"A100", 100}, {"T4", 300}});
  EXPECT_FALSE(p.contains("V100"));
  EXPECT_LT(p["T4"], (100.0 + 75.0) / 300);  // the V100 tasks' asks dilute the others' share
  // Nothing constrained, or no devices: no pressure anywhere.
  GpuWorkload any;
  any.Add(Gpu(1000), {});
  EXPECT_TRUE(any.ModelPressure({{"T4", 8}}).empty());
  EXPECT_TRUE(w.ModelPressure({}).empty());
}

}  // namespace
}  // namespace paceline::placement
