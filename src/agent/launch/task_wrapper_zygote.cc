// paceline-task-wrapper --mode=zygote: a long-lived, single-threaded, already-initialized copy of
// the wrapper that forks supervisors on the agent's request (each then runs many tasks in turn,
// see wrapper_protocol.h). A fork of this small process skips what an exec costs (loading the
// binary, page faults, libc's CPU feature probing — cpuid traps in a VM).
//
// fd 3 is a SOCK_SEQPACKET socket to the agent. Each request is one message, EncodeRequest of
//   the supervisor's argv and environment, with the wrapper's end of its control socket attached
//   (SCM_RIGHTS). The zygote forks; the child becomes exactly what `posix_spawn` of the wrapper
//   would have been (own session, the control socket as fd 3, that argv and environment) and
//   runs Supervise(). The zygote answers with the child's pid in decimal; the kernel reaps its
//   children (SIGCHLD ignored). EOF on fd 3 (the agent is gone) ends the zygote; running wrappers
//   carry on.

#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "agent/launch/task_wrapper.h"
#include "agent/launch/wrapper_protocol.h"

extern char** environ;

namespace paceline::agent::wrapper {
namespace {

[[noreturn]] void BecomeWrapper(std::vector<std::string>& args, std::vector<std::string>& env,
                                int control) {
  ::signal(SIGCHLD, SIG_DFL);  // a supervisor waits for its tasks
  ::setsid();
  if (::dup2(control, kControlFd) < 0) ::_exit(2);
  ::close(control);
  std::vector<char*> argv = ExecArray(args);
  std::vector<char*> envp = ExecArray(env);
  environ = envp.data();
  Options o;
  if (!ParseOptions(static_cast<int>(argv.size()) - 1, argv.data(), &o) || o.exec_mode ||
      o.zygote_mode || o.init_mode || !o.command.empty()) {
    ::_exit(2);
  }
  ::_exit(Supervise(o));
}

}  // namespace

int Zygote(const Options& o) {
  for (const std::string& f : o.self_cgroups) JoinCgroup(f, ::getpid());  // children inherit
  // Its children are reaped by the kernel as they exit: with thousands of live supervisors, a
  // wait for one would scan them all.
  ::signal(SIGCHLD, SIG_IGN);
  std::vector<char> buf(kZygoteMaxRequest);
  for (;;) {
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {buf.data(), buf.size()};
    struct msghdr msg {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof(cbuf);
    ssize_t n = ::recvmsg(kControlFd, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return 0;  // the agent is gone
    int control = -1;
    for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        std::memcpy(&control, CMSG_DATA(c), sizeof(int));
      }
    }
    std::vector<std::string> args, env;
    pid_t pid = -1;
    if (control >= 0 && !(msg.msg_flags & MSG_TRUNC) &&
        DecodeRequest(buf.data(), static_cast<size_t>(n), &args, &env) && !args.empty()) {
      pid = ::fork();
      if (pid == 0) BecomeWrapper(args, env, control);
    }
    if (control >= 0) ::close(control);
    std::string reply = std::to_string(pid);
    if (::send(kControlFd, reply.data(), reply.size(), MSG_NOSIGNAL) < 0) return 0;
  }
}

}  // namespace paceline::agent::wrapper
