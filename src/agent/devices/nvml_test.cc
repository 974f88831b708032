// Nvml and GpuHealthWatch (nvml.h) against the fake NVML library (testing/fake_nvml.h): the
// devices it discovers, MIG instances among them, and the faults its events bring.
#include "agent/devices/nvml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/time/clock.h"
#include "agent/testing/agent_test_util.h"
#include "agent/testing/fake_nvml.h"

namespace paceline::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;

// GPU 0 in MIG mode with two instances (MIG slots 1 and 2; slot 0 is empty), GPU 1 whole.
std::vector<testing::FakeGpu> Gpus() {
  testing::FakeGpu a100{"NVIDIA A100-SXM4-80GB", 81920, "GPU-a100", 0, {}, true};
  a100.migs = {{1, 7, "NVIDIA A100-SXM4-80GB MIG 1g.10gb", 9856, "MIG-a100-1"},
               {2, 3, "NVIDIA A100-SXM4-80GB MIG 3g.40gb", 40192, "MIG-a100-2"}};
  testing::FakeGpu h100{"NVIDIA H100 80GB HBM3", 81559, "GPU-h100", 3, {}, true};
  return {a100, h100};
}

class NvmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(testing::WriteFakeNvmlDevices(devices_path_, Gpus()).ok());
    testing::UseFakeNvml(devices_path_, events_path_);
  }
  // Opens the fake and watches every device it finds.
  std::unique_ptr<Nvml> OpenWatching() {
    absl::StatusOr<std::unique_ptr<Nvml>> nvml = Nvml::Open(testing::FakeNvmlPath());
    EXPECT_TRUE(nvml.ok()) << nvml.status();
    if (!nvml.ok()) return nullptr;
    absl::StatusOr<std::vector<GpuDevice>> devices = (*nvml)->Devices();
    EXPECT_TRUE(devices.ok()) << devices.status();
    EXPECT_TRUE((*nvml)->WatchHealth(devices.value_or(std::vector<GpuDevice>{})).ok());
    return *std::move(nvml);
  }
  void Inject(absl::string_view line) {
    ASSERT_TRUE(testing::InjectFakeNvmlEvent(events_path_, line).ok());
  }

  testing::TempDir dir_;
  std::string devices_path_ = dir_.Sub("devices");
  std::string events_path_ = dir_.Sub("events");
};

auto FaultOf(int device, const std::string& reason) {
  return ::testing::AllOf(Field(&GpuFault::device, device), Field(&GpuFault::reason, reason));
}

TEST_F(NvmlTest, DiscoversModelsMemoryAndMigInstancesThroughTheLibrary) {
  absl::StatusOr<std::unique_ptr<Nvml>> nvml = Nvml::Open(testing::FakeNvmlPath());
  ASSERT_TRUE(nvml.ok()) << nvml.status();
  absl::StatusOr<std::vector<GpuDevice>> devices = (*nvml)->Devices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_THAT(*devices,
              ElementsAre(GpuDevice{0, "A100-1g.10gb", 9856LL << 20, "MIG-a100-1", "0:1", 0, 0, 7},
                          GpuDevice{1, "A100-3g.40gb", 40192LL << 20, "MIG-a100-2", "0:2", 0, 0, 3},
                          GpuDevice{2, "NVIDIA H100 80GB HBM3", 81559LL << 20, "GPU-h100", "1", 3,
                                    -1, -1}));
}

TEST_F(NvmlTest, AMissingLibraryIsNotFoundAndSoIsAMissingDriver) {
  EXPECT_EQ(Nvml::Open(dir_.Sub("libnvidia-ml-absent.so.1")).status().code(),
            absl::StatusCode::kNotFound);
  testing::UseFakeNvml(dir_.Sub("no-devices"), events_path_);  // nvmlInit_v2: no driver
  EXPECT_EQ(Nvml::Open(testing::FakeNvmlPath()).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(AgentConfig().nvml_library, kNvmlLibrary);
}

TEST_F(NvmlTest, AnXidOfTheHardwareMarksItsSlotUnhealthyWithTheReason) {
  std::unique_ptr<Nvml> nvml = OpenWatching();
  ASSERT_NE(nvml, nullptr);
  Inject("xid 1 79");
  absl::StatusOr<std::vector<GpuFault>> faults = nvml->WaitForFaults(absl::Seconds(5));
  ASSERT_TRUE(faults.ok()) << faults.status();
  EXPECT_THAT(*faults, ElementsAre(FaultOf(2, "XID 79: GPU has fallen off the bus")));
  Inject("xid 1 31337");
  EXPECT_THAT(nvml->WaitForFaults(absl::Seconds(5)).value(), ElementsAre(FaultOf(2, "XID 31337")));
}

TEST_F(NvmlTest, AnApplicationXidIsNoFault) {
  std::unique_ptr<Nvml> nvml = OpenWatching();
  ASSERT_NE(nvml, nullptr);
  // Read in order: the XID 13 (an application's bad memory access) comes first and is dropped.
  Inject("xid 1 13");
  Inject("xid 0 13 7");
  Inject("ecc 1");
  std::vector<GpuFault> faults;
  absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (faults.empty() && absl::Now() < deadline) {
    absl::StatusOr<std::vector<GpuFault>> got = nvml->WaitForFaults(absl::Seconds(1));
    ASSERT_TRUE(got.ok()) << got.status();
    faults = *got;
  }
  EXPECT_THAT(faults, ElementsAre(FaultOf(2, "double-bit ECC error")));
}

TEST_F(NvmlTest, AnXidOfAMigGpuInstanceMarksOnlyThatInstance) {
  std::unique_ptr<Nvml> nvml = OpenWatching();
  ASSERT_NE(nvml, nullptr);
  Inject("xid 0 94 3");  // GPU instance 3: MIG slot 2, the agent's slot 1
  EXPECT_THAT(nvml->WaitForFaults(absl::Seconds(5)).value(),
              ElementsAre(FaultOf(1, "XID 94: contained ECC error")));
  Inject("xid 0 79");  // no GPU instance: the whole GPU, both instances
  EXPECT_THAT(nvml->WaitForFaults(absl::Seconds(5)).value(),
              ElementsAre(FaultOf(0, "XID 79: GPU has fallen off the bus"),
                          FaultOf(1, "XID 79: GPU has fallen off the bus")));
}

TEST_F(NvmlTest, ADoubleBitEccErrorMarksTheDevice) {
  std::unique_ptr<Nvml> nvml = OpenWatching();
  ASSERT_NE(nvml, nullptr);
  Inject("ecc 0");
  EXPECT_THAT(nvml->WaitForFaults(absl::Seconds(5)).value(),
              ElementsAre(FaultOf(0, "double-bit ECC error"), FaultOf(1, "double-bit ECC error")));
  EXPECT_THAT(nvml->WaitForFaults(absl::Milliseconds(50)).value(), IsEmpty());
}

TEST_F(NvmlTest, AGpuWithoutEventsIsNotWatched) {
  std::vector<testing::FakeGpu> gpus = Gpus();
  gpus[1].events = false;
  ASSERT_TRUE(testing::WriteFakeNvmlDevices(devices_path_, gpus).ok());
  std::unique_ptr<Nvml> nvml = OpenWatching();
  ASSERT_NE(nvml, nullptr);
  Inject("ecc 1");
  Inject("ecc 0");
  EXPECT_THAT(nvml->WaitForFaults(absl::Seconds(5)).value(),
              ElementsAre(FaultOf(0, "double-bit ECC error"), FaultOf(1, "double-bit ECC error")));
}

TEST_F(NvmlTest, AHealthWatchKeepsTheFirstFaultOfEachDevice) {
  absl::StatusOr<std::unique_ptr<Nvml>> nvml = Nvml::Open(testing::FakeNvmlPath());
  ASSERT_TRUE(nvml.ok()) << nvml.status();
  std::vector<GpuDevice> devices = (*nvml)->Devices().value();
  absl::StatusOr<std::unique_ptr<GpuHealthWatch>> watch =
      GpuHealthWatch::Start(*std::move(nvml), devices);
  ASSERT_TRUE(watch.ok()) << watch.status();
  EXPECT_EQ((*watch)->version(), 0u);
  EXPECT_THAT((*watch)->Faults(), IsEmpty());
  Inject("xid 1 79");
  Inject("xid 1 48");  // the same device again: its first fault stays
  Inject("xid 0 13");  // an application's
  Inject("xid 0 92 7");
  absl::Time deadline = absl::Now() + absl::Seconds(30);
  while ((*watch)->Faults().size() < 2 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_THAT((*watch)->Faults(), ElementsAre(FaultOf(0, "XID 92: high single-bit ECC error rate"),
                                              FaultOf(2, "XID 79: GPU has fallen off the bus")));
  EXPECT_GE((*watch)->version(), 1u);
}

}  // namespace
}  // namespace paceline::agent
