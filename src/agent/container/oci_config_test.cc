// The OCI config of a container run (oci_config.h): what runs, as whom, with which mounts.
#include "agent/container/oci_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "nlohmann/json.hpp"

namespace paceline::agent {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using Json = nlohmann::json;

class OciConfigTest : public ::testing::Test {
 protected:
  OciConfigTest() {
    ctx_.request.spec.container = ContainerSpec{.image = "r.io/app:1"};
    ctx_.sandbox = "/w/sandboxes/1/0/1";
    ctx_.user = TaskUser{"nobody", 65534, 65534, {65534}, ""};
    image_.entrypoint = {"/entry"};
    image_.cmd = {"serve", "--port=80"};
    image_.env = {"PATH=/usr/local/bin:/bin", "LANG=C.UTF-8"};
  }
  Json Build(const CdiEdits* devices = nullptr) {
    OciConfigInput in{.ctx = &ctx_,
                      .image = &image_,
                      .rootfs = "/w/containers/1_0_1/rootfs",
                      .base_env = {{"PATH", "/usr/bin:/bin"}},
                      .env = {"PATH=/usr/bin:/bin", "MODE=fast", "PACELINE_SANDBOX=/w/s"},
                      .hostname = "host1",
                      .init = "/usr/lib/paceline/paceline-task-wrapper",
                      .devices = devices};
    absl::StatusOr<std::string> text = BuildOciConfig(in);
    EXPECT_TRUE(text.ok()) << text.status();
    return text.ok() ? Json::parse(*text) : Json();
  }
  std::vector<std::string> Args(const Json& j) {
    return j["process"]["args"].get<std::vector<std::string>>();
  }
  RunContext ctx_;
  image::ImageConfig image_;
};

TEST_F(OciConfigTest, TheImagesEntrypointAndCmdRunUnderTheInit) {
  EXPECT_THAT(Args(Build()),
              ElementsAre("/.paceline/init", "--mode=init", "--", "/entry", "serve", "--port=80"));
  ctx_.request.spec.container->args = std::vector<std::string>{"check"};
  EXPECT_THAT(Args(Build()),
              ElementsAre("/.paceline/init", "--mode=init", "--", "/entry", "check"));
  // An entrypoint of the spec drops the image's Cmd, as in Docker.
  ctx_.request.spec.container->args.reset();
  ctx_.request.spec.container->entrypoint = std::vector<std::string>{"/bin/other"};
  EXPECT_THAT(Args(Build()), ElementsAre("/.paceline/init", "--mode=init", "--", "/bin/other"));
  ctx_.request.spec.command = "echo hi";
  EXPECT_THAT(Args(Build()),
              ElementsAre("/.paceline/init", "--mode=init", "--", "/bin/sh", "-c", "echo hi"));
}

TEST_F(OciConfigTest, NothingToRunIsAnError) {
  image_.entrypoint.clear();
  image_.cmd.clear();
  OciConfigInput in{.ctx = &ctx_, .image = &image_, .rootfs = "/r"};
  EXPECT_EQ(BuildOciConfig(in).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(OciConfigTest, TheImagesPathWinsOverTheHostDefaultButTheTasksVariablesWin) {
  std::vector<std::string> env = Build()["process"]["env"].get<std::vector<std::string>>();
  EXPECT_THAT(env, Contains("PATH=/usr/local/bin:/bin"));
  EXPECT_THAT(env, Contains("LANG=C.UTF-8"));
  EXPECT_THAT(env, Contains("MODE=fast"));
  EXPECT_THAT(env, Contains("PACELINE_SANDBOX=/w/s"));
}

TEST_F(OciConfigTest, UserCwdRootAndNamespaces) {
  ctx_.request.spec.container->read_only_rootfs = true;
  Json j = Build();
  EXPECT_EQ(j["process"]["user"]["uid"], 65534);
  EXPECT_EQ(j["process"]["user"]["gid"], 65534);
  EXPECT_EQ(j["process"]["cwd"], ctx_.sandbox);
  EXPECT_EQ(j["process"]["noNewPrivileges"], true);
  EXPECT_EQ(j["root"]["readonly"], true);
  EXPECT_EQ(j["root"]["path"], "/w/containers/1_0_1/rootfs");
  std::vector<std::string> ns;
  for (const Json& n : j["linux"]["namespaces"]) ns.push_back(n["type"]);
  EXPECT_THAT(ns, ElementsAre("pid", "ipc", "uts", "mount"));
  EXPECT_FALSE(j["linux"].contains("resources"));  // the task's cgroup holds the limits
  ctx_.request.spec.container->network = ContainerNetwork::kNone;
  ns.clear();
  Json none = Build();
  for (const Json& n : none["linux"]["namespaces"]) ns.push_back(n["type"]);
  EXPECT_THAT(ns, Contains("network"));
}

TEST_F(OciConfigTest, MountsTheSandboxSecretsVolumeAndTheSpecsMounts) {
  ctx_.secrets_dir = "/w/sandboxes/1/0/1/secrets";
  ctx_.volume = "/w/volumes/1/0";
  ctx_.request.spec.container->mounts = {{"tmpfs", "/scratch", false},
                                         {"sandbox/out", "/out", true},
                                         {"volume", "/data", false},
                                         {"/srv/models", "/models", true}};
  std::map<std::string, Json> by_target;
  Json j = Build();
  for (const Json& m : j["mounts"]) by_target[m["destination"]] = m;
  EXPECT_EQ(by_target["/.paceline/init"]["source"], "/usr/lib/paceline/paceline-task-wrapper");
  EXPECT_EQ(by_target[ctx_.sandbox]["source"], ctx_.sandbox);
  EXPECT_THAT(by_target[ctx_.secrets_dir]["options"].get<std::vector<std::string>>(),
              Contains("ro"));
  EXPECT_EQ(by_target[ctx_.volume]["source"], ctx_.volume);
  EXPECT_EQ(by_target["/scratch"]["type"], "tmpfs");
  EXPECT_EQ(by_target["/out"]["source"], "/w/sandboxes/1/0/1/out");
  EXPECT_THAT(by_target["/out"]["options"].get<std::vector<std::string>>(), Contains("ro"));
  EXPECT_EQ(by_target["/data"]["source"], ctx_.volume);
  EXPECT_EQ(by_target["/models"]["source"], "/srv/models");
  EXPECT_TRUE(by_target.contains("/etc/resolv.conf"));  // host network
}

// A task's GPUs come as the CDI edits of their devices (cdi.h): nodes, mounts after the
// others, hooks by their point, env over the task's, groups added to the user's.
TEST_F(OciConfigTest, TheCdiEditsOfTheTasksDevicesAreInTheConfig) {
  EXPECT_FALSE(Build()["linux"].contains("devices"));
  EXPECT_FALSE(Build().contains("hooks"));
  CdiEdits e;
  e.env = {"NVIDIA_VISIBLE_DEVICES=void", "MODE=cdi"};
  e.device_nodes = {CdiDeviceNode{
      .path = "/dev/nvidia0", .type = "c", .major = 195, .minor = 0, .file_mode = 0666}};
  e.mounts = {CdiMount{.host_path = "/usr/lib/libcuda.so.1",
                       .container_path = "/usr/lib/libcuda.so.1",
                       .options = {"ro", "nosuid", "nodev", "bind"}}};
  e.hooks = {CdiHook{.hook_name = "createContainer",
                     .path = "/usr/bin/nvidia-ctk",
                     .args = {"nvidia-ctk", "hook", "update-ldcache"}}};
  e.additional_gids = {44};
  Json j = Build(&e);
  ASSERT_EQ(j["linux"]["devices"].size(), 1u);
  EXPECT_EQ(j["linux"]["devices"][0], Json({{"path", "/dev/nvidia0"},
                                            {"type", "c"},
                                            {"major", 195},
                                            {"minor", 0},
                                            {"fileMode", 0666}}));
  EXPECT_EQ(j["mounts"].back()["destination"], "/usr/lib/libcuda.so.1");
  EXPECT_EQ(j["mounts"].back()["type"], "bind");
  EXPECT_EQ(j["hooks"]["createContainer"][0]["path"], "/usr/bin/nvidia-ctk");
  std::vector<std::string> env = j["process"]["env"].get<std::vector<std::string>>();
  EXPECT_THAT(env, Contains("NVIDIA_VISIBLE_DEVICES=void"));
  EXPECT_THAT(env, Contains("MODE=cdi"));
  EXPECT_THAT(j["process"]["user"]["additionalGids"].get<std::vector<int64_t>>(),
              ElementsAre(65534, 44));
}

}  // namespace
}  // namespace paceline::agent
