// paceline-task-wrapper --mode=zygote: a long-lived, single-threaded, already-initialized copy of
// the wrapper that forks one supervising wrapper per task on the agent's request. A fork of this
// small process skips what an exec costs on every launch (loading the binary, page faults, libc's
// CPU feature probing — cpuid traps in a VM), which is a large part of a trivial task's cost.
//
// fd 3 is a SOCK_SEQPACKET socket to the agent. Each request is one message:
//   "<argc>\0<arg>\0...<envc>\0<env>\0..." with the wrapper's end of its control socket attached
//   (SCM_RIGHTS). The zygote forks; the child becomes exactly what `posix_spawn` of the wrapper
//   would have been (own session, the control socket as fd 3, that argv and environment) and
//   runs Supervise(). The zygote answers with the child's pid in decimal, and reaps its children
//   when they exit. EOF on fd 3 (the agent is gone) ends the zygote; running wrappers carry on.

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "agent/launch/task_wrapper.h"
#include "agent/launch/wrapper_protocol.h"

extern char** environ;

namespace paceline::agent::wrapper {
namespace {

// Splits "<n>\0s1\0...sn\0" starting at `pos`; false when malformed.
bool TakeStrings(const std::vector<char>& buf, size_t len, size_t* pos,
                 std::vector<std::string>* out) {
  auto take = [&](std::string* s) {
    size_t end = *pos;
    while (end < len && buf[end] != '\0') ++end;
    if (end >= len) return false;
    s->assign(buf.data() + *pos, end - *pos);
    *pos = end + 1;
    return true;
  };
  std::string count;
  if (!take(&count)) return false;
  long n = std::strtol(count.c_str(), nullptr, 10);
  if (n < 0 || n > 100000) return false;
  out->resize(static_cast<size_t>(n));
  for (std::string& s : *out) {
    if (!take(&s)) return false;
  }
  return true;
}

[[noreturn]] void BecomeWrapper(std::vector<std::string>& args, std::vector<std::string>& env,
                                int control, int sig_fd) {
  ::close(sig_fd);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::setsid();
  if (::dup2(control, kControlFd) < 0) ::_exit(2);
  ::close(control);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  environ = envp.data();
  Options o;
  if (!ParseOptions(static_cast<int>(argv.size()) - 1, argv.data(), &o) || o.exec_mode) {
    ::_exit(2);
  }
  ::_exit(Supervise(o));
}

}  // namespace

int Zygote(const Options& o) {
  for (const std::string& f : o.self_cgroups) JoinCgroup(f, ::getpid());  // children inherit
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &chld, nullptr);
  int sig_fd = ::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  std::vector<char> buf(kZygoteMaxRequest);
  for (;;) {
    struct pollfd fds[2] = {{kControlFd, POLLIN, 0}, {sig_fd, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) return 1;
    if (fds[1].revents & POLLIN) {
      struct signalfd_siginfo si;
      while (::read(sig_fd, &si, sizeof(si)) > 0) {
      }
      while (::waitpid(-1, nullptr, WNOHANG) > 0) {
      }
    }
    if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
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
    size_t pos = 0;
    pid_t pid = -1;
    if (control >= 0 && !(msg.msg_flags & MSG_TRUNC) &&
        TakeStrings(buf, static_cast<size_t>(n), &pos, &args) &&
        TakeStrings(buf, static_cast<size_t>(n), &pos, &env) && !args.empty()) {
      pid = ::fork();
      if (pid == 0) BecomeWrapper(args, env, control, sig_fd);
    }
    if (control >= 0) ::close(control);
    std::string reply = std::to_string(pid);
    if (::send(kControlFd, reply.data(), reply.size(), MSG_NOSIGNAL) < 0) return 0;
  }
}

}  // namespace paceline::agent::wrapper
