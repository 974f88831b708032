#include "agent/exec/exec_command.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace paceline::agent {
namespace {

// argv[0] looked up in PATH, the rest passed as they are: no shell parsing of the arguments.
std::vector<std::string> ThroughPath(const std::vector<std::string>& argv) {
  std::vector<std::string> out = {"/bin/sh", "-c", "exec \"$0\" \"$@\""};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

bool HasVar(const std::vector<std::string>& env, absl::string_view name) {
  for (const std::string& kv : env) {
    if (absl::StartsWith(kv, name) && kv.size() > name.size() && kv[name.size()] == '=') {
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<ExecCommand> ExecCommandFor(const RunContext& ctx, const std::string& wrapper_path,
                                           const OciRuntime* oci,
                                           const std::vector<std::string>& argv, bool tty,
                                           const std::string& pid_file) {
  if (argv.empty() || argv[0].empty()) {
    return absl::InvalidArgumentError("argv: expected the command to run, e.g. [\"sh\"]");
  }
  ExecCommand c;
  c.env = ctx.TaskEnv();
  if (tty && !HasVar(c.env, "TERM")) c.env.push_back("TERM=xterm");
  c.user = ctx.user;
  WrapperArgs& w = c.wrapper;
  w.wrapper = wrapper_path;
  w.exec_mode = true;
  w.cwd = ctx.sandbox;
  w.user = ctx.user;
  w.cgroup_procs = ctx.cgroup_procs;
  if (ctx.container_id.empty()) {
    w.argv = ThroughPath(argv);
    return c;
  }
  if (oci == nullptr || oci->path.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "run ", ctx.key, " runs in a container, and this host has no OCI runtime to exec with"));
  }
  // crun starts as root and switches to the task's user inside the container.
  w.user = TaskUser{};
  w.unmounts = oci->hide;
  w.argv = {oci->path, absl::StrCat("--root=", oci->root), "--cgroup-manager=disabled", "exec",
            absl::StrCat("--user=", ctx.user.uid < 0 ? 0 : ctx.user.uid, ":",
                         ctx.user.gid < 0 ? 0 : ctx.user.gid)};
  for (const std::string& kv : c.env) w.argv.push_back(absl::StrCat("--env=", kv));
  c.pid_file = pid_file;
  w.argv.push_back(absl::StrCat("--pid-file=", pid_file));
  w.argv.push_back(ctx.container_id);
  for (std::string& a : ThroughPath(argv)) w.argv.push_back(std::move(a));
  return c;
}

}  // namespace paceline::agent
