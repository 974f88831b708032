// End to end: a container task that holds a GPU gets exactly its device through the host's CDI
// spec (docs/containers.md "GPUs"), and without a spec for it the task fails saying how to make
// one. No GPU on these machines: a stand-in nvidia-smi reports two, their device nodes are made
// with mknod (NVIDIA's major number, 195) in the test's directory, and a CDI spec names them
// as `nvidia-ctk cdi generate` would, with a driver library mount and an env edit.

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "tests/e2e/container_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kGpuPool[] = R"(
description: GPU containers
resources:
  cpu:    {reservation: 1}
  memory: {reservation: 1Gi}
  gpu:    {reservation: 2}
)";

// A directory of the test's own for the stand-in driver, which the task user can reach
// (MakeTempDir), removed with everything in it.
struct FakeGpus {
  FakeGpus() : dir(MakeTempDir("fake-gpus")) {}
  ~FakeGpus() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  const std::string dir;
};

// The stand-in driver under `dir`: bin/nvidia-smi, dev/nvidia{0,1,ctl} and lib/libcuda.so.1,
// and the CDI spec cdi/nvidia.yaml that names them.
void MakeFakeGpus(const std::string& dir) {
  for (const char* sub : {"bin", "dev", "cdi", "lib"}) {
    std::filesystem::create_directories(absl::StrCat(dir, "/", sub));
  }
  std::ofstream(dir + "/bin/nvidia-smi")
      << "#!/bin/sh\necho '0, Fake GPU, 16384 MiB'\necho '1, Fake GPU, 16384 MiB'\n";
  std::filesystem::permissions(dir + "/bin/nvidia-smi", std::filesystem::perms::owner_all |
                                                            std::filesystem::perms::group_read |
                                                            std::filesystem::perms::others_read);
  for (const auto& [name, minor] : {std::pair{"nvidia0", 0}, {"nvidia1", 1}, {"nvidiactl", 255}}) {
    const std::string node = absl::StrCat(dir, "/dev/", name);
    ASSERT_EQ(::mknod(node.c_str(), S_IFCHR | 0666, makedev(195, minor)), 0) << node;
  }
  std::ofstream(dir + "/lib/libcuda.so.1") << "fake-cuda\n";
  std::ofstream(dir + "/cdi/nvidia.yaml") << absl::StrCat(
      R"(cdiVersion: 0.5.0
kind: nvidia.com/gpu
containerEdits:
  env: [NVIDIA_VISIBLE_DEVICES=void]
  deviceNodes:
  - {path: /dev/nvidiactl, hostPath: )",
      dir, R"(/dev/nvidiactl}
  mounts:
  - {hostPath: )",
      dir,
      R"(/lib/libcuda.so.1, containerPath: /usr/lib/libcuda.so.1, options: [ro, nosuid, nodev, bind]}
devices:
- name: "0"
  containerEdits:
    deviceNodes: [{path: /dev/nvidia0, hostPath: )",
      dir, R"(/dev/nvidia0}]
- name: "1"
  containerEdits:
    deviceNodes: [{path: /dev/nvidia1, hostPath: )",
      dir, R"(/dev/nvidia1}]
)");
}

// Whether this machine has cgroup v1's devices controller, which the agent fences GPUs with.
bool DeviceCgroupV1() { return ::access("/sys/fs/cgroup/devices/devices.deny", W_OK) == 0; }

TEST_F(ContainerE2E, AGpuTaskSeesExactlyItsDeviceThroughTheCdiSpec) {
  const FakeGpus fake;
  const std::string& dir = fake.dir;
  ASSERT_NO_FATAL_FAILURE(MakeFakeGpus(dir));
  ASSERT_NO_FATAL_FAILURE(
      StartCluster({"--registry-ca", ca_, "--registry-timeout", "3s", "--cdi-dir", dir + "/cdi"},
                   {"PATH=" + dir + "/bin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}));
  ASSERT_EQ(cluster_->Cli({"pool", "create", "/g", "-f", cluster_->WriteFile("gpu.yaml", kGpuPool)})
                .exit_code,
            0);
  auto gpu_job = [&](const std::string& name) {
    return cluster_->CreateJob("/g", absl::StrCat("name: ", name, R"(
instances: 1
task:
  command: "ls /dev; cat /usr/lib/libcuda.so.1; echo NV=$NVIDIA_VISIBLE_DEVICES; for n in 0 1; do test -e /dev/nvidia$n && cat /dev/nvidia$n; done; true"
  resources: {cpu: 0.2, memory: 64Mi, gpu: 1}
  container: {image: ")",
                                                  ref_, "\"}\n"));
  };

  const uint64_t job = gpu_job("sees-its-gpu");
  ASSERT_TRUE(WaitState(job, "SUCCEEDED", absl::Seconds(90))) << Task(job).dump();
  const std::string out = Logs(job);
  EXPECT_THAT(out, AllOf(HasSubstr("nvidiactl"), HasSubstr("fake-cuda"), HasSubstr("NV=void")));
  int gpus = 0;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    gpus += line == "nvidia0" || line == "nvidia1";
  }
  EXPECT_EQ(gpus, 1) << out;  // its own device node, not the other GPU's
  // Its own node passes the device cgroup: opening it reaches the (absent) driver.
  if (DeviceCgroupV1()) {
    EXPECT_THAT(Logs(job, /*err=*/true), HasSubstr("No such device or address")) << out;
  }

  // Without a spec for its device, a GPU container fails and says how to make one.
  std::filesystem::remove(dir + "/cdi/nvidia.yaml");
  const uint64_t bare = gpu_job("no-spec");
  ASSERT_TRUE(WaitState(bare, "FAILED", absl::Seconds(90))) << Task(bare).dump();
  EXPECT_THAT(Message(bare),
              AllOf(HasSubstr("no CDI spec names it"), HasSubstr("nvidia-ctk cdi generate")))
      << Task(bare).dump();
}

// A bare task is fenced by the device cgroup (cgroup v1's devices controller): it opens its own
// GPU's node (the open reaches the absent driver: ENXIO) and is refused the other GPU's
// (EPERM), though the node's mode lets anyone open it.
TEST_F(ContainerE2E, ABareGpuTaskMayOpenOnlyItsOwnGpusNode) {
  if (!DeviceCgroupV1()) GTEST_SKIP() << "needs cgroup v1's devices controller";
  const FakeGpus fake;
  const std::string& dir = fake.dir;
  ASSERT_NO_FATAL_FAILURE(MakeFakeGpus(dir));
  ASSERT_NO_FATAL_FAILURE(
      StartCluster({"--cdi-dir", dir + "/cdi"},
                   {"PATH=" + dir + "/bin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}));
  ASSERT_EQ(cluster_->Cli({"pool", "create", "/g", "-f", cluster_->WriteFile("gpu.yaml", kGpuPool)})
                .exit_code,
            0);
  const uint64_t job = cluster_->CreateJob("/g", absl::StrCat(R"(name: fenced
instances: 1
task:
  command: "for n in 0 1; do cat )",
                                                              dir, R"(/dev/nvidia$n; done; true"
  resources: {cpu: 0.2, memory: 64Mi, gpu: 1}
)"));
  ASSERT_TRUE(WaitState(job, "SUCCEEDED", absl::Seconds(60))) << Task(job).dump();
  const Json task = Task(job)["task"];
  const std::string own = task.contains("gpu_devices") ? task["gpu_devices"][0].dump() : "?";
  const std::string err = Logs(job, /*err=*/true);
  int refused = 0, reached = 0;
  for (absl::string_view line : absl::StrSplit(err, '\n')) {
    refused += absl::StrContains(line, "Operation not permitted");
    reached += absl::StrContains(line, "No such device or address");
  }
  EXPECT_EQ(refused, 1) << err << task.dump();
  EXPECT_EQ(reached, 1) << err << task.dump();
}

}  // namespace
}  // namespace paceline::e2e
