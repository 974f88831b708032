// paceline-task-wrapper: the supervisor between the agent and one task.
//
// Why a wrapper process (and not a double fork of the agent, nor the agent itself as parent):
//   * The exit status must be observable after the agent died: only a process's parent (or a
//     subreaper) can wait for it. The wrapper is the task's parent and outlives an agent crash:
//     it reports the exit over its socket to a live agent, or to a status file that a restarted
//     agent reads.
//   * The task's stdout/stderr must not break when the agent dies. If the agent read the pipes,
//     its death would close them and the task would get SIGPIPE. The wrapper reads them and writes
//     size-capped, rotated files (log_rotation.h) — log capture costs no extra process.
//   * It is a small exec'd program, not a fork of the (large, multi-threaded) agent: cheap to
//     start, no copy of the agent's memory or descriptors, and safe to do arbitrary work between
//     fork and exec in its own single-threaded child.
//   * It is a child subreaper: descendants that daemonize are re-parented to it, so it can kill
//     and reap every one of them after the main process exits, with or without cgroups.
// The wrapper stays outside the task's cgroup (its memory is not charged to the task, and
// killing the cgroup does not kill the supervisor). See wrapper_protocol.h for flags and fd 3.

#include <signal.h>

#include <cstdio>

#include "agent/launch/task_wrapper.h"
#include "agent/launch/wrapper_protocol.h"

namespace paceline::agent::wrapper {
namespace {

int ExecMode(const Options& o) {
  char error[512];
  SetupAndExec(o, -1, -1, error, sizeof(error));
  std::fprintf(stderr, "paceline-task-wrapper: %s\n", error);
  return kLaunchFailureExitCode;
}

}  // namespace
}  // namespace paceline::agent::wrapper

int main(int argc, char** argv) {
  using namespace paceline::agent::wrapper;
  Options o;
  if (!ParseOptions(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: paceline-task-wrapper --mode=supervise|exec [--name=value ...] -- "
                 "COMMAND...\n(started by the paceline agent; see wrapper_protocol.h)\n");
    return 2;
  }
  ::signal(SIGPIPE, SIG_IGN);
  if (o.exec_mode) return ExecMode(o);
  if (o.init_mode) return Init(o);
  // The supervisor must survive signals aimed at the agent's service (e.g. a stop sent to the
  // whole unit); the task itself gets default dispositions back before exec.
  ::signal(SIGTERM, SIG_IGN);
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGQUIT, SIG_IGN);
  return o.zygote_mode ? Zygote(o) : Supervise(o);
}
