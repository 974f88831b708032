// The identity hook: the token file and the CA given to the task's user, renewed whole with the
// same owner, never written through a link the task left in its directory, gone at cleanup.

#include "agent/launch/identity_hook.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "agent/file_util.h"
#include "agent/testing/agent_test_util.h"
#include "gtest/gtest.h"

namespace paceline::agent {
namespace {

namespace fs = std::filesystem;
using testing::MakeRun;
using testing::ReadAll;
using testing::TempDir;

struct stat StatOf(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st;
}

class IdentityHookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_.request.run = MakeRun(7, 0, 1);
    ctx_.request.task_token = "token-1";
    ctx_.sandbox = dir_.Sub("sandbox");
    ASSERT_TRUE(MakeDirs(ctx_.sandbox, 0755).ok());
    // As root (CI) the task runs as another user; otherwise as this one.
    if (::geteuid() == 0) {
      ctx_.user.uid = 65534;
      ctx_.user.gid = 65534;
    }
  }
  uid_t Uid() const { return ctx_.user.uid < 0 ? ::geteuid() : ctx_.user.uid; }

  TempDir dir_;
  RunContext ctx_;
  IdentityHook hook_{"10.0.0.1:5390", "CA PEM"};
};

TEST_F(IdentityHookTest, GivesTheTokenAndTheCaToTheTaskUser) {
  ASSERT_TRUE(hook_.Prepare(ctx_).ok());
  const std::string token = IdentityHook::TokenPath(ctx_.sandbox);
  EXPECT_EQ(ctx_.env["PACELINE_TASK_TOKEN_FILE"], token);
  EXPECT_EQ(ctx_.env["PACELINE_ADDR"], "10.0.0.1:5390");
  EXPECT_EQ(ReadAll(token), "token-1");
  EXPECT_EQ(StatOf(token).st_mode & 07777, 0400u);
  EXPECT_EQ(StatOf(token).st_uid, Uid());
  const std::string ca = ctx_.env["PACELINE_CA"];
  EXPECT_EQ(ReadAll(ca), "CA PEM");
  EXPECT_EQ(StatOf(ca).st_mode & 07777, 0444u);
  EXPECT_EQ(StatOf(ca).st_uid, Uid());
  hook_.Cleanup(ctx_, CleanupKind::kFinished);
  EXPECT_FALSE(fs::exists(fs::path(token).parent_path()));
}

TEST_F(IdentityHookTest, ARenewalReplacesTheTokenWholeWithItsOwnerAndFollowsNoLink) {
  ASSERT_TRUE(hook_.Prepare(ctx_).ok());
  const std::string token = IdentityHook::TokenPath(ctx_.sandbox);
  // The task (which owns the directory) leaves a link where the renewal writes first.
  const std::string victim = dir_.Sub("victim");
  ASSERT_TRUE(WriteFile(victim, "keep", 0644).ok());
  fs::create_symlink(victim, token + ".new");
  ASSERT_TRUE(IdentityHook::ReplaceToken(ctx_.sandbox, "token-2").ok());
  EXPECT_EQ(ReadAll(token), "token-2");
  EXPECT_EQ(ReadAll(victim), "keep");
  EXPECT_TRUE(S_ISREG(StatOf(token).st_mode));
  EXPECT_EQ(StatOf(token).st_mode & 07777, 0400u);
  EXPECT_EQ(StatOf(token).st_uid, Uid());
  EXPECT_FALSE(fs::exists(fs::symlink_status(token + ".new")));
}

TEST_F(IdentityHookTest, ARunWithoutATokenHasNoFileToRenew) {
  ctx_.request.task_token.clear();
  ASSERT_TRUE(hook_.Prepare(ctx_).ok());
  EXPECT_FALSE(ctx_.env.contains("PACELINE_TASK_TOKEN_FILE"));
  absl::Status s = IdentityHook::ReplaceToken(ctx_.sandbox, "token-2");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_NE(s.message().find("no token file"), std::string::npos) << s;
}

}  // namespace
}  // namespace paceline::agent
