#include "agent/launch/identity_hook.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "agent/file_util.h"
#include "common/atomic_file.h"
#include "common/status.h"

namespace paceline::agent {
namespace {

std::string Dir(const std::string& sandbox) { return absl::StrCat(sandbox, "/identity"); }

absl::Status GiveTo(const std::string& path, int uid, int gid) {
  if (uid < 0) return absl::OkStatus();
  if (::chown(path.c_str(), static_cast<uid_t>(uid), static_cast<gid_t>(gid)) != 0) {
    return ErrnoStatus(errno, absl::StrCat("chown ", path));
  }
  return absl::OkStatus();
}

// Writes `data` to `path` whole (common/atomic_file.h), given to uid/gid before it appears there
// (uid < 0: kept the agent's). The directory is the task user's: the temporary file is made
// afresh, never through a link the task left under its name. Not synced: a token is worth
// nothing once the host has crashed, and the master renews it.
absl::Status Put(const std::string& path, const std::string& data, mode_t mode, int uid, int gid) {
  using Options = AtomicWriteOptions;
  Options options{.mode = mode,
                  .temp_suffix = ".new",
                  .sync = Options::Sync::kNone,
                  .dir_sync = Options::DirSync::kNone};
  if (uid >= 0) options.owner = Options::Owner{static_cast<uid_t>(uid), static_cast<gid_t>(gid)};
  return WriteFileAtomically(path, data, options, ErrnoStatus);
}

}  // namespace

std::string IdentityHook::TokenPath(const std::string& sandbox) {
  return absl::StrCat(Dir(sandbox), "/token");
}

absl::Status IdentityHook::Prepare(RunContext& ctx) {
  const std::string& token = ctx.request.task_token;
  if (token.empty()) return absl::OkStatus();
  const std::string dir = Dir(ctx.sandbox);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, absl::StrCat("mkdir ", dir));
  }
  absl::Status s = GiveTo(dir, ctx.user.uid, ctx.user.gid);
  if (s.ok()) s = Put(TokenPath(ctx.sandbox), token, 0400, ctx.user.uid, ctx.user.gid);
  if (s.ok() && !ca_pem_.empty()) {
    s = Put(absl::StrCat(dir, "/ca.pem"), ca_pem_, 0444, ctx.user.uid, ctx.user.gid);
  }
  if (!s.ok()) {
    RemoveTree(dir).IgnoreError();  // this hook is not "prepared": undo it here
    return s;
  }
  ctx.env["PACELINE_TASK_TOKEN_FILE"] = TokenPath(ctx.sandbox);
  if (!master_addr_.empty()) {
    ctx.env["PACELINE_ADDR"] = master_addr_;
    ctx.env["PACELINE_MASTER"] = master_addr_;
  }
  if (!ca_pem_.empty()) ctx.env["PACELINE_CA"] = absl::StrCat(dir, "/ca.pem");
  return absl::OkStatus();
}

void IdentityHook::Cleanup(RunContext& ctx, CleanupKind /*kind*/) {
  if (ctx.sandbox.empty() || !ctx.env.contains("PACELINE_TASK_TOKEN_FILE")) return;
  RemoveTree(Dir(ctx.sandbox)).IgnoreError();
}

absl::Status IdentityHook::ReplaceToken(const std::string& sandbox, const std::string& token) {
  const std::string path = TokenPath(sandbox);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat(path, ": no token file (the run has no identity)"));
  }
  const bool root = ::geteuid() == 0;
  return Put(path, token, 0400, root ? static_cast<int>(st.st_uid) : -1,
             root ? static_cast<int>(st.st_gid) : -1);
}

}  // namespace paceline::agent
