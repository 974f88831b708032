#include "agent/launch/sandbox_hook.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "agent/file_util.h"
#include "agent/launch/wrapper_protocol.h"
#include "common/status.h"

namespace paceline::agent {

std::string SandboxHook::SandboxPath(const std::string& work_dir, const RunId& run) {
  return absl::StrCat(work_dir, "/sandboxes/", RunKey(run));
}

std::string SandboxHook::FindSandbox(const std::string& work_dir, const RunId& run) {
  std::string flat = SandboxPath(work_dir, run);
  if (PathExists(flat)) return flat;
  std::string nested = absl::StrCat(work_dir, "/sandboxes/", run.task.job.value(), "/",
                                    run.task.instance, "/", run.run);
  return PathExists(nested) ? nested : "";
}

std::string SandboxHook::RunStatePath(const std::string& work_dir, const RunId& run) {
  return absl::StrCat(work_dir, "/runs/", RunKey(run));
}

std::string SandboxHook::StatusPath(const std::string& work_dir, const RunId& run) {
  return absl::StrCat(RunStatePath(work_dir, run), wrapper::kStatusSuffix);
}

absl::Status SandboxHook::Prepare(RunContext& ctx) {
  const RunId& run = ctx.run();
  ctx.sandbox = SandboxPath(work_dir_, run);
  ctx.run_state = RunStatePath(work_dir_, run);
  int made = ::mkdir(ctx.sandbox.c_str(), 0700);
  if (made != 0 && errno == ENOENT) {  // no sandboxes/ yet (the runtime makes it at start)
    std::string root = absl::StrCat(work_dir_, "/sandboxes");
    RETURN_IF_ERROR(MakeDirs(root, 0711));
    ::chmod(root.c_str(), 0711);  // whatever the umask
    made = ::mkdir(ctx.sandbox.c_str(), 0700);
  }
  if (made != 0) {
    if (errno == EEXIST) {
      return absl::AlreadyExistsError(absl::StrCat("run ", run.ToString(), " was launched before"));
    }
    return ErrnoStatus(errno, absl::StrCat("mkdir ", ctx.sandbox));
  }
  if (ctx.user.uid >= 0 && ::chown(ctx.sandbox.c_str(), static_cast<uid_t>(ctx.user.uid),
                                   static_cast<gid_t>(ctx.user.gid)) != 0) {
    return ErrnoStatus(errno, absl::StrCat("chown ", ctx.sandbox, " to ", ctx.user.name));
  }
  ctx.env["PACELINE_SANDBOX"] = ctx.sandbox;
  return absl::OkStatus();
}

void SandboxHook::Cleanup(RunContext& ctx, CleanupKind kind) {
  if (kind != CleanupKind::kRollback) return;  // kept for logs; the retention GC removes it
  if (!ctx.sandbox.empty()) RemoveTree(ctx.sandbox).IgnoreError();
  if (!ctx.run_state.empty()) {
    ::unlink(absl::StrCat(ctx.run_state, wrapper::kStatusSuffix).c_str());
  }
}

}  // namespace paceline::agent
