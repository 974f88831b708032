// paceline-task-wrapper: supervise mode — for each run request: start the task, copy its output
// into capped logs, reap it and every descendant, and report to the agent (or, once it is gone,
// to the status file); then wait for the next request. See wrapper_protocol.h.

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "agent/launch/task_wrapper.h"
#include "agent/launch/wrapper_protocol.h"
#include "agent/logs/log_rotation.h"

namespace paceline::agent::wrapper {
namespace {

// Where a run's records go. The connection to the agent outlives a run; the status file and the
// history are the current run's.
class Reporter {
 public:
  bool connected() const { return connected_; }
  void BeginRun(const std::string& state) {
    path_ = state.empty() ? std::string() : state + kStatusSuffix;
    history_.clear();
  }

  void Record(const ExitStatus& s) {
    std::string line = FormatStatusLine(s);
    history_ += line;
    if (!connected_) {
      Append(line);
    } else if (!WriteAllFd(kControlFd, line.data(), line.size())) {
      Disconnect();
    }
  }
  // Records that the run could not start, and waits for the acknowledgement.
  void LaunchError(const std::string& message) {
    ExitStatus s;
    s.kind = ExitStatus::Kind::kLaunchError;
    s.error = message;
    Record(s);
    AwaitAck();
  }
  // Says `line` to the agent only (not a record of the run).
  void Tell(const char* line) {
    if (connected_ && !WriteAllFd(kControlFd, line, std::strlen(line))) Disconnect();
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
    if (text.empty() || path_.empty()) return;
    int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) return;
    WriteAllFd(fd, text.data(), text.size());
    ::close(fd);
  }

  std::string path_;
  bool connected_ = true;
  std::string history_;
};

// The clock /proc/PID/stat counts a process's start time in: boot time in clock ticks.
uint64_t BootTicksNow() {
  static const uint64_t kNsPerTick = 1000000000ULL / static_cast<uint64_t>(::sysconf(_SC_CLK_TCK));
  struct timespec ts;
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
  return (static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec)) /
         kNsPerTick;
}

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

// The task's process: set up and exec'd by StartTask, which leaves why it could not in `error`.
struct TaskStart {
  const Options* options;
  int stdout_fd;
  int stderr_fd;
  int error_fd;     // where the error goes too (-1: `error` is shared memory, see SpawnTask)
  char error[512];  // empty when the task was exec'd
};

int StartTask(void* arg) {
  TaskStart& t = *static_cast<TaskStart*>(arg);
  SetupAndExec(*t.options, t.stdout_fd, t.stderr_fd, t.error, sizeof(t.error));
  if (t.error_fd >= 0) WriteAllFd(t.error_fd, t.error, std::strlen(t.error));
  ::_exit(kLaunchFailureExitCode);
}

// Starts the task as a vfork-style child: it shares the wrapper's memory until it execs (the
// wrapper waits meanwhile), so no page table is copied and no page is copied on write — about
// a tenth of a trivial task's cost — and a failure to exec is left in `start.error`, which the
// wrapper reads when clone returns. SetupAndExec is written for this (no allocation, no state
// of the wrapper changed). Under AddressSanitizer, whose runtime does not follow a child on a
// borrowed stack, it is a plain fork, and the error comes over a close-on-exec pipe.
// Returns the child's pid (or -1 with errno); `exec_error` is why it did not exec.
pid_t SpawnTask(TaskStart& start, std::string* exec_error) {
  start.error[0] = '\0';
#if defined(__SANITIZE_ADDRESS__)
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return -1;
  start.error_fd = pipe_fds[1];
  pid_t pid = ::fork();
  if (pid == 0) StartTask(&start);
  int err = errno;
  ::close(pipe_fds[1]);
  char buf[sizeof(start.error)];
  ssize_t n;
  while ((n = ::read(pipe_fds[0], buf, sizeof(buf))) != 0) {
    if (n > 0) exec_error->append(buf, static_cast<size_t>(n));
    if (n < 0 && errno != EINTR) break;
  }
  ::close(pipe_fds[0]);
  errno = err;
  return pid;
#else
  // The child's stack; the wrapper starts one task and is suspended while the child uses it.
  alignas(64) static char stack[256 << 10];
  start.error_fd = -1;
  pid_t pid = ::clone(StartTask, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &start);
  if (pid > 0) *exec_error = start.error;
  return pid;
#endif
}

// The cgroup.procs files of the last run, kept open: the agent gives a free supervisor the
// cgroup its last run had when it can (a kept cgroup, see SupervisorPool::Take), and then
// joining costs the task one write per hierarchy instead of a path lookup, an open, a write and
// a close. A file that cannot be opened is left to the task to open (and to report).
class CgroupFiles {
 public:
  ~CgroupFiles() { Close(); }
  const std::vector<int>& For(const std::vector<std::string>& paths) {
    if (paths != paths_) {
      Close();
      paths_ = paths;
      for (const std::string& p : paths_) fds_.push_back(::open(p.c_str(), O_WRONLY | O_CLOEXEC));
    }
    return fds_;
  }

 private:
  void Close() {
    for (int fd : fds_) {
      if (fd >= 0) ::close(fd);
    }
    fds_.clear();
    paths_.clear();
  }
  std::vector<std::string> paths_;
  std::vector<int> fds_;
};

int64_t MonotonicMs() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Reads the next run request into `argv` and `env`; false at EOF or on a broken stream.
bool ReadRequest(std::vector<std::string>* argv, std::vector<std::string>* env, bool* malformed) {
  std::string in;
  size_t need = 0, header = 0;
  char buf[65536];
  for (;;) {
    if (need == 0) {
      size_t eol = in.find('\n');
      if (eol != std::string::npos) {
        char* end = nullptr;
        unsigned long long n = std::strtoull(in.c_str(), &end, 10);
        if (end != in.c_str() + eol || n == 0 || n > kMaxRunRequest) return false;
        header = eol + 1;
        need = header + static_cast<size_t>(n);
      } else if (in.size() > 32) {
        return false;
      }
    }
    if (need > 0 && in.size() >= need) break;
    ssize_t n = ::read(kControlFd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    in.append(buf, static_cast<size_t>(n));
  }
  *malformed = in.size() != need || !DecodeRequest(in.data() + header, need - header, argv, env);
  return true;
}

// Runs one task for `o` and records its end; returns once the agent acknowledged the exit
// record (or is gone). False when something of the task may be left (a child that could not be
// reaped, a pipe still held open when the drain bound passed): this supervisor then takes no
// other run.
bool RunTask(const Options& o, Reporter& reporter, int sig_fd) {
  ExitStatus status;
  auto fail_launch = [&](const std::string& message) {
    reporter.LaunchError(message);
    return true;
  };

  if (!o.cwd.empty() && !MarkStarted(o.cwd)) {
    return fail_launch("mark " + o.cwd + " started: " + std::strerror(errno));
  }
  RotatingLog out(o.stdout_path, o.state + kStdoutBaseSuffix, o.log_max, o.uid, o.gid);
  RotatingLog err(o.stderr_path, o.state + kStderrBaseSuffix, o.log_max, o.uid, o.gid);

  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    return fail_launch(std::string("pipe: ") + std::strerror(errno));
  }
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return fail_launch(std::string("pipe: ") + std::strerror(errno));
  }
  TaskStart start{&o, out_pipe[1], err_pipe[1], -1, {}};
  std::string exec_error;
  // The kernel stamps the child's start time (boot time, in ticks in /proc/PID/stat) between
  // these two readings: when both fall in the same tick, that tick is its start time, and
  // /proc need not be read.
  const uint64_t ticks_before = BootTicksNow();
  pid_t child = SpawnTask(start, &exec_error);
  int spawn_errno = errno;
  const uint64_t ticks_after = BootTicksNow();
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (child < 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return fail_launch(std::string("fork: ") + std::strerror(spawn_errno));
  }
  char buf[65536];
  if (!exec_error.empty()) {
    int ws = 0;
    while (::waitpid(child, &ws, 0) < 0 && errno == EINTR) {
    }
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return fail_launch(exec_error);
  }
  status.task_pid = child;
  status.task_start = ticks_before == ticks_after ? ticks_before : StartTicks(child);
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
  bool clean = main_done && !children_left;
  for (int i = 0; i < 2; ++i) {
    if (fds[i].fd >= 0) {
      ::close(fds[i].fd);  // abandoned after the drain bound
      clean = false;
    }
  }
  if (!clean) reporter.Tell("last_run 1\n");
  reporter.Record(status);
  reporter.AwaitAck();
  return clean;
}

}  // namespace

int Supervise(const Options& self) {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  ::fcntl(kControlFd, F_SETFD, FD_CLOEXEC);
  for (const std::string& f : self.self_cgroups) JoinCgroup(f, ::getpid());
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &chld, nullptr);
  int sig_fd = ::signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  Reporter reporter;
  CgroupFiles cgroup_files;
  // One run at a time, until the agent lets this supervisor go (EOF while it is free) or is gone.
  while (reporter.connected()) {
    std::vector<std::string> args, env;
    bool malformed = false;
    if (!ReadRequest(&args, &env, &malformed)) return 0;
    std::vector<char*> argv = ExecArray(args);
    Options o;
    if (malformed || !ParseOptions(static_cast<int>(argv.size()) - 1, argv.data(), &o) ||
        o.command.empty() || o.exec_mode || o.zygote_mode || o.init_mode) {
      reporter.BeginRun("");
      reporter.LaunchError("malformed run request");
      continue;
    }
    o.env = ExecArray(env);
    o.cgroup_fds = cgroup_files.For(o.cgroups);
    reporter.BeginRun(o.state);
    if (!RunTask(o, reporter, sig_fd)) return 0;
  }
  return 0;
}

}  // namespace paceline::agent::wrapper
