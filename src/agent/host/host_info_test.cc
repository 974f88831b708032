#include "agent/host/host_info.h"

#include "agent/testing/agent_test_util.h"
#include "agent/testing/fake_nvml.h"
#include "gtest/gtest.h"

namespace paceline::agent {
namespace {

TEST(HostInfoTest, ParsesNvidiaSmiCsv) {
  absl::StatusOr<std::vector<GpuDevice>> gpus = ParseNvidiaSmiCsv(
      "0, NVIDIA A100-SXM4-40GB, 40960 MiB\n1, Tesla T4, 15360 MiB\n\n2, NVIDIA H100, [N/A]\n");
  ASSERT_TRUE(gpus.ok()) << gpus.status();
  ASSERT_EQ(gpus->size(), 3u);
  EXPECT_EQ((*gpus)[0], (GpuDevice{0, "NVIDIA A100-SXM4-40GB", 40960LL << 20}));
  EXPECT_EQ((*gpus)[1], (GpuDevice{1, "Tesla T4", 15360LL << 20}));
  EXPECT_EQ((*gpus)[2], (GpuDevice{2, "NVIDIA H100", 0}));
  EXPECT_TRUE(ParseNvidiaSmiCsv("").value().empty());
}

TEST(HostInfoTest, RejectsMalformedNvidiaSmiLines) {
  absl::StatusOr<std::vector<GpuDevice>> bad = ParseNvidiaSmiCsv("0, A100\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 1"), std::string::npos);
  EXPECT_FALSE(ParseNvidiaSmiCsv("x, A100, 1 MiB\n").ok());
}

TEST(HostInfoTest, DetectsThisHostAndSubtractsTheReservation) {
  testing::TempDir dir;
  AgentConfig c = testing::TestConfig(dir.path());
  c.reserved_cpu_milli = 500;
  c.reserved_memory_bytes = 1LL << 30;
  c.labels = {{"zone", "a"}};
  std::unique_ptr<CgroupDriver> none = MakeNullCgroupDriver("test");
  absl::StatusOr<HostInfo> h = DetectHostInfo(c, *none);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_GE(h->total.cpu_milli(), 1000);
  EXPECT_GT(h->total.memory_bytes(), 1LL << 28);
  EXPECT_GT(h->total.disk_bytes(), 0);
  EXPECT_EQ(h->total.gpu_milli(), 0);
  EXPECT_EQ(h->allocatable.cpu_milli(), h->total.cpu_milli() - 500);
  EXPECT_EQ(h->allocatable.memory_bytes(), h->total.memory_bytes() - (1LL << 30));
  EXPECT_EQ(h->labels.at("zone"), "a");
  EXPECT_EQ(h->labels.at("hostname"), c.name) << "every host is labelled with its name";
  EXPECT_EQ(h->isolation, CgroupMode::kNone);
  EXPECT_EQ(h->isolation_detail, "none: test");
}

TEST(HostInfoTest, ConfigOverridesDetection) {
  testing::TempDir dir;
  AgentConfig c = testing::TestConfig(dir.path());
  c.cpu_milli = 64000;
  c.memory_bytes = 256LL << 30;
  c.disk_bytes = 1LL << 40;
  c.gpus = std::vector<GpuDevice>{{0, "A100", 0}, {1, "A100", 0}};
  c.reserved_cpu_milli = 100000;  // more than there is: allocatable clamps at 0
  std::unique_ptr<CgroupDriver> none = MakeNullCgroupDriver("test");
  absl::StatusOr<HostInfo> h = DetectHostInfo(c, *none);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->total, Resources::Of(64000, 256LL << 30, 1LL << 40, 2000));
  EXPECT_EQ(h->allocatable.cpu_milli(), 0);
  EXPECT_EQ(h->gpus.size(), 2u);
}

TEST(HostInfoTest, AHostnameLabelGivenInTheConfigIsKept) {
  testing::TempDir dir;
  AgentConfig c = testing::TestConfig(dir.path());
  c.labels = {{"hostname", "db-7.example"}};
  std::unique_ptr<CgroupDriver> none = MakeNullCgroupDriver("test");
  absl::StatusOr<HostInfo> h = DetectHostInfo(c, *none);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->labels.at("hostname"), "db-7.example");
}

TEST(HostInfoTest, RunAndCaptureReturnsStdoutAndTimesOut) {
  absl::StatusOr<std::string> out = RunAndCapture({"/bin/echo", "hi"}, absl::Seconds(10));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "hi\n");
  absl::StatusOr<std::string> slow = RunAndCapture({"/bin/sleep", "10"}, absl::Milliseconds(100));
  EXPECT_EQ(slow.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(FindInPath("definitely-not-a-program-xyz"), "");
  EXPECT_FALSE(FindInPath("sh").empty());
}

// One A100 in MIG mode with one instance, and a whole H100, in the fake NVML.
std::unique_ptr<Nvml> OpenFakeNvml(const testing::TempDir& dir) {
  testing::FakeGpu a100{"NVIDIA A100-SXM4-40GB", 40960, "GPU-a", 0, {}, true};
  a100.migs = {{0, 1, "NVIDIA A100-SXM4-40GB MIG 2g.10gb", 9728, "MIG-a-0"}};
  testing::FakeGpu h100{"NVIDIA H100 80GB HBM3", 81559, "GPU-b", 1, {}, true};
  EXPECT_TRUE(testing::WriteFakeNvmlDevices(dir.Sub("devices"), {a100, h100}).ok());
  testing::UseFakeNvml(dir.Sub("devices"), dir.Sub("events"));
  absl::StatusOr<std::unique_ptr<Nvml>> nvml = Nvml::Open(testing::FakeNvmlPath());
  EXPECT_TRUE(nvml.ok()) << nvml.status();
  return nvml.ok() ? *std::move(nvml) : nullptr;
}

TEST(HostInfoTest, NvmlDevicesAreUsedWhenTheLibraryOpens) {
  testing::TempDir dir;
  AgentConfig c = testing::TestConfig(dir.path());
  c.gpus.reset();
  c.nvidia_smi = "definitely-not-nvidia-smi";
  std::unique_ptr<Nvml> nvml = OpenFakeNvml(dir);
  ASSERT_NE(nvml, nullptr);
  std::unique_ptr<CgroupDriver> none = MakeNullCgroupDriver("test");
  absl::StatusOr<HostInfo> h = DetectHostInfo(c, *none, nvml.get());
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->gpus.size(), 2u);
  EXPECT_EQ(h->gpus[0], (GpuDevice{0, "A100-2g.10gb", 9728LL << 20, "MIG-a-0", "0:0", 0, 0, 1}));
  EXPECT_EQ(h->gpus[1],
            (GpuDevice{1, "NVIDIA H100 80GB HBM3", 81559LL << 20, "GPU-b", "1", 1, -1, -1}));
  EXPECT_EQ(h->total.gpu_milli(), 2000);
}

TEST(HostInfoTest, TheGpusOverrideWinsOverNvml) {
  testing::TempDir dir;
  AgentConfig c = testing::TestConfig(dir.path());
  c.gpus = std::vector<GpuDevice>{{0, "T4", 0}};
  std::unique_ptr<Nvml> nvml = OpenFakeNvml(dir);
  ASSERT_NE(nvml, nullptr);
  std::unique_ptr<CgroupDriver> none = MakeNullCgroupDriver("test");
  absl::StatusOr<HostInfo> h = DetectHostInfo(c, *none, nvml.get());
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->gpus, (std::vector<GpuDevice>{{0, "T4", 0}}));
}

}  // namespace
}  // namespace paceline::agent
