#include "agent/launch/wrapper_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/host/host_info.h"
#include "agent/launch/wrapper_protocol.h"

extern char** environ;

namespace paceline::agent {

int PidfdOpen(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

void ReapPidfd(int pidfd) {
  constexpr int kPidfdIdType = 3;  // P_PIDFD (Linux 5.4), which glibc names from 2.36 on
  siginfo_t info;
  ::waitid(static_cast<idtype_t>(kPidfdIdType), static_cast<id_t>(pidfd), &info, WEXITED | WNOHANG);
}

absl::StatusOr<std::string> FindWrapper(const std::string& configured) {
  if (!configured.empty()) {
    if (::access(configured.c_str(), X_OK) == 0) return configured;
    return absl::FailedPreconditionError(
        absl::StrCat("task wrapper '", configured, "' is not an executable file"));
  }
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::string beside;
  if (n > 0) {
    self[n] = '\0';
    beside = absl::StrCat(Dirname(self), "/", wrapper::kExecutableName);
    if (::access(beside.c_str(), X_OK) == 0) return beside;
  }
  std::string in_path = FindInPath(wrapper::kExecutableName);
  if (!in_path.empty()) return in_path;
  return absl::FailedPreconditionError(
      absl::StrCat(wrapper::kExecutableName, " not found (looked at ", beside,
                   " and in PATH); install it beside the paceline binary or set wrapper_path"));
}

std::vector<std::string> BuildWrapperArgv(const WrapperArgs& a) {
  std::vector<std::string> argv = {a.wrapper, a.exec_mode ? "--mode=exec" : "--mode=supervise"};
  if (!a.cwd.empty()) argv.push_back(absl::StrCat("--cwd=", a.cwd));
  if (a.user.uid >= 0) {
    argv.push_back(absl::StrCat("--uid=", a.user.uid));
    argv.push_back(absl::StrCat("--gid=", a.user.gid));
    argv.push_back(absl::StrCat("--groups=", absl::StrJoin(a.user.groups, ",")));
  }
  for (const std::string& f : a.cgroup_procs) argv.push_back(absl::StrCat("--cgroup=", f));
  if (!a.exec_mode) {
    argv.push_back(absl::StrCat("--state=", a.state));
    argv.push_back(absl::StrCat("--stdout=", a.stdout_path));
    argv.push_back(absl::StrCat("--stderr=", a.stderr_path));
    argv.push_back(absl::StrCat("--log-max=", a.log_max));
  }
  for (const std::string& m : a.unmounts) argv.push_back(absl::StrCat("--unmount=", m));
  argv.push_back("--");
  if (!a.argv.empty()) {
    argv.insert(argv.end(), a.argv.begin(), a.argv.end());
  } else {
    argv.insert(argv.end(), {"/bin/sh", "-c", a.command});
  }
  return argv;
}

absl::StatusOr<SpawnedWrapper> SpawnWrapper(const WrapperArgs& a) {
  return SpawnWrapperArgv(BuildWrapperArgv(a), a.env, !a.exec_mode);
}

absl::StatusOr<SpawnedWrapper> SpawnWrapperArgv(const std::vector<std::string>& argv,
                                                const std::vector<std::string>* env,
                                                bool with_control) {
  std::vector<char*> cargv = wrapper::ExecArray(argv);
  static const std::vector<std::string> kNoEnv;
  std::vector<char*> cenv = wrapper::ExecArray(env != nullptr ? *env : kNoEnv);  // no copy

  SpawnedWrapper out;
  UniqueFd child_end;
  if (with_control) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      return ErrnoStatus(errno, "socketpair");
    }
    out.control.Reset(sv[0]);
    child_end.Reset(sv[1]);
    ::fcntl(out.control.get(), F_SETFL, O_NONBLOCK);
  }

  posix_spawnattr_t attr;
  posix_spawn_file_actions_t fa;
  wrapper::InitWrapperSpawn(&attr, &fa);
  if (child_end.valid()) {
    posix_spawn_file_actions_adddup2(&fa, child_end.get(), wrapper::kControlFd);
    posix_spawn_file_actions_addclosefrom_np(&fa, wrapper::kControlFd + 1);
  } else {
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  }
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, argv[0].c_str(), &fa, &attr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return ErrnoStatus(rc, absl::StrCat("spawn ", argv[0]));
  out.pid = pid;
  out.pidfd.Reset(PidfdOpen(pid));
  if (!out.pidfd.valid()) {
    int err = errno;
    ::kill(pid, SIGKILL);
    return ErrnoStatus(err, "pidfd_open (needs Linux >= 5.3)");
  }
  return out;
}

}  // namespace paceline::agent
