// paceline-task-wrapper --mode=init: the first process of a container (docs/containers.md).
//
// The first process of a PID namespace gets no signal it has no handler for, so a task whose
// command is a shell would ignore the SIGTERM of a kill and always wait for the SIGKILL at the
// grace deadline. This init starts the command in a process group of its own and forwards
// every signal it gets (from crun, which forwards the agent's) to that group, reaps every
// orphan of the container, and exits with the command's status (128 + N when it died of
// signal N) — as Docker's --init does. The agent bind-mounts this static binary read-only at
// /.paceline/init.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "agent/launch/task_wrapper.h"
#include "agent/launch/wrapper_protocol.h"

namespace paceline::agent::wrapper {

int Init(const Options& o) {
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  pid_t child = ::fork();
  if (child < 0) {
    std::fprintf(stderr, "paceline init: fork: %s\n", std::strerror(errno));
    return kLaunchFailureExitCode;
  }
  if (child == 0) {
    ::setpgid(0, 0);
    for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execvp(o.command[0], o.command.data());
    std::fprintf(stderr, "paceline init: exec %s: %s\n", o.command[0], std::strerror(errno));
    ::_exit(kLaunchFailureExitCode);
  }
  ::setpgid(child, child);
  while (true) {
    siginfo_t info;
    int sig = ::sigwaitinfo(&all, &info);
    if (sig < 0) continue;
    if (sig != SIGCHLD) {
      ::kill(-child, sig);
      continue;
    }
    int status = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      if (pid != child) continue;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
  }
}

}  // namespace paceline::agent::wrapper
