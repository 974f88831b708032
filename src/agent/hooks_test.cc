// Unit tests of the file-system hooks (user, sandbox, volume, gang) and the lifecycle wiring.

#include <sys/stat.h>
#include <unistd.h>

#include "agent/file_util.h"
#include "agent/isolation/task_user_hook.h"
#include "agent/launch/gang_hook.h"
#include "agent/launch/sandbox_hook.h"
#include "agent/launch/volume_hook.h"
#include "agent/task_lifecycle.h"
#include "agent/testing/agent_test_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace paceline::agent {
namespace {

using testing::MakeRun;
using testing::ReadAll;
using testing::TempDir;

RunContext Ctx(const RunId& run) {
  RunContext c;
  c.request.run = run;
  c.key = RunKey(run);
  return c;
}

mode_t ModeOf(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST(TaskUserHookTest, PicksTheSpecUserOrTheDefault) {
  if (::geteuid() != 0) GTEST_SKIP() << "switching users needs root";
  TaskUserHook hook("nobody", /*switch_users=*/true, /*allow_root=*/false);
  RunContext c = Ctx(MakeRun(1, 0, 1));
  ASSERT_TRUE(hook.Prepare(c).ok());
  EXPECT_EQ(c.user.name, "nobody");
  EXPECT_GT(c.user.uid, 0);
  c.request.spec.user = "root";
  EXPECT_EQ(hook.Prepare(c).code(), absl::StatusCode::kPermissionDenied);
  c.request.spec.user = "no-such-user-xyz";
  EXPECT_EQ(hook.Prepare(c).code(), absl::StatusCode::kNotFound);
}

TEST(TaskUserHookTest, WithoutRootRunsAsTheAgentAndRefusesOthers) {
  TaskUserHook hook("nobody", /*switch_users=*/false, false);
  RunContext c = Ctx(MakeRun(1, 0, 1));
  ASSERT_TRUE(hook.Prepare(c).ok());
  EXPECT_EQ(c.user.uid, -1);
  c.request.spec.user = "somebody-else";
  absl::Status s = hook.Prepare(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("cannot switch users"), std::string::npos);
}

TEST(SandboxHookTest, CreatesAPrivateSandboxPerRun) {
  TempDir dir;
  SandboxHook hook(dir.path());
  RunContext c = Ctx(MakeRun(7, 2, 3));
  if (::geteuid() == 0) c.user = TaskUserHook::Lookup("nobody").value();
  ASSERT_TRUE(hook.Prepare(c).ok());
  EXPECT_EQ(c.sandbox, dir.path() + "/sandboxes/7_2_3");
  EXPECT_EQ(c.run_state, dir.path() + "/runs/7_2_3");
  EXPECT_EQ(c.env.at("PACELINE_SANDBOX"), c.sandbox);
  EXPECT_EQ(ModeOf(c.sandbox), 0700u);
  EXPECT_EQ(ModeOf(dir.path() + "/sandboxes"), 0711u);
  if (c.user.uid >= 0) {
    struct stat st;
    ::stat(c.sandbox.c_str(), &st);
    EXPECT_EQ(static_cast<int>(st.st_uid), c.user.uid);
  }
  RunContext again = Ctx(MakeRun(7, 2, 3));
  EXPECT_EQ(hook.Prepare(again).code(), absl::StatusCode::kAlreadyExists);
  hook.Cleanup(c, CleanupKind::kFinished);
  EXPECT_TRUE(PathExists(c.sandbox));  // kept for logs
  hook.Cleanup(c, CleanupKind::kRollback);
  EXPECT_FALSE(PathExists(c.sandbox));
}

TEST(VolumeHookTest, OneDirectoryPerInstanceKeptAcrossRuns) {
  TempDir dir;
  VolumeHook hook(dir.path());
  RunContext c = Ctx(MakeRun(7, 2, 1));
  ASSERT_TRUE(hook.Prepare(c).ok());
  EXPECT_TRUE(c.volume.empty());  // no volume in the spec
  c.request.spec.volume = VolumeSpec{1 << 20};
  ASSERT_TRUE(hook.Prepare(c).ok());
  EXPECT_EQ(c.volume, dir.path() + "/volumes/7/2");
  EXPECT_EQ(c.env.at("PACELINE_VOLUME"), c.volume);
  EXPECT_EQ(ModeOf(c.volume), 0700u);
  ASSERT_TRUE(WriteFile(c.volume + "/data", "kept").ok());
  RunContext next = Ctx(MakeRun(7, 2, 2));
  next.request.spec.volume = VolumeSpec{1 << 20};
  ASSERT_TRUE(hook.Prepare(next).ok());
  EXPECT_EQ(next.volume, c.volume);
  EXPECT_EQ(testing::ReadAll(next.volume + "/data"), "kept");
}

TEST(GangHookTest, WritesThePeerListAsJson) {
  TempDir dir;
  RunContext c = Ctx(MakeRun(7, 1, 1));
  c.sandbox = dir.path();
  GangHook hook;
  ASSERT_TRUE(hook.Prepare(c).ok());
  EXPECT_FALSE(c.env.contains("PACELINE_PEERS_FILE"));
  c.request.peers =
      std::map<uint32_t, GangPeer>{{0, {"h0", {{"rpc", 31000}}}}, {1, {"h1", {{"rpc", 31001}}}}};
  ASSERT_TRUE(hook.Prepare(c).ok());
  std::string path = c.env.at("PACELINE_PEERS_FILE");
  EXPECT_EQ(path, dir.path() + "/peers.json");
  nlohmann::json j = nlohmann::json::parse(testing::ReadAll(path));
  EXPECT_EQ(j["1"]["host"], "h1");
  EXPECT_EQ(j["0"]["ports"]["rpc"], 31000);
}

TEST(TaskLifecycleTest, EnvironmentLayersAndAgentVariablesWin) {
  AgentConfig config;
  config.base_env = {{"PATH", "/bin"}, {"LANG", "C"}};
  TaskLifecycle lc(config);
  RunContext c = Ctx(MakeRun(12, 3, 4));
  c.sandbox = "/sb";
  c.user.name = "nobody";
  c.request.spec.env = {{"LANG", "en"}, {"PACELINE_JOB_ID", "spoofed"}, {"A", "b=c"}};
  c.env = {{"PACELINE_SANDBOX", "/sb"}};
  std::vector<std::string> env = lc.BuildEnv(c);
  auto has = [&](const std::string& kv) {
    return std::find(env.begin(), env.end(), kv) != env.end();
  };
  EXPECT_TRUE(has("PATH=/bin"));
  EXPECT_TRUE(has("LANG=en"));
  EXPECT_TRUE(has("A=b=c"));
  EXPECT_TRUE(has("HOME=/sb"));
  EXPECT_TRUE(has("USER=nobody"));
  EXPECT_TRUE(has("PACELINE_JOB_ID=12"));
  EXPECT_TRUE(has("PACELINE_INSTANCE_ID=3"));
  EXPECT_TRUE(has("PACELINE_RUN_ID=12/3/4"));
  EXPECT_TRUE(has("PACELINE_TASK_ID=12/3"));
  EXPECT_TRUE(has("PACELINE_SANDBOX=/sb"));
}

// A hook that fails, to check that the prepared hooks are rolled back in reverse.
class RecordingHook final : public TaskHook {
 public:
  RecordingHook(std::string name, bool fail, std::vector<std::string>* log)
      : name_(std::move(name)), fail_(fail), log_(log) {}
  absl::string_view name() const override { return name_; }
  absl::Status Prepare(RunContext&) override {
    log_->push_back("prepare " + name_);
    return fail_ ? absl::ResourceExhaustedError("full") : absl::OkStatus();
  }
  void Cleanup(RunContext&, CleanupKind kind) override {
    log_->push_back((kind == CleanupKind::kRollback ? "rollback " : "cleanup ") + name_);
  }

 private:
  std::string name_;
  bool fail_;
  std::vector<std::string>* log_;
};

TEST(TaskLifecycleTest, FailedPrepareRollsBackInReverse) {
  AgentConfig config;
  TaskLifecycle lc(config);
  std::vector<std::string> log;
  lc.AddHook(std::make_unique<RecordingHook>("a", false, &log));
  lc.AddHook(std::make_unique<RecordingHook>("b", false, &log));
  lc.AddHook(std::make_unique<RecordingHook>("c", true, &log));
  RunContext c = Ctx(MakeRun(1, 0, 1));
  absl::Status s = lc.Prepare(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("(c)"), std::string::npos) << s;
  EXPECT_EQ(log, (std::vector<std::string>{"prepare a", "prepare b", "prepare c", "rollback b",
                                           "rollback a"}));
}

}  // namespace
}  // namespace paceline::agent
