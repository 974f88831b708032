#include "agent/base/poller.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"

namespace paceline::agent {

absl::StatusOr<std::unique_ptr<Poller>> Poller::Create() {
  UniqueFd ep(::epoll_create1(EPOLL_CLOEXEC));
  if (!ep.valid()) return ErrnoStatus(errno, "epoll_create1");
  UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake.valid()) return ErrnoStatus(errno, "eventfd");
  struct epoll_event ev {};
  ev.events = EPOLLIN;
  ev.data.u64 = 0;
  if (::epoll_ctl(ep.get(), EPOLL_CTL_ADD, wake.get(), &ev) != 0) {
    return ErrnoStatus(errno, "epoll_ctl(eventfd)");
  }
  return std::unique_ptr<Poller>(new Poller(std::move(ep), std::move(wake)));
}

absl::StatusOr<uint64_t> Poller::Add(int fd, uint32_t events, Callback cb) {
  uint64_t id = next_id_++;
  struct epoll_event ev {};
  ev.events = events;
  ev.data.u64 = id;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
    return ErrnoStatus(errno, absl::StrCat("epoll_ctl(ADD, ", fd, ")"));
  }
  entries_.emplace(id, Entry{fd, std::move(cb)});
  return id;
}

absl::Status Poller::Modify(uint64_t id, uint32_t events) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return absl::NotFoundError(absl::StrCat("poller id ", id));
  struct epoll_event ev {};
  ev.events = events;
  ev.data.u64 = id;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, it->second.fd, &ev) != 0) {
    return ErrnoStatus(errno, "epoll_ctl(MOD)");
  }
  return absl::OkStatus();
}

void Poller::Remove(uint64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, it->second.fd, nullptr);
  entries_.erase(it);
}

int Poller::Dispatch(absl::Duration timeout) {
  int timeout_ms = 0;
  if (timeout == absl::InfiniteDuration()) {
    timeout_ms = -1;
  } else if (timeout > absl::ZeroDuration()) {
    timeout_ms =
        static_cast<int>(absl::ToInt64Milliseconds(absl::Ceil(timeout, absl::Milliseconds(1))));
  }
  struct epoll_event events[256];
  int n = ::epoll_wait(epoll_.get(), events, 256, timeout_ms);
  if (n <= 0) return 0;
  int ran = 0;
  for (int i = 0; i < n; ++i) {
    uint64_t id = events[i].data.u64;
    if (id == 0) {
      uint64_t v;
      while (::read(wake_.get(), &v, sizeof(v)) > 0) {
      }
      continue;
    }
    auto it = entries_.find(id);
    if (it == entries_.end()) continue;
    Callback cb = it->second.cb;  // the callback may remove its own entry
    cb(events[i].events);
    ++ran;
  }
  return ran;
}

void Poller::Wakeup() {
  uint64_t one = 1;
  ssize_t n = ::write(wake_.get(), &one, sizeof(one));
  (void)n;
}

}  // namespace paceline::agent
