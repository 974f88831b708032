#include "agent/exec/exec_command.h"

#include <sys/stat.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/file_util.h"

namespace paceline::agent {
namespace {

using Json = nlohmann::json;

// argv[0] looked up in PATH, the rest passed as they are: no shell parsing of the arguments.
std::vector<std::string> ThroughPath(const std::vector<std::string>& argv) {
  std::vector<std::string> out = {"/bin/sh", "-c", "exec \"$0\" \"$@\""};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

// A regular file that `user` may execute (by its mode bits; -1: the agent's own user).
bool ExecutableBy(const std::string& path, const TaskUser& user) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  if (user.uid < 0 || user.uid == 0) return (st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)) != 0;
  if (st.st_uid == static_cast<uid_t>(user.uid)) return (st.st_mode & S_IXUSR) != 0;
  const bool in_group =
      st.st_gid == static_cast<gid_t>(user.gid) ||
      std::find(user.groups.begin(), user.groups.end(), st.st_gid) != user.groups.end();
  if (in_group) return (st.st_mode & S_IXGRP) != 0;
  return (st.st_mode & S_IXOTH) != 0;
}

// argv[0] found in the PATH of `env` as the shell would find it, for `user` (an absolute path
// as it is); "" when it is not there, or names a relative path (the shell then says why it
// cannot run it, or finds it from the working directory).
std::string LookUp(const std::string& name, const std::vector<std::string>& env,
                   const TaskUser& user) {
  if (name[0] == '/') return ExecutableBy(name, user) ? name : "";
  if (name.find('/') != std::string::npos) return "";
  for (const std::string& kv : env) {
    if (!absl::StartsWith(kv, "PATH=")) continue;
    for (absl::string_view dir : absl::StrSplit(absl::string_view(kv).substr(5), ':')) {
      // An empty entry (the working directory) is left to the shell.
      if (dir.empty() || dir[0] != '/') return "";
      std::string path = absl::StrCat(dir, "/", name);
      if (ExecutableBy(path, user)) return path;
    }
    return "";
  }
  return "";
}

bool HasVar(const std::vector<std::string>& env, absl::string_view name) {
  for (const std::string& kv : env) {
    if (absl::StartsWith(kv, name) && kv.size() > name.size() && kv[name.size()] == '=') {
      return true;
    }
  }
  return false;
}

// The container's own process (the run's OCI config) running `argv` instead of its command.
absl::StatusOr<std::string> ContainerProcess(const RunContext& ctx,
                                             const std::vector<std::string>& argv, bool tty) {
  absl::StatusOr<std::string> config = ReadFile(ctx.oci_config);
  if (!config.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("run ", ctx.key, ": its container's OCI config ", ctx.oci_config,
                     " cannot be read to exec into it: ", config.status().message()));
  }
  Json j = Json::parse(*config, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.contains("process") || !j["process"].is_object()) {
    return absl::FailedPreconditionError(
        absl::StrCat("run ", ctx.key, ": its container's OCI config ", ctx.oci_config,
                     " has no process object to exec with"));
  }
  Json process = std::move(j["process"]);
  process["args"] = ThroughPath(argv);
  process["terminal"] = tty;
  if (tty && process.contains("env") && process["env"].is_array()) {
    std::vector<std::string> env = process["env"].get<std::vector<std::string>>();
    if (!HasVar(env, "TERM")) process["env"].push_back("TERM=xterm");
  }
  return process.dump();
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
    // Found in the task's PATH here, the command is exec'd by the wrapper itself (a process and
    // a shell's start less); otherwise a shell looks it up and says why it cannot run it.
    const std::string path = LookUp(argv[0], c.env, ctx.user);
    if (path.empty()) {
      w.argv = ThroughPath(argv);
    } else {
      w.argv = argv;
      w.argv[0] = path;
    }
    return c;
  }
  if (oci == nullptr || oci->path.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "run ", ctx.key, " runs in a container, and this host has no OCI runtime to exec with"));
  }
  absl::StatusOr<std::string> process = ContainerProcess(ctx, argv, tty);
  if (!process.ok()) return process.status();
  // PREFIX.pid names the session's other files.
  const std::string prefix(absl::StripSuffix(pid_file, ".pid"));
  c.pid_file = pid_file;
  c.process_json = *std::move(process);
  c.process_file = absl::StrCat(prefix, ".process.json");
  if (!ctx.secret_env.empty() && ctx.secrets_tmpfs && !ctx.secrets_dir.empty()) {
    const size_t slash = prefix.rfind('/');
    c.process_file = absl::StrCat(ctx.secrets_dir, "/.",
                                  slash == std::string::npos ? prefix : prefix.substr(slash + 1),
                                  ".process.json");
  }
  // crun starts as root and switches to the task's user inside the container; the terminal is
  // the container's, made by crun.
  c.user = TaskUser{};
  w.user = TaskUser{};
  w.unmounts = oci->hide;
  w.argv = {
      oci->path, absl::StrCat("--root=", oci->root),         "--cgroup-manager=disabled",
      "exec",    absl::StrCat("--process=", c.process_file), absl::StrCat("--pid-file=", pid_file)};
  if (tty) {
    c.console_socket = absl::StrCat(prefix, ".console");
    w.argv.push_back("--tty");
    w.argv.push_back(absl::StrCat("--console-socket=", c.console_socket));
  }
  w.argv.push_back(ctx.container_id);
  return c;
}

}  // namespace paceline::agent
