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

}  // namespace
}  // namespace paceline::agent
