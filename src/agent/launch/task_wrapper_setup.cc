// paceline-task-wrapper: option parsing and the setup of the task process before exec.

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "agent/launch/task_wrapper.h"

extern char** environ;

namespace paceline::agent::wrapper {
namespace {

bool StartsWith(const char* s, const char* prefix) {
  return std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}

}  // namespace

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
      o->zygote_mode = value == "zygote";
      o->init_mode = value == "init";
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
    } else if (StartsWith(a, "--unmount=")) {
      o->unmounts.push_back(value);
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
  const bool supervise = !o->exec_mode && !o->zygote_mode && !o->init_mode;
  if (o->zygote_mode) return o->command.empty();
  if (o->command.empty()) return supervise;
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
  // A process group of its own (the supervisor kills the group when the task ends), not a
  // session: a new session is also a new scheduler autogroup, which the kernel allocates and
  // frees per task and walks on every cpu quota write.
  // (A session leader, as the wrapper in exec mode is, already leads its group.)
  if (::setpgid(0, 0) != 0 && ::getpgid(0) != ::getpid()) return fail("setpgid", "");
  for (size_t i = 0; i < o.cgroups.size(); ++i) {
    // "0": the writing process. An open file that fails (its cgroup was removed) is retried by
    // path.
    int fd = i < o.cgroup_fds.size() ? o.cgroup_fds[i] : -1;
    if (fd >= 0 && ::write(fd, "0", 1) == 1) continue;
    if (!JoinCgroup(o.cgroups[i], 0)) return fail("join cgroup", o.cgroups[i]);
  }
  if (!o.unmounts.empty()) {
    if (::unshare(CLONE_NEWNS) != 0) return fail("unshare", "mount namespace");
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      return fail("make mounts private", "/");
    }
    for (const std::string& m : o.unmounts) {
      if (::umount2(m.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT) {
        return fail("unmount", m);
      }
    }
  }
  if (stdout_fd >= 0 && ::dup2(stdout_fd, 1) < 0) return fail("dup2", "stdout");
  if (stderr_fd >= 0 && ::dup2(stderr_fd, 2) < 0) return fail("dup2", "stderr");
  // The raw system calls: libc's wrappers would, in a multi-threaded process, signal every
  // thread of the memory this child may share with the wrapper (see SpawnTask).
  if (o.set_groups && ::syscall(SYS_setgroups, o.groups.size(), o.groups.data()) != 0) {
    return fail("setgroups", "");
  }
  if (o.gid >= 0 && ::syscall(SYS_setgid, static_cast<gid_t>(o.gid)) != 0) {
    return fail("setgid", std::to_string(o.gid));
  }
  if (o.uid >= 0 && ::syscall(SYS_setuid, static_cast<uid_t>(o.uid)) != 0) {
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
  ::execve(o.command[0], o.command.data(), o.env.empty() ? environ : o.env.data());
  fail("exec", o.command[0]);
}

// Where the wrapper's records go: to the agent over fd 3 while it is there, and once it is gone
// (EOF, a failed write) to the status file, which a restarted agent reads. So a task costs no
// status file at all unless its agent dies while it runs.

}  // namespace paceline::agent::wrapper
