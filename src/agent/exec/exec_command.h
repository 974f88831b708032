#pragma once
// ExecCommand: how a command of `paceline task exec` runs inside a live run's environment. It is
// the exec-mode wrapper (agent/launch/wrapper_launcher.h) given the run's context: the task's
// cgroup (joined before exec), its user, its sandbox as the working directory and the task's
// whole environment (the PACELINE_* variables, ports, peers and secret variables). A container
// run's command is `crun exec --process=FILE` into the container instead: FILE is the
// container's own process (its user, groups, variables, working directory, capabilities and
// no-new-privileges, read from the run's OCI config) with the command as its args, so that it
// runs as the task does, in the container's namespaces; crun writes the command's pid to
// `pid_file` so that it can be killed (killing crun would leave it running). With a terminal,
// crun makes it inside the container (in the container's /dev/pts, with the caller's size) and
// hands its master side over `console_socket` (exec_process.h receives it).
//
// The argv is not parsed by a shell. A host run's argv[0] is looked up in the task's PATH here
// (the first regular file there that the task's user may execute, by its mode bits; an
// absolute path as it is) and the wrapper execs it; one not found so, and a container's, runs as
// `/bin/sh -c 'exec "$0" "$@"' ARGV...`, which only looks argv[0] up in the task's PATH (and
// says why it cannot run it: 127, not found; 126, not executable).
//
// Thread-safety: a value type, and a function that only reads the run's OCI config and looks
// the command up in the task's PATH.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/base/run_context.h"
#include "agent/container/container_hook.h"
#include "agent/launch/wrapper_launcher.h"

namespace paceline::agent {

struct TerminalSize {
  uint16_t rows = 24;
  uint16_t cols = 80;
};

struct ExecCommand {
  // exec_mode; `env` is left null: the process spawner points it at `env` below.
  WrapperArgs wrapper;
  std::vector<std::string> env;  // "K=V": the task's environment
  std::string pid_file;          // a container: where crun writes the command's pid
  TaskUser user;                 // who the command runs as (the terminal is made theirs)
  // A container: the process crun execs (written 0600 by ExecProcess::Start, with a terminal's
  // first size, and removed at the end; in the run's secrets tmpfs when it holds secret
  // variables).
  std::string process_file;
  std::string process_json;
  // A container with a terminal: where crun connects to hand the terminal over.
  std::string console_socket;
};

// The command `argv` in run `ctx`'s environment. `oci` (may be null) runs container runs;
// `pid_file` (PREFIX.pid) is used for a container run only, and names its other files
// (PREFIX.process.json, PREFIX.console). INVALID_ARGUMENT for an empty argv; FAILED_PRECONDITION
// for a container run on a host without an OCI runtime, or whose OCI config cannot be read.
absl::StatusOr<ExecCommand> ExecCommandFor(const RunContext& ctx, const std::string& wrapper_path,
                                           const OciRuntime* oci,
                                           const std::vector<std::string>& argv, bool tty,
                                           const std::string& pid_file);

}  // namespace paceline::agent
