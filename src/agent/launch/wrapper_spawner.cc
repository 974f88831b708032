#include "agent/launch/wrapper_spawner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "agent/launch/wrapper_protocol.h"
#include "spdlog/spdlog.h"

extern char** environ;

namespace paceline::agent {

WrapperSpawner::WrapperSpawner(std::string wrapper, std::vector<std::string> self_cgroups,
                               bool use_zygote)
    : wrapper_(std::move(wrapper)), argv_{wrapper_, "--mode=supervise"}, use_zygote_(use_zygote) {
  for (const std::string& f : self_cgroups) argv_.push_back(absl::StrCat("--self-cgroup=", f));
}

WrapperSpawner::~WrapperSpawner() { StopZygote(); }

void WrapperSpawner::StopZygote() {
  if (!zygote_.valid()) return;
  // Its wrappers carry on (re-parented); only the zygote itself goes, now, even if it is stuck.
  zygote_.Reset();
  ::kill(zygote_pid_, SIGKILL);
  int ws = 0;
  while (::waitpid(zygote_pid_, &ws, 0) < 0 && errno == EINTR) {
  }
  zygote_pid_ = 0;
}

absl::Status WrapperSpawner::StartZygote() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    return ErrnoStatus(errno, "socketpair");
  }
  UniqueFd ours(sv[0]), theirs(sv[1]);
  std::vector<std::string> argv = argv_;
  argv[1] = "--mode=zygote";
  std::vector<char*> cargv = wrapper::ExecArray(argv);
  char* no_env[] = {nullptr};
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t fa;
  wrapper::InitWrapperSpawn(&attr, &fa);
  posix_spawn_file_actions_adddup2(&fa, theirs.get(), wrapper::kControlFd);
  posix_spawn_file_actions_addclosefrom_np(&fa, wrapper::kControlFd + 1);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, wrapper_.c_str(), &fa, &attr, cargv.data(), no_env);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return ErrnoStatus(rc, absl::StrCat("spawn ", wrapper_, " --mode=zygote"));
  zygote_pid_ = pid;
  zygote_ = std::move(ours);
  return absl::OkStatus();
}

absl::StatusOr<SpawnedWrapper> WrapperSpawner::SpawnViaZygote() {
  std::string req = wrapper::EncodeRequest(argv_, {});
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return ErrnoStatus(errno, "socketpair");
  }
  SpawnedWrapper out;
  out.control.Reset(sv[0]);
  UniqueFd child_end(sv[1]);
  ::fcntl(out.control.get(), F_SETFL, O_NONBLOCK);

  char cbuf[CMSG_SPACE(sizeof(int))] = {};
  struct iovec iov = {req.data(), req.size()};
  struct msghdr msg {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = cbuf;
  msg.msg_controllen = sizeof(cbuf);
  struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  int fd = child_end.get();
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  if (::sendmsg(zygote_.get(), &msg, MSG_NOSIGNAL) != static_cast<ssize_t>(req.size())) {
    return ErrnoStatus(errno, "send to the wrapper zygote");
  }
  child_end.Reset();
  struct pollfd p = {zygote_.get(), POLLIN, 0};
  if (::poll(&p, 1, 5000) != 1) return absl::DeadlineExceededError("the wrapper zygote is stuck");
  char reply[32];
  ssize_t n = ::recv(zygote_.get(), reply, sizeof(reply) - 1, 0);
  if (n <= 0) return absl::UnavailableError("the wrapper zygote went away");
  reply[n] = '\0';
  pid_t pid = 0;
  if (!absl::SimpleAtoi(reply, &pid) || pid <= 0) {
    return absl::InternalError("the wrapper zygote could not fork");
  }
  out.pid = pid;
  // The supervisor waits for its first request, so it cannot have exited (and its pid been
  // reused) yet.
  out.pidfd.Reset(PidfdOpen(pid));
  if (!out.pidfd.valid()) return ErrnoStatus(errno, "pidfd_open of a zygote-made wrapper");
  return out;
}

absl::StatusOr<SpawnedWrapper> WrapperSpawner::Spawn() {
  if (use_zygote_) {
    if (!zygote_.valid() && absl::Now() >= retry_after_) {
      absl::Status s = StartZygote();
      if (!s.ok()) spdlog::warn("wrapper zygote: {}; spawning supervisors directly", s.ToString());
      retry_after_ = absl::Now() + absl::Seconds(1);
    }
    if (zygote_.valid()) {
      absl::StatusOr<SpawnedWrapper> w = SpawnViaZygote();
      if (w.ok()) {
        ++by_zygote_;
        return w;
      }
      spdlog::warn("wrapper zygote: {}; restarting it", w.status().ToString());
      StopZygote();
    }
  }
  return SpawnWrapperArgv(argv_, nullptr, /*with_control=*/true);
}

}  // namespace paceline::agent
