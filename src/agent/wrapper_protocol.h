#pragma once
// The contract between the agent and paceline-task-wrapper, the small supervising process that
// sits between the agent and every task (see task_wrapper_main.cc for why it exists).
//
//   agent ──posix_spawn──> paceline-task-wrapper [flags] -- /bin/sh -c COMMAND
//                              │ fork; child: setsid, join cgroups, drop to the task user,
//                              │ chdir sandbox, stdout/stderr -> pipes, exec
//                              └──> task (own session and process group; pgid = task pid)
//
// Flags (one per argv element, "--name=value"):
//   --mode=supervise|exec   supervise: the wrapper forks the task, captures its output, waits
//                           for it and records the exit status. exec: the wrapper sets the
//                           process up and execs the command itself (used for command health
//                           checks, whose exit status the agent reads directly).
//   --cwd=DIR --uid=N --gid=N --groups=G1,G2   how the task runs (uid/gid only when switching)
//   --cgroup=FILE           a cgroup.procs file the task joins before exec (repeatable)
//   --self-cgroup=FILE      a cgroup.procs file the wrapper itself joins (repeatable)
//   --run-dir=DIR           agent-private directory: the status file and log offset files
//   --stdout=FILE --stderr=FILE --log-max=BYTES   log files and their per-stream cap
// The environment given to the wrapper is the task's environment, passed through unchanged.
//
// fd 3 (supervise mode) is a stream socket to the agent:
//   agent -> wrapper  one byte 'g' once the agent has checkpointed the wrapper's pid; EOF
//                     before it means the agent died and the wrapper exits without starting
//                     anything (so no task ever runs that the checkpoint does not know).
//   wrapper -> agent  "started <pid> <start_ticks>\n" after a successful exec, or
//                     "failed <message>\n" when the task could not be started.
//
// The status file RUN_DIR/status is rewritten atomically (temp + rename) as "key=value" lines:
//   task_pid=, task_start=          once the task runs
//   exit_code= | exit_signal= | launch_error=   once it ended (all processes reaped)
// It is what a restarted agent reads to learn how a task ended while it was down.
//
// Thread-safety: plain functions; used by the single-threaded wrapper and the agent.

#include <cstdint>
#include <string>

namespace paceline::agent::wrapper {

inline constexpr int kControlFd = 3;
inline constexpr char kGoByte = 'g';
inline constexpr const char* kStatusFile = "status";
inline constexpr const char* kStdoutBaseFile = "stdout.base";
inline constexpr const char* kStderrBaseFile = "stderr.base";
inline constexpr const char* kExecutableName = "paceline-task-wrapper";
// Exit code of the wrapper (exec mode) or of the task when it could not be started.
inline constexpr int kLaunchFailureExitCode = 127;

struct ExitStatus {
  enum class Kind { kUnknown, kRunning, kExited, kSignaled, kLaunchError };
  Kind kind = Kind::kUnknown;
  int task_pid = 0;
  uint64_t task_start = 0;
  int value = 0;      // exit code or signal number
  std::string error;  // launch error message
};

// Text of the status file for `s`.
std::string FormatStatus(const ExitStatus& s);
// Parses a status file; unknown keys are ignored, a missing file content gives kUnknown.
ExitStatus ParseStatus(const std::string& text);

}  // namespace paceline::agent::wrapper
