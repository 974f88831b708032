#pragma once
// Poller: the runtime's event loop primitive, an epoll set of file descriptors with callbacks
// plus an eventfd so another thread can wake a blocked Wait.
//
// Registrations are named by ids, not pointers: a callback that removes another registration in
// the middle of a batch is safe (events for removed ids are dropped).
//
// Thread-safety: everything on the owning thread, except Wakeup() (any thread).

#include <sys/epoll.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/file_util.h"

namespace paceline::agent {

class Poller {
 public:
  using Callback = std::function<void(uint32_t events)>;

  static absl::StatusOr<std::unique_ptr<Poller>> Create();

  // Watches `fd` (not owned) for `events` (EPOLLIN, EPOLLOUT, ...). Returns the registration id.
  absl::StatusOr<uint64_t> Add(int fd, uint32_t events, Callback cb);
  absl::Status Modify(uint64_t id, uint32_t events);
  // Stops watching; call before closing the fd. Unknown ids are ignored.
  void Remove(uint64_t id);

  // Waits up to `timeout` (ZeroDuration = do not block) and runs the callbacks of ready fds.
  // Returns how many ran; a Wakeup() ends the wait without a callback.
  int Dispatch(absl::Duration timeout);
  // Wakes a Dispatch blocked on another thread.
  void Wakeup();

  // The epoll fd, readable when something is ready (for embedding in another loop).
  int fd() const { return epoll_.get(); }
  size_t size() const { return entries_.size(); }

 private:
  Poller(UniqueFd epoll, UniqueFd wake) : epoll_(std::move(epoll)), wake_(std::move(wake)) {}

  struct Entry {
    int fd;
    Callback cb;
  };
  UniqueFd epoll_;
  UniqueFd wake_;
  uint64_t next_id_ = 1;  // 0 is the wake eventfd
  absl::flat_hash_map<uint64_t, Entry> entries_;
};

}  // namespace paceline::agent
