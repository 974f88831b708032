#include "agent/launch/secrets_hook.h"

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "agent/file_util.h"
#include "common/status.h"

namespace paceline::agent {
namespace {

constexpr const char* kTmpfsOptions = "size=1m,mode=0700";

absl::Status GiveTo(const std::string& path, const TaskUser& user) {
  if (user.uid < 0) return absl::OkStatus();
  if (::chown(path.c_str(), static_cast<uid_t>(user.uid), static_cast<gid_t>(user.gid)) != 0) {
    return ErrnoStatus(errno, absl::StrCat("chown ", path, " to ", user.name));
  }
  return absl::OkStatus();
}

absl::Status WriteFiles(const RunContext& ctx) {
  RETURN_IF_ERROR(GiveTo(ctx.secrets_dir, ctx.user));
  for (const SecretRef& ref : ctx.request.spec.secrets) {
    if (ref.file.empty()) continue;
    std::string path = absl::StrCat(ctx.secrets_dir, "/", ref.file);
    RETURN_IF_ERROR(WriteFile(path, ctx.request.secret_values.at(ref.name), 0400));
    RETURN_IF_ERROR(GiveTo(path, ctx.user));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SecretsHook::Prepare(RunContext& ctx) {
  const std::vector<SecretRef>& refs = ctx.request.spec.secrets;
  if (refs.empty()) return absl::OkStatus();
  bool files = false;
  for (const SecretRef& ref : refs) {
    const std::string& value = ctx.request.secret_values.at(ref.name);
    if (!ref.env.empty()) {
      ctx.secret_env.push_back(absl::StrCat(ref.env, "=", value));
    } else {
      files = true;
    }
  }
  if (!files) return absl::OkStatus();
  ctx.secrets_dir = absl::StrCat(ctx.sandbox, "/secrets");
  if (::mkdir(ctx.secrets_dir.c_str(), 0700) != 0) {
    return ErrnoStatus(errno, absl::StrCat("mkdir ", ctx.secrets_dir));
  }
  ctx.secrets_tmpfs =
      ::geteuid() == 0 && ::mount("paceline-secrets", ctx.secrets_dir.c_str(), "tmpfs",
                                  MS_NOSUID | MS_NODEV | MS_NOEXEC, kTmpfsOptions) == 0;
  absl::Status s = WriteFiles(ctx);
  if (!s.ok()) {
    Cleanup(ctx, CleanupKind::kRollback);  // this hook is not "prepared": undo it here
    return s;
  }
  ctx.env["PACELINE_SECRETS"] = ctx.secrets_dir;
  return absl::OkStatus();
}

void SecretsHook::Cleanup(RunContext& ctx, CleanupKind /*kind*/) {
  ctx.secret_env.clear();
  if (ctx.secrets_dir.empty()) return;
  if (ctx.secrets_tmpfs) ::umount2(ctx.secrets_dir.c_str(), MNT_DETACH);
  RemoveTree(ctx.secrets_dir).IgnoreError();
}

}  // namespace paceline::agent
