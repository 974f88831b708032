#include "agent/isolation/gpu_hook.h"

#include "gtest/gtest.h"

namespace paceline::agent {
namespace {

std::vector<GpuDevice> FourGpus() {
  return {{0, "A100", 0}, {1, "A100", 0}, {2, "A100", 0}, {3, "A100", 0}};
}

TEST(GpuAllocatorTest, WholeGpusGoToFreeDevices) {
  GpuAllocator gpus(FourGpus());
  EXPECT_EQ(gpus.Allocate(2000).value(), (std::vector<int>{0, 1}));
  EXPECT_EQ(gpus.Allocate(1000).value(), (std::vector<int>{2}));
  EXPECT_EQ(gpus.Allocate(2000).status().code(), absl::StatusCode::kResourceExhausted);
  gpus.Release({0, 1}, 2000);
  EXPECT_EQ(gpus.Allocate(2000).value(), (std::vector<int>{0, 1}));
  EXPECT_EQ(gpus.Allocate(1500).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(GpuAllocatorTest, SharesBestFitAndNeverOvercommit) {
  GpuAllocator gpus(FourGpus());
  EXPECT_EQ(gpus.Allocate(500).value(), (std::vector<int>{0}));
  EXPECT_EQ(gpus.Allocate(300).value(), (std::vector<int>{0}));  // best fit: device 0
  EXPECT_EQ(gpus.Allocate(300).value(), (std::vector<int>{1}));  // 0 has only 200 left
  EXPECT_EQ(gpus.used_milli(0), 800);
  EXPECT_EQ(gpus.Allocate(3000).status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(gpus.Reserve({0}, 500).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(gpus.Reserve({9}, 500).code(), absl::StatusCode::kNotFound);
}

TEST(GpuHookTest, ExportsVisibleDevicesAndHidesThemFromOthers) {
  GpuAllocator gpus(FourGpus());
  GpuHook hook(gpus);
  RunContext with;
  with.request.spec.resources = Resources::Of(0, 0, 0, 2000);
  ASSERT_TRUE(hook.Prepare(with).ok());
  EXPECT_EQ(with.env.at("CUDA_VISIBLE_DEVICES"), "0,1");
  RunContext chosen;
  chosen.request.spec.resources = Resources::Of(0, 0, 0, 1000);
  chosen.request.gpu_devices = {3};
  ASSERT_TRUE(hook.Prepare(chosen).ok());
  EXPECT_EQ(chosen.env.at("CUDA_VISIBLE_DEVICES"), "3");
  RunContext without;
  ASSERT_TRUE(hook.Prepare(without).ok());
  EXPECT_EQ(without.env.at("CUDA_VISIBLE_DEVICES"), "");
  hook.Cleanup(with, CleanupKind::kFinished);
  EXPECT_EQ(gpus.used_milli(0), 0);
  with.gpus = {0, 1};
  ASSERT_TRUE(hook.Recover(with).ok());
  EXPECT_EQ(gpus.used_milli(1), 1000);

  GpuAllocator no_gpus({});
  GpuHook plain(no_gpus);
  RunContext cpu_only;
  ASSERT_TRUE(plain.Prepare(cpu_only).ok());
  EXPECT_FALSE(cpu_only.env.contains("CUDA_VISIBLE_DEVICES"));
}

TEST(GpuHookTest, AMigSlotIsVisibleByItsUuidAndAWholeGpuByItsNvmlIndex) {
  // GPU 0 in MIG mode (two instances: slots 0 and 1), GPU 1 whole (slot 2), as NVML finds them.
  GpuDevice mig0{0, "A100-1g.10gb", 10LL << 30, "MIG-aaa", "0:1", 0, 0, 7};
  GpuDevice mig1{1, "A100-3g.40gb", 40LL << 30, "MIG-bbb", "0:2", 0, 0, 2};
  GpuDevice whole{2, "NVIDIA A100-SXM4-80GB", 80LL << 30, "GPU-ccc", "1", 1, -1, -1};
  GpuAllocator gpus({mig0, mig1, whole});
  GpuHook hook(gpus);
  RunContext one;
  one.request.spec.resources = Resources::Of(0, 0, 0, 1000);
  one.request.gpu_devices = {1};
  ASSERT_TRUE(hook.Prepare(one).ok());
  EXPECT_EQ(one.env.at("CUDA_VISIBLE_DEVICES"), "MIG-bbb");
  RunContext two;
  two.request.spec.resources = Resources::Of(0, 0, 0, 2000);
  two.request.gpu_devices = {0, 2};
  ASSERT_TRUE(hook.Prepare(two).ok());
  EXPECT_EQ(two.env.at("CUDA_VISIBLE_DEVICES"), "MIG-aaa,1");
}

}  // namespace
}  // namespace paceline::agent
