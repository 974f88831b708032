// paceline-task-wrapper: the supervisor between the agent and one task.
//
// Why a wrapper process (and not a double fork of the agent, nor the agent itself as parent):
//   * The exit status must be observable after the agent died: only a process's parent (or a
//     subreaper) can wait for it. The wrapper is the task's parent, outlives an agent crash, and
//     writes the exit status to RUN_DIR/status; the restarted agent reads it.
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

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "agent/log_rotation.h"
#include "agent/wrapper_protocol.h"

extern char** environ;

namespace paceline::agent::wrapper {
namespace {

struct Options {
  bool exec_mode = false;
  std::string cwd;
  int uid = -1;
  int gid = -1;
  std::vector<gid_t> groups;
  bool set_groups = false;
  std::vector<std::string> cgroups;
  std::vector<std::string> self_cgroups;
  std::string state;  // path prefix of the status and log offset files
  std::string stdout_path;
  std::string stderr_path;
  long long log_max = 64LL << 20;
  std::vector<char*> command;  // argv of the task, NULL-terminated
};

bool StartsWith(const char* s, const char* prefix) {
  return std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}

bool ParseOptions(int argc, char** argv, Options* o) {
  int i = 1;
  for (; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strcmp(a, "--") == 0) {
      ++i;
      break;
    }
    const char* eq = std::strchr(a, '=');
    if (eq == nullptr) return false;
    std::string value(eq + 1);
    if (StartsWith(a, "--mode=")) {
      o->exec_mode = value == "exec";
    } else if (StartsWith(a, "--cwd=")) {
      o->cwd = value;
    } else if (StartsWith(a, "--uid=")) {
      o->uid = std::atoi(value.c_str());
    } else if (StartsWith(a, "--gid=")) {
      o->gid = std::atoi(value.c_str());
    } else if (StartsWith(a, "--groups=")) {
      o->set_groups = true;
      size_t pos = 0;
      while (pos < value.size()) {
        size_t comma = value.find(',', pos);
        if (comma == std::string::npos) comma = value.size();
        if (comma > pos) o->groups.push_back(std::atoi(value.substr(pos, comma - pos).c_str()));
        pos = comma + 1;
      }
    } else if (StartsWith(a, "--cgroup=")) {
      o->cgroups.push_back(value);
    } else if (StartsWith(a, "--self-cgroup=")) {
      o->self_cgroups.push_back(value);
    } else if (StartsWith(a, "--state=")) {
      o->state = value;
    } else if (StartsWith(a, "--stdout=")) {
      o->stdout_path = value;
    } else if (StartsWith(a, "--stderr=")) {
      o->stderr_path = value;
    } else if (StartsWith(a, "--log-max=")) {
      o->log_max = std::atoll(value.c_str());
    } else {
      return false;
    }
  }
  for (; i < argc; ++i) o->command.push_back(argv[i]);
  if (o->command.empty()) return false;
  o->command.push_back(nullptr);
  return true;
}

bool WriteAllFd(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool JoinCgroup(const std::string& procs_file, pid_t pid) {
  int fd = ::open(procs_file.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::string text = std::to_string(pid);
  ssize_t n = ::write(fd, text.data(), text.size());
  int err = errno;
  ::close(fd);
  errno = err;
  return n == static_cast<ssize_t>(text.size());
}

// Sets up the calling process as the task and execs it. Returns only on failure, with a message
// naming the step that failed (in `error`, a fixed buffer: this may run in a forked child).
void SetupAndExec(const Options& o, int stdout_fd, int stderr_fd, char* error, size_t error_len) {
  auto fail = [&](const char* step, const std::string& arg) {
    std::snprintf(error, error_len, "%s %s: %s", step, arg.c_str(), std::strerror(errno));
  };
  if (::setsid() < 0 && ::getsid(0) != ::getpid()) return fail("setsid", "");
  for (const std::string& f : o.cgroups) {
    if (!JoinCgroup(f, ::getpid())) return fail("join cgroup", f);
  }
  if (stdout_fd >= 0 && ::dup2(stdout_fd, 1) < 0) return fail("dup2", "stdout");
  if (stderr_fd >= 0 && ::dup2(stderr_fd, 2) < 0) return fail("dup2", "stderr");
  if (o.set_groups && ::setgroups(o.groups.size(), o.groups.data()) != 0) {
    return fail("setgroups", "");
  }
  if (o.gid >= 0 && ::setgid(static_cast<gid_t>(o.gid)) != 0) {
    return fail("setgid", std::to_string(o.gid));
  }
  if (o.uid >= 0 && ::setuid(static_cast<uid_t>(o.uid)) != 0) {
    return fail("setuid", std::to_string(o.uid));
  }
  if (!o.cwd.empty() && ::chdir(o.cwd.c_str()) != 0) return fail("chdir", o.cwd);
  // The agent spawned the wrapper with default dispositions; the wrapper only ignored these
  // (ignored signals stay ignored across exec, handled ones are reset by exec itself).
  for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT}) ::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::umask(022);
  ::execve(o.command[0], o.command.data(), environ);
  fail("exec", o.command[0]);
}

// Where the wrapper's records go: to the agent over fd 3 while it is there, and once it is gone
// (EOF, a failed write) to the status file, which a restarted agent reads. So a task costs no
// status file at all unless its agent dies while it runs.
class Reporter {
 public:
  explicit Reporter(const Options& o) : path_(o.state + kStatusSuffix) {}
  bool connected() const { return connected_; }

  void Record(const ExitStatus& s) {
    std::string line = FormatStatusLine(s);
    history_ += line;
    if (!connected_) {
      Append(line);
    } else if (!WriteAllFd(kControlFd, line.data(), line.size())) {
      Disconnect();
    }
  }
  // The agent is gone: everything recorded so far goes to the file (one write per call, so a
  // reader sees whole lines), and from now on every record.
  void Disconnect() {
    if (!connected_) return;
    connected_ = false;
    Append(history_);
  }
  // After the final record: waits until the agent acknowledges it (it is then durable on the
  // agent's side) or goes away.
  void AwaitAck() {
    while (connected_) {
      char c = 0;
      ssize_t n = ::read(kControlFd, &c, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n == 1 && c == kAckByte) return;
      if (n != 1) Disconnect();
    }
  }

 private:
  void Append(const std::string& text) {
    if (text.empty()) return;
    int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) return;
    WriteAllFd(fd, text.data(), text.size());
    ::close(fd);
  }

  std::string path_;
  bool connected_ = true;
  std::string history_;
};

uint64_t StartTicks(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[1024];
  ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  char* p = std::strrchr(buf, ')');
  if (p == nullptr) return 0;
  // After ")": field 3 is the first; the start time is field 22.
  int field = 2;
  for (; *p != '\0'; ++p) {
    if (*p == ' ' && ++field == 22) return std::strtoull(p + 1, nullptr, 10);
  }
  return 0;
}

// Kills every remaining child of the wrapper (orphans re-parented to this subreaper).
void KillChildren() {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/self/task/%d/children", ::getpid());
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char buf[4096];
  ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  if (n <= 0) return;
  buf[n] = '\0';
  char* p = buf;
  while (*p != '\0') {
    char* end = nullptr;
    long pid = std::strtol(p, &end, 10);
    if (end == p) break;
    if (pid > 0) {
      ::kill(static_cast<pid_t>(-pid), SIGKILL);
      ::kill(static_cast<pid_t>(pid), SIGKILL);
    }
    p = end;
  }
}

int64_t MonotonicMs() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

int Supervise(const Options& o) {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  ::fcntl(kControlFd, F_SETFD, FD_CLOEXEC);
  for (const std::string& f : o.self_cgroups) JoinCgroup(f, ::getpid());

  // Wait for the agent to have checkpointed this wrapper; EOF = the agent died first.
  char go = 0;
  ssize_t got;
  do {
    got = ::read(kControlFd, &go, 1);
  } while (got < 0 && errno == EINTR);
  if (got != 1 || go != kGoByte) return 0;

  Reporter reporter(o);
  ExitStatus status;
  auto fail_launch = [&](const std::string& message) {
    status.kind = ExitStatus::Kind::kLaunchError;
    status.error = message;
    reporter.Record(status);
    reporter.AwaitAck();
    return 0;
  };

  RotatingLog out(o.stdout_path, o.state + kStdoutBaseSuffix, o.log_max, o.uid, o.gid);
  RotatingLog err(o.stderr_path, o.state + kStderrBaseSuffix, o.log_max, o.uid, o.gid);
  if (!out.Open()) return fail_launch("open " + o.stdout_path + ": " + std::strerror(errno));
  if (!err.Open()) return fail_launch("open " + o.stderr_path + ": " + std::strerror(errno));

  int out_pipe[2], err_pipe[2], exec_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 ||
      ::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    return fail_launch(std::string("pipe: ") + std::strerror(errno));
  }
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &chld, nullptr);
  int sig_fd = ::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);

  pid_t child = ::fork();
  if (child < 0) return fail_launch(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    char error[512];
    SetupAndExec(o, out_pipe[1], err_pipe[1], error, sizeof(error));
    WriteAllFd(exec_pipe[1], error, std::strlen(error));
    ::_exit(kLaunchFailureExitCode);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(exec_pipe[1]);
  std::string exec_error;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(exec_pipe[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) {
      exec_error.append(buf, static_cast<size_t>(n));
      continue;
    }
    break;
  }
  ::close(exec_pipe[0]);
  if (!exec_error.empty()) {
    int ws = 0;
    while (::waitpid(child, &ws, 0) < 0 && errno == EINTR) {
    }
    return fail_launch(exec_error);
  }
  status.task_pid = child;
  status.task_start = StartTicks(child);
  status.kind = ExitStatus::Kind::kRunning;
  reporter.Record(status);

  // Copy output until the main process ended, its leftovers are killed, every pipe is closed
  // and every child is reaped. A pipe held open by something we cannot kill is abandoned after
  // a bound, so the status is always recorded. fd 3 is watched for the agent going away.
  bool main_done = false;
  bool children_left = true;
  int64_t drain_deadline = 0;
  struct pollfd fds[4] = {{out_pipe[0], POLLIN, 0},
                          {err_pipe[0], POLLIN, 0},
                          {sig_fd, POLLIN, 0},
                          {kControlFd, POLLIN, 0}};
  RotatingLog* logs[2] = {&out, &err};
  for (;;) {
    if (main_done && !children_left && fds[0].fd < 0 && fds[1].fd < 0) break;
    int timeout = -1;
    if (main_done) {
      int64_t left = drain_deadline - MonotonicMs();
      if (left <= 0) break;
      timeout = static_cast<int>(left < 100 ? left : 100);
    }
    fds[3].fd = reporter.connected() ? kControlFd : -1;
    int ready = ::poll(fds, 4, timeout);
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
        if (n > 0) {
          logs[i]->Write(buf, static_cast<size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          ::close(fds[i].fd);
          fds[i].fd = -1;
        }
      }
    }
    if (fds[3].fd >= 0 && (fds[3].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t n = ::read(kControlFd, buf, sizeof(buf));
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) reporter.Disconnect();
    }
    if (sig_fd >= 0) {
      struct signalfd_siginfo si;
      while (::read(sig_fd, &si, sizeof(si)) > 0) {
      }
    }
    for (;;) {
      int ws = 0;
      pid_t pid = ::waitpid(-1, &ws, WNOHANG);
      if (pid == 0) {
        children_left = true;
        break;
      }
      if (pid < 0) {
        if (errno == EINTR) continue;
        children_left = false;  // ECHILD
        break;
      }
      if (pid == child) {
        main_done = true;
        drain_deadline = MonotonicMs() + 10000;
        if (WIFEXITED(ws)) {
          status.kind = ExitStatus::Kind::kExited;
          status.value = WEXITSTATUS(ws);
        } else {
          status.kind = ExitStatus::Kind::kSignaled;
          status.value = WTERMSIG(ws);
        }
        ::kill(-child, SIGKILL);  // leftovers of the task's process group
      }
    }
    if (main_done && children_left) KillChildren();
  }
  reporter.Record(status);
  reporter.AwaitAck();
  return 0;
}

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
  // The supervisor must survive signals aimed at the agent's service (e.g. a stop sent to the
  // whole unit); the task itself gets default dispositions back before exec.
  ::signal(SIGTERM, SIG_IGN);
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGQUIT, SIG_IGN);
  return Supervise(o);
}
