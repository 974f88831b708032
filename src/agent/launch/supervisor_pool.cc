#include "agent/launch/supervisor_pool.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "agent/host/proc_stat.h"
#include "agent/launch/wrapper_protocol.h"
#include "common/status.h"

namespace paceline::agent {

SupervisorPool::SupervisorPool(WrapperSpawner& spawner, std::function<void(UniqueFd)> reap,
                               size_t max_free)
    : spawner_(spawner), reap_(std::move(reap)), max_free_(max_free) {}

SupervisorPool::~SupervisorPool() {
  for (Supervisor& s : free_) LetGo(std::move(s));
}

absl::StatusOr<Supervisor> SupervisorPool::Take(const std::string& cgroup) {
  if (!cgroup.empty()) {
    constexpr size_t kLookBack = 8;
    for (size_t i = free_.size(), n = 0; i > 0 && n < kLookBack; --i, ++n) {
      if (free_[i - 1].cgroup != cgroup) continue;
      std::swap(free_[i - 1], free_.back());
      break;
    }
  }
  while (!free_.empty()) {
    Supervisor s = std::move(free_.back());
    free_.pop_back();
    // A free supervisor has nothing to say and does not exit: if its pidfd or socket is
    // readable, it died (or was killed) while free.
    struct pollfd p[2] = {{s.pidfd.get(), POLLIN, 0}, {s.control.get(), POLLIN, 0}};
    if (::poll(p, 2, 0) == 0) {
      ++reused_;
      ++taken_since_trim_;
      return s;
    }
    LetGo(std::move(s));
  }
  absl::StatusOr<SpawnedWrapper> w = spawner_.Spawn();
  if (!w.ok()) return w.status();
  Supervisor s;
  s.pid = w->pid;
  s.pidfd = std::move(w->pidfd);
  s.control = std::move(w->control);
  // It waits for its first request: alive, so this is its start time.
  absl::StatusOr<PidStat> st = ReadPidStat(s.pid);
  s.start_ticks = st.ok() ? st->start_ticks : 0;
  ++started_;
  ++taken_since_trim_;
  return s;
}

absl::Status SupervisorPool::Send(const Supervisor& s, const WrapperArgs& args) {
  static const std::vector<std::string> kNoEnv;
  std::string body =
      wrapper::EncodeRequest(BuildWrapperArgv(args), args.env != nullptr ? *args.env : kNoEnv);
  if (body.size() > wrapper::kMaxRunRequest) {
    return absl::InvalidArgumentError(absl::StrCat("the run request (command and environment) is ",
                                                   body.size(), " bytes; at most ",
                                                   wrapper::kMaxRunRequest, " are accepted"));
  }
  std::string req = absl::StrCat(body.size(), "\n", body);
  size_t done = 0;
  while (done < req.size()) {
    ssize_t n = ::send(s.control.get(), req.data() + done, req.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // A large request: the supervisor reads it as it comes.
      struct pollfd p = {s.control.get(), POLLOUT, 0};
      if (::poll(&p, 1, 5000) == 1 && !(p.revents & (POLLERR | POLLHUP))) continue;
    }
    return absl::UnavailableError(
        absl::StrCat("supervisor ", s.pid, " went away before its run request was sent"));
  }
  return absl::OkStatus();
}

void SupervisorPool::Give(Supervisor s) {
  if (free_.size() >= max_free_) return LetGo(std::move(s));
  free_.push_back(std::move(s));
}

void SupervisorPool::LetGo(Supervisor s) {
  s.control.Reset();  // EOF while free: it exits
  if (s.pidfd.valid() && reap_) reap_(std::move(s.pidfd));
}

void SupervisorPool::Trim() {
  size_t unused = free_.size() > taken_since_trim_ ? free_.size() - taken_since_trim_ : 0;
  for (size_t i = 0; i < unused; ++i) LetGo(std::move(free_[i]));  // the longest free
  free_.erase(free_.begin(), free_.begin() + static_cast<ptrdiff_t>(unused));
  taken_since_trim_ = 0;
}

}  // namespace paceline::agent
