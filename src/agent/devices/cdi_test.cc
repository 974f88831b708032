// CDI specs (cdi.h): what is read from a spec as nvidia-ctk writes it, what is refused and
// where, and how specs of several files and directories resolve a container's devices.
#include "agent/devices/cdi.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "agent/testing/agent_test_util.h"

namespace paceline::agent {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// As `nvidia-ctk cdi generate` writes it (shortened): global nodes, libraries and a hook, and
// per device its node.
constexpr absl::string_view kNvidiaSpec = R"(---
cdiVersion: 0.5.0
kind: nvidia.com/gpu
devices:
- name: "0"
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
- name: "1"
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia1
      hostPath: /dev/nvidia1
      type: c
      major: 195
      minor: 1
      permissions: rw
containerEdits:
  env:
  - NVIDIA_VISIBLE_DEVICES=void
  deviceNodes:
  - path: /dev/nvidiactl
  - path: /dev/nvidia-uvm
  mounts:
  - hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05
    containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05
    options: [ro, nosuid, nodev, bind]
  hooks:
  - hookName: createContainer
    path: /usr/bin/nvidia-ctk
    args: [nvidia-ctk, hook, update-ldcache, --folder, /usr/lib/x86_64-linux-gnu]
)";

TEST(CdiSpec, ASpecAsNvidiaCtkWritesItIsReadWhole) {
  absl::StatusOr<CdiSpec> spec = ParseCdiSpec(kNvidiaSpec, "nvidia.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->version, "0.5.0");
  EXPECT_EQ(spec->kind, "nvidia.com/gpu");
  EXPECT_THAT(spec->edits.env, ElementsAre("NVIDIA_VISIBLE_DEVICES=void"));
  ASSERT_EQ(spec->edits.device_nodes.size(), 2u);
  EXPECT_EQ(spec->edits.device_nodes[1].path, "/dev/nvidia-uvm");
  ASSERT_EQ(spec->edits.mounts.size(), 1u);
  EXPECT_THAT(spec->edits.mounts[0].options, ElementsAre("ro", "nosuid", "nodev", "bind"));
  ASSERT_EQ(spec->edits.hooks.size(), 1u);
  EXPECT_EQ(spec->edits.hooks[0].hook_name, "createContainer");
  EXPECT_EQ(spec->edits.hooks[0].args.size(), 5u);
  ASSERT_EQ(spec->devices.size(), 2u);
  const CdiDeviceNode& one = spec->devices.at("1").device_nodes.at(0);
  EXPECT_EQ(one.type, "c");
  EXPECT_EQ(one.major, 195);
  EXPECT_EQ(one.minor, 1);
}

TEST(CdiSpec, JsonIsReadToo) {
  absl::StatusOr<CdiSpec> spec = ParseCdiSpec(
      R"({"cdiVersion": "0.6.0", "kind": "example.com/dev", "annotations": {"a": "b"},
          "devices": [{"name": "x", "containerEdits": {"env": ["X=1"],
                       "additionalGIDs": [44]}}]})",
      "x.json");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_THAT(spec->devices.at("x").env, ElementsAre("X=1"));
  EXPECT_THAT(spec->devices.at("x").additional_gids, ElementsAre(44));
}

// Each error names the file, the line and column, and the field.
TEST(CdiSpec, WhatIsNotASpecTheAgentHonoursIsRefusedWhereItIs) {
  struct Case {
    const char* text;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"cdiVersion: 0.2.0\nkind: a.com/b\ndevices: []\n", {"f.yaml:1:13", "cdiVersion"}},
      {"cdiVersion: 0.5.0\nkind: gpu\ndevices: []\n", {"f.yaml:2:7", "kind", "vendor/class"}},
      {"cdiVersion: 0.5.0\nkind: a.com/b\n", {"devices", "is required"}},
      {"cdiVersion: 0.5.0\nkind: a.com/b\ndevices:\n- name: x\n  containerEdits:\n"
       "    deviceNodes:\n    - hostPath: /dev/x\n",
       {"f.yaml:7:7", "devices[0].containerEdits.deviceNodes[0]", "path"}},
      {"cdiVersion: 0.5.0\nkind: a.com/b\ndevices:\n- name: x\n  containerEdits:\n"
       "    hooks:\n    - hookName: beforeStart\n      path: /bin/true\n",
       {"f.yaml:7:17", "hookName"}},
      {"cdiVersion: 0.7.0\nkind: a.com/b\ndevices:\n- name: x\n  containerEdits:\n"
       "    intelRdt: {closID: x}\n",
       {"intelRdt", "not applied"}},
      {"cdiVersion: 0.5.0\nkind: a.com/b\ndevices:\n- name: x\n  containerEdits:\n"
       "    mount: []\n",
       {"f.yaml:6:5", "mount"}},
      {"cdiVersion: 0.5.0\nkind: a.com/b\ndevices:\n- name: x\n  containerEdits: {}\n"
       "- name: x\n  containerEdits: {}\n",
       {"twice"}},
      {"cdiVersion: 0.5.0\nkind: a.com/b\ndevices: [\n", {"f.yaml:"}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<CdiSpec> spec = ParseCdiSpec(c.text, "f.yaml");
    ASSERT_FALSE(spec.ok()) << c.text;
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    for (const std::string& w : c.want) {
      EXPECT_THAT(spec.status().message(), HasSubstr(w)) << c.text;
    }
  }
}

void Write(const std::string& path, absl::string_view text) { std::ofstream(path) << text; }

constexpr absl::string_view kOneDevice = R"(cdiVersion: 0.5.0
kind: nvidia.com/gpu
containerEdits:
  env: [FROM=%s]
devices:
- name: "0"
  containerEdits:
    env: [DEVICE=%s]
)";

std::string OneDevice(absl::string_view from) {
  std::string s(kOneDevice);
  for (size_t at; (at = s.find("%s")) != std::string::npos;) s.replace(at, 2, std::string(from));
  return s;
}

TEST(CdiRegistry, ALaterDirectoryOverridesAndGlobalEditsComeOncePerSpec) {
  testing::TempDir tmp;
  const std::string etc = tmp.path() + "/etc", run = tmp.path() + "/run";
  std::filesystem::create_directories(etc);
  std::filesystem::create_directories(run);
  Write(etc + "/nvidia.yaml", kNvidiaSpec);
  Write(run + "/override.yaml", OneDevice("run"));
  Write(etc + "/notes.txt", "not a spec");
  CdiRegistry r = CdiRegistry::Load({etc, run, tmp.path() + "/missing"});
  EXPECT_TRUE(r.errors().empty());

  absl::StatusOr<CdiEdits> zero = r.Resolve("nvidia.com/gpu", {"0"});
  ASSERT_TRUE(zero.ok()) << zero.status();
  EXPECT_THAT(zero->env, ElementsAre("FROM=run", "DEVICE=run"));
  // Device 1 comes from /etc/cdi's spec, its global edits once for both of its devices.
  absl::StatusOr<CdiEdits> both = r.Resolve("nvidia.com/gpu", {"0", "1"});
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_THAT(both->env, ElementsAre("FROM=run", "DEVICE=run", "NVIDIA_VISIBLE_DEVICES=void"));
  ASSERT_EQ(both->device_nodes.size(), 3u);
  EXPECT_EQ(both->device_nodes[2].path, "/dev/nvidia1");
  EXPECT_EQ(both->hooks.size(), 1u);
}

TEST(CdiRegistry, AMissingDeviceABadFileAndAConflictAreClearErrorsAndTheRestResolves) {
  testing::TempDir tmp;
  Write(tmp.path() + "/a.yaml", OneDevice("a"));
  Write(tmp.path() + "/b.yaml", OneDevice("b"));
  Write(tmp.path() + "/c.json", "{\"cdiVersion\": \"0.5.0\", \"kind\": ");
  Write(tmp.path() + "/d.yaml", kNvidiaSpec);
  CdiRegistry r = CdiRegistry::Load({tmp.path()});
  // c.json does not parse; a.yaml, b.yaml and d.yaml all name device 0.
  ASSERT_EQ(r.errors().size(), 3u);
  EXPECT_TRUE(r.Resolve("nvidia.com/gpu", {"1"}).ok());

  absl::StatusOr<CdiEdits> conflict = r.Resolve("nvidia.com/gpu", {"0"});
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(conflict.status().message(),
              AllOf(HasSubstr("nvidia.com/gpu=0"), HasSubstr("a.yaml"), HasSubstr("b.yaml")));
  absl::StatusOr<CdiEdits> missing = r.Resolve("nvidia.com/gpu", {"7"});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(),
              AllOf(HasSubstr("nvidia.com/gpu=7: no CDI spec names it in " + tmp.path()),
                    HasSubstr("c.json"), HasSubstr("nvidia-ctk cdi generate")));
}

TEST(CdiSpecDirs, TheSpecsAreReadAgainOnlyWhenAFileChanges) {
  testing::TempDir tmp;
  Write(tmp.path() + "/a.yaml", OneDevice("a"));
  CdiSpecDirs dirs({tmp.path(), tmp.path() + "/missing"});
  EXPECT_TRUE(dirs.Get().Resolve("nvidia.com/gpu", {"0"}).ok());
  EXPECT_TRUE(dirs.Get().Resolve("nvidia.com/gpu", {"0"}).ok());
  EXPECT_EQ(dirs.loads(), 1) << "nothing changed: not read again";
  // Rewritten (another size), added, removed: each is seen at the next Get.
  Write(tmp.path() + "/a.yaml", OneDevice("again"));
  absl::StatusOr<CdiEdits> again = dirs.Get().Resolve("nvidia.com/gpu", {"0"});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_THAT(again->env, ElementsAre("FROM=again", "DEVICE=again"));
  Write(tmp.path() + "/b.yaml", OneDevice("b"));
  EXPECT_FALSE(dirs.Get().Resolve("nvidia.com/gpu", {"0"}).ok()) << "a and b conflict";
  std::filesystem::remove(tmp.path() + "/b.yaml");
  EXPECT_TRUE(dirs.Get().Resolve("nvidia.com/gpu", {"0"}).ok());
  std::filesystem::remove(tmp.path() + "/a.yaml");
  EXPECT_FALSE(dirs.Get().Resolve("nvidia.com/gpu", {"0"}).ok());
  EXPECT_EQ(dirs.loads(), 5);
  // A file that is not a spec changes nothing.
  Write(tmp.path() + "/notes.txt", "not a spec");
  dirs.Get();
  EXPECT_EQ(dirs.loads(), 5);
}

TEST(CdiDeviceNodes, WhatASpecLeavesOutIsTakenFromTheHostNode) {
  CdiEdits e;
  e.device_nodes.push_back(CdiDeviceNode{.path = "/dev/fake0", .host_path = "/dev/null"});
  e.device_nodes.push_back(CdiDeviceNode{.path = "/dev/null", .major = 7});
  ASSERT_TRUE(CompleteDeviceNodes(e).ok());
  EXPECT_EQ(e.device_nodes[0].type, "c");
  EXPECT_EQ(e.device_nodes[0].major, 1);
  EXPECT_EQ(e.device_nodes[0].minor, 3);
  EXPECT_EQ(e.device_nodes[1].major, 7);  // the spec's own stays

  testing::TempDir tmp;
  Write(tmp.path() + "/plain", "");
  CdiEdits bad;
  bad.device_nodes.push_back(CdiDeviceNode{.path = tmp.path() + "/plain"});
  absl::Status s = CompleteDeviceNodes(bad);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("/plain"), HasSubstr("not a device on this host")));
}

}  // namespace
}  // namespace paceline::agent
