#pragma once
// ExecCommand: how a command of `paceline task exec` runs inside a live run's environment. It is
// the exec-mode wrapper (agent/launch/wrapper_launcher.h) given the run's context: the task's
// cgroup (joined before exec), its user, its sandbox as the working directory and the task's
// whole environment (the PACELINE_* variables, ports, peers and secret variables). A container
// run's command is `crun exec` into the container instead, as the task's user with the task's
// variables, in the container's namespaces; crun writes the command's pid to `pid_file` so that
// it can be killed (killing crun would leave it running).
//
// The argv is not parsed by a shell: it runs as `/bin/sh -c 'exec "$0" "$@"' ARGV...`, which only
// looks argv[0] up in the task's PATH.
//
// Thread-safety: a value type and a pure function.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/base/run_context.h"
#include "agent/container/container_hook.h"
#include "agent/launch/wrapper_launcher.h"

namespace paceline::agent {

struct ExecCommand {
  // exec_mode; `env` is left null: the process spawner points it at `env` below.
  WrapperArgs wrapper;
  std::vector<std::string> env;  // "K=V": the task's environment
  std::string pid_file;          // a container: where crun writes the command's pid
  TaskUser user;                 // who the command runs as (the terminal is made theirs)
};

// The command `argv` in run `ctx`'s environment. `oci` (may be null) runs container runs;
// `pid_file` is used for a container run only. INVALID_ARGUMENT for an empty argv;
// FAILED_PRECONDITION for a container run on a host without an OCI runtime.
absl::StatusOr<ExecCommand> ExecCommandFor(const RunContext& ctx, const std::string& wrapper_path,
                                           const OciRuntime* oci,
                                           const std::vector<std::string>& argv, bool tty,
                                           const std::string& pid_file);

}  // namespace paceline::agent
