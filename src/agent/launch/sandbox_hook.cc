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
  return absl::StrCat(work_dir, "/sandboxes/", run.task.job.value(), "/", run.task.instance, "/",
                      run.run);
}

std::string SandboxHook::RunStatePath(const std::string& work_dir, const RunId& run) {
  return absl::StrCat(work_dir, "/runs/", RunKey(run));
}

std::string SandboxHook::StatusPath(const std::string& work_dir, const RunId& run) {
  return absl::StrCat(RunStatePath(work_dir, run), wrapper::kStatusSuffix);
}

absl::Status SandboxHook::Prepare(RunContext& ctx) {
  const RunId& run = ctx.run();
  std::string job_dir = absl::StrCat(work_dir_, "/sandboxes/", run.task.job.value());
  std::string instance_dir = absl::StrCat(job_dir, "/", run.task.instance);
  struct stat st;
  if (::stat(instance_dir.c_str(), &st) != 0) {
    RETURN_IF_ERROR(MakeDirs(instance_dir, 0711));
    ::chmod(job_dir.c_str(), 0711);  // whatever the umask
    ::chmod(instance_dir.c_str(), 0711);
  }
  ctx.sandbox = SandboxPath(work_dir_, run);
  ctx.run_state = RunStatePath(work_dir_, run);
  if (::mkdir(ctx.sandbox.c_str(), 0700) != 0) {
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
