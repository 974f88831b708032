#pragma once
// SpawnWrapper: starts paceline-task-wrapper (see wrapper_protocol.h) with posix_spawn — a
// vfork-style clone in glibc, so the cost does not grow with the agent's memory — in a new
// session, with default signal dispositions, an empty signal mask, stdin/stdout/stderr on
// /dev/null and no inherited descriptor except the control socket (fd 3, supervise mode).
// Supervisors are started by the WrapperSpawner (a zygote's fork when it can) and kept by the
// SupervisorPool; this starts exec-mode wrappers (command health checks) and is the spawner's
// fallback.
//
// Thread-safety: callable from any thread; the runtime calls it on its own.

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/base/run_context.h"
#include "agent/file_util.h"

namespace paceline::agent {

struct WrapperArgs {
  std::string wrapper;     // executable path
  bool exec_mode = false;  // exec: the wrapper becomes the command (health checks)
  std::string cwd;
  TaskUser user;  // switched to when uid >= 0
  std::vector<std::string> cgroup_procs;
  std::string state;  // supervise mode: path prefix of the status and log offset files
  std::string stdout_path;
  std::string stderr_path;
  int64_t log_max = 0;
  std::string command;                            // run as /bin/sh -c COMMAND
  std::vector<std::string> argv;                  // run instead of the command when set
  std::vector<std::string> unmounts;              // hidden from it (--unmount)
  const std::vector<std::string>* env = nullptr;  // "K=V"
};

struct SpawnedWrapper {
  pid_t pid = 0;
  UniqueFd pidfd;    // readable when the wrapper exits
  UniqueFd control;  // supervise mode: agent end of the control socket (non-blocking)
};

absl::StatusOr<SpawnedWrapper> SpawnWrapper(const WrapperArgs& args);
// The same for a wrapper argv of its own (`env` may be null: none); `with_control`: a control
// socket as fd 3 (supervise mode).
absl::StatusOr<SpawnedWrapper> SpawnWrapperArgv(const std::vector<std::string>& argv,
                                                const std::vector<std::string>* env,
                                                bool with_control);
// The wrapper's argv for `args` (argv[0] = args.wrapper): an exec-mode command line, or the argv
// of a supervisor's run request.
std::vector<std::string> BuildWrapperArgv(const WrapperArgs& args);

// The wrapper executable to use: `configured` if set, else "paceline-task-wrapper" beside
// /proc/self/exe, else in PATH. FailedPrecondition (saying where it looked) when none exists.
absl::StatusOr<std::string> FindWrapper(const std::string& configured);

// pidfd_open(2).
int PidfdOpen(pid_t pid);
// Reaps the process of `pidfd` if it has exited and is our child: waitid(P_PIDFD, WNOHANG).
// Harmless when it is not our child (ECHILD) or still runs.
void ReapPidfd(int pidfd);

}  // namespace paceline::agent
