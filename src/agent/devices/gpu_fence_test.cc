// GpuDenyRules (gpu_fence.h): the nodes of the GPUs a task does not hold, as the CDI specs name
// each GPU's own nodes (never the global control nodes), else /dev/nvidiaINDEX.
#include "agent/devices/gpu_fence.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "agent/testing/agent_test_util.h"

namespace paceline::agent {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Character devices every Linux has stand in for GPU nodes: /dev/null (1:3), /dev/zero
// (1:5), /dev/full (1:7), /dev/random (1:8).
constexpr char kSpec[] = R"(cdiVersion: 0.5.0
kind: nvidia.com/gpu
containerEdits:
  deviceNodes: [{path: /dev/nvidiactl, hostPath: /dev/random}]
devices:
- {name: "0", containerEdits: {deviceNodes: [{path: /dev/nvidia0, hostPath: /dev/null}]}}
- {name: "1", containerEdits: {deviceNodes: [{path: /dev/nvidia1, hostPath: /dev/zero}]}}
)";

TEST(GpuDenyRules, TheOtherGpusOwnNodesAreDeniedNeverTheControlNodes) {
  testing::TempDir tmp;
  std::ofstream(tmp.path() + "/nvidia.yaml") << kSpec;
  // GPU 2 has no CDI device: its node is looked for as nvidia2 in the dev dir.
  std::filesystem::create_symlink("/dev/full", tmp.path() + "/nvidia2");
  const CdiRegistry cdi = CdiRegistry::Load({tmp.path()});
  // GPU 3 has no node at all: skipped.
  const std::vector<GpuDevice> host = {
      {0, "A100", 0}, {1, "A100", 0}, {2, "A100", 0}, {3, "A100", 0}};

  EXPECT_THAT(GpuDenyRules(cdi, host, {0}, tmp.path()),
              ElementsAre(DeviceRule{'c', 1, 5}, DeviceRule{'c', 1, 7}));
  EXPECT_THAT(GpuDenyRules(cdi, host, {1, 2}, tmp.path()), ElementsAre(DeviceRule{'c', 1, 3}));
  EXPECT_THAT(GpuDenyRules(cdi, host, {}, tmp.path()),
              ElementsAre(DeviceRule{'c', 1, 3}, DeviceRule{'c', 1, 5}, DeviceRule{'c', 1, 7}));
  EXPECT_THAT(GpuDenyRules(cdi, host, {0, 1, 2, 3}, tmp.path()), IsEmpty());
}

// nvidia-ctk's MIG devices name their GPU's node and their own capability nodes.
constexpr char kMigSpec[] = R"(cdiVersion: 0.5.0
kind: nvidia.com/gpu
devices:
- name: "0:1"
  containerEdits:
    deviceNodes:
    - {path: /dev/nvidia0, hostPath: /dev/null}
    - {path: /dev/nvidia-caps/nvidia-cap12, hostPath: /dev/zero}
- name: "0:2"
  containerEdits:
    deviceNodes:
    - {path: /dev/nvidia0, hostPath: /dev/null}
    - {path: /dev/nvidia-caps/nvidia-cap21, hostPath: /dev/full}
)";

TEST(GpuDenyRules, TwoMigSlotsOfOneGpuDoNotDenyEachOthersSharedNode) {
  testing::TempDir tmp;
  std::ofstream(tmp.path() + "/nvidia.yaml") << kMigSpec;
  // GPU 1 is whole, minor 5, without a CDI device: its node is nvidia5 in the dev dir.
  std::filesystem::create_symlink("/dev/random", tmp.path() + "/nvidia5");
  const CdiRegistry cdi = CdiRegistry::Load({tmp.path()});
  GpuDevice mig1{0, "A100-1g.10gb", 0, "MIG-a", "0:1", 0, 0, 7};
  GpuDevice mig2{1, "A100-1g.10gb", 0, "MIG-b", "0:2", 0, 0, 8};
  GpuDevice whole{2, "NVIDIA A100-SXM4-80GB", 0, "GPU-c", "1", 5, -1, -1};
  const std::vector<GpuDevice> host = {mig1, mig2, whole};

  // Holding slot 0: the other instance's capability and GPU 1 are denied, GPU 0's node is not.
  EXPECT_THAT(GpuDenyRules(cdi, host, {0}, tmp.path()),
              ElementsAre(DeviceRule{'c', 1, 7}, DeviceRule{'c', 1, 8}));
  EXPECT_THAT(GpuDenyRules(cdi, host, {1}, tmp.path()),
              ElementsAre(DeviceRule{'c', 1, 5}, DeviceRule{'c', 1, 8}));
  // Holding only the whole GPU: both instances and their shared node are denied.
  EXPECT_THAT(GpuDenyRules(cdi, host, {2}, tmp.path()),
              ElementsAre(DeviceRule{'c', 1, 3}, DeviceRule{'c', 1, 5}, DeviceRule{'c', 1, 7}));
}

}  // namespace
}  // namespace paceline::agent
