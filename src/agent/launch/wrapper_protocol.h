#pragma once
// The contract between the agent and paceline-task-wrapper, the small supervising process that
// sits between the agent and every task (see task_wrapper_main.cc for why it exists).
//
//   agent ──zygote fork or posix_spawn──> paceline-task-wrapper --mode=supervise   (no task yet)
//     "run" request on fd 3 ──>  │ clone; child: setpgid, join cgroups, drop to the task user,
//                                │ chdir sandbox, stdout/stderr -> pipes, exec
//                                └──> task (own process group; pgid = task pid)
//     'a' (exit recorded) ──>    the supervisor waits for the next request, or EOF
//
// A supervisor runs one task at a time, and many in turn: after a run is over and acknowledged
// it waits for the next request instead of exiting, so a short task costs no fork, exec or exit
// of a supervisor (see supervisor_pool.h). Between runs it has no child left: every descendant
// of the last task was reaped before its exit record was sent.
//
// Flags (one per argv element, "--name=value"):
//   --mode=supervise|exec|zygote|init
//                           supervise: the wrapper takes run requests on fd 3 (below) and, for
//                           each, forks the task, captures its output, waits for it and records
//                           the exit status. exec: the wrapper sets the process up and execs the
//                           command itself (used for command health checks, whose exit status
//                           the agent reads directly). zygote: forks supervisors on the agent's
//                           request (no exec per supervisor). init: a container's first process
//                           (task_wrapper_init.cc).
//   --self-cgroup=FILE      a cgroup.procs file the wrapper itself joins (repeatable)
// and, in a run request's argv or for exec mode:
//   --cwd=DIR --uid=N --gid=N --groups=G1,G2   how the task runs (uid/gid only when switching)
//   --cgroup=FILE           a cgroup.procs file the task joins before exec (repeatable)
//   --state=PREFIX          agent-private path prefix: PREFIX.status (the status file) and
//                           PREFIX.stdout.base / .stderr.base (log offsets)
//   --stdout=FILE --stderr=FILE --log-max=BYTES   log files and their per-stream cap
//   --unmount=DIR           the task runs in a mount namespace of its own (private
//                           propagation) without the mount at DIR (repeatable; containers)
//
// fd 3 (supervise mode) is a stream socket to the agent:
//   agent -> wrapper  a run request: "<bytes>\n" and then EncodeRequest(argv, env) — the argv of
//                     the run (as for exec mode: "<wrapper> --mode=supervise --cwd=... -- CMD")
//                     and the task's environment. The agent sends it only once its checkpoint
//                     holds the run with this wrapper's pid, so no task ever runs that the
//                     checkpoint does not know.
//   wrapper -> agent  status lines (below): "started ..." after a successful exec, then the
//                     exit record once the task and all its descendants are gone.
//                     Before the exit record, "last_run 1" when the supervisor will take no
//                     other run (a descendant it could not reap, a pipe held open past the
//                     drain bound): it exits after the acknowledgement.
//   agent -> wrapper  'a' once the exit is recorded in the agent's outbox; the wrapper is then
//                     free for the next request. EOF while free: the wrapper exits.
// When fd 3 reaches EOF while a task runs (the agent died), the wrapper writes what it told the
// agent, and every later record, to the status file instead, and exits after that task.
//
// The status file PREFIX.status (only written when the agent went away) is append-only: one line
// per record, each written with a single write(2), and a line counts only once its '\n' is there
// (so a reader never acts on half a record). No temp files and renames: creating and deleting an
// inode per update is what costs most when tasks are launched by the hundred per second.
//   started <pid> <start_ticks>            once the task runs
//   exit_code <n> | exit_signal <n> | launch_error <message>   once it ended, all reaped
// It is what a restarted agent reads to learn how a task ended while it was down.
//
// Thread-safety: plain functions; used by the single-threaded wrapper and the agent.

#include <spawn.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace paceline::agent::wrapper {

inline constexpr int kControlFd = 3;
inline constexpr char kAckByte = 'a';
inline constexpr const char* kStatusSuffix = ".status";
inline constexpr const char* kStdoutBaseSuffix = ".stdout.base";
inline constexpr const char* kStderrBaseSuffix = ".stderr.base";
inline constexpr const char* kExecutableName = "paceline-task-wrapper";
// The mark of a started run: on the run request, before the task can start, the supervisor sets
// the sticky bit of the run's sandbox (its cwd). A relaunch of a run whose sandbox has it is
// refused (the run ran, even if it wrote nothing); a sandbox without it is what a launch left
// when the agent died before sending the request. On a 0700 directory owned by the task user the
// bit changes nothing else, and costs no file (the logs are created only when the task writes).
inline constexpr unsigned kStartedMark = 01000;  // S_ISVTX
bool MarkStarted(const std::string& sandbox);
bool HasStarted(const std::string& sandbox);
// Zygote mode (--mode=zygote, fd 3 a SOCK_SEQPACKET socket): see task_wrapper_zygote.cc.
inline constexpr size_t kZygoteMaxRequest = 64 * 1024;
// The largest run request a supervisor accepts (argv and environment).
inline constexpr size_t kMaxRunRequest = 16 << 20;

// A request: "<n>\0s1\0...sn\0" for the argv, then the same for the environment ("K=V").
std::string EncodeRequest(const std::vector<std::string>& argv,
                          const std::vector<std::string>& env);
// NULL-terminated pointers to the strings of `v`, as exec and posix_spawn take them; valid while
// `v` lives unchanged.
std::vector<char*> ExecArray(const std::vector<std::string>& v);
// The inverse of EncodeRequest; false when malformed (a count that is not a decimal number as
// EncodeRequest writes it, or too large; a missing terminator; trailing bytes).
bool DecodeRequest(const char* data, size_t len, std::vector<std::string>* argv,
                   std::vector<std::string>* env);
// Exit code of the wrapper (exec mode) or of the task when it could not be started.
inline constexpr int kLaunchFailureExitCode = 127;

struct ExitStatus {
  enum class Kind { kUnknown, kRunning, kExited, kSignaled, kLaunchError };
  Kind kind = Kind::kUnknown;
  int task_pid = 0;
  uint64_t task_start = 0;
  int value = 0;          // exit code or signal number
  std::string error;      // launch error message
  bool last_run = false;  // the supervisor takes no other run after this one
};

// The status-file line recording `s` ("started ..." for kRunning, else the exit record).
std::string FormatStatusLine(const ExitStatus& s);
// Parses a status file: complete lines only, later records win, unknown lines are ignored;
// an empty file gives kUnknown.
ExitStatus ParseStatus(const std::string& text);

// Prepares the spawn of a wrapper process: a session of its own, no blocked signals, default
// dispositions, stdin and stdout/stderr on /dev/null. The caller adds its own file actions and
// destroys both objects after posix_spawn.
void InitWrapperSpawn(posix_spawnattr_t* attr, posix_spawn_file_actions_t* fa);

}  // namespace paceline::agent::wrapper
