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
  const std::vector<int> host = {0, 1, 2, 3};  // GPU 3 has no node at all: skipped

  EXPECT_THAT(GpuDenyRules(cdi, host, {0}, tmp.path()),
              ElementsAre(DeviceRule{'c', 1, 5}, DeviceRule{'c', 1, 7}));
  EXPECT_THAT(GpuDenyRules(cdi, host, {1, 2}, tmp.path()), ElementsAre(DeviceRule{'c', 1, 3}));
  EXPECT_THAT(GpuDenyRules(cdi, host, {}, tmp.path()),
              ElementsAre(DeviceRule{'c', 1, 3}, DeviceRule{'c', 1, 5}, DeviceRule{'c', 1, 7}));
  EXPECT_THAT(GpuDenyRules(cdi, host, {0, 1, 2, 3}, tmp.path()), IsEmpty());
}

}  // namespace
}  // namespace paceline::agent
