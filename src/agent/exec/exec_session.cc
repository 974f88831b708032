#include "agent/exec/exec_session.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "absl/time/clock.h"

namespace paceline::agent {

ExecSession::ExecSession(std::unique_ptr<ExecProcess> process, uint32_t window, Sink sink)
    : process_(std::move(process)),
      window_(std::max<uint32_t>(window, kChunk)),
      sink_(std::move(sink)),
      wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  // A terminal is stdout and stderr at once (but a container runtime's own output is apart).
  err_open_ = process_->stderr_fd() >= 0;
}

ExecSession::~ExecSession() = default;

void ExecSession::Post(ExecInputs in) {
  {
    absl::MutexLock lock(&mu_);
    posted_.stdin += in.stdin;
    posted_.close_stdin = posted_.close_stdin || in.close_stdin;
    if (in.resize) posted_.resize = in.resize;
    posted_.output_credit += in.output_credit;
    posted_.cancel = posted_.cancel || in.cancel;
  }
  uint64_t one = 1;
  (void)::write(wake_.get(), &one, sizeof(one));
}

bool ExecSession::TakeInputs() {
  uint64_t drained;
  (void)::read(wake_.get(), &drained, sizeof(drained));
  ExecInputs in;
  {
    absl::MutexLock lock(&mu_);
    in = std::exchange(posted_, ExecInputs{});
  }
  if (in.cancel) return false;
  if (stdin_closed_) {
    in.stdin.clear();  // after the end of the input: nothing more reaches the command
  } else {
    stdin_ += in.stdin;
  }
  close_stdin_ = close_stdin_ || in.close_stdin;
  if (in.resize) (void)process_->Resize(*in.resize);
  unacked_ -= std::min<uint64_t>(unacked_, in.output_credit);
  return true;
}

uint32_t ExecSession::WriteStdin() {
  uint32_t written = 0;
  const int fd = process_->stdin_fd();
  while (!stdin_.empty() && fd >= 0) {
    ssize_t n = ::write(fd, stdin_.data(), std::min(stdin_.size(), kChunk));
    if (n > 0) {
      stdin_.erase(0, static_cast<size_t>(n));
      written += static_cast<uint32_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) break;
    // The command closed its input (EPIPE): what is left is dropped, and credited.
    written += static_cast<uint32_t>(stdin_.size());
    stdin_.clear();
  }
  if (fd < 0) {
    written += static_cast<uint32_t>(stdin_.size());
    stdin_.clear();
  }
  if (stdin_.empty() && close_stdin_ && !stdin_closed_) {
    process_->CloseStdin();
    stdin_closed_ = true;
  }
  return written;
}

bool ExecSession::ReadSome(int fd, std::string& out) {
  const size_t room = std::min<uint64_t>(kChunk, window_ - unacked_ - out.size());
  if (room == 0) return true;
  char buf[kChunk];
  ssize_t n = ::read(fd, buf, room);
  if (n > 0) {
    out.append(buf, static_cast<size_t>(n));
    return true;
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
  return false;  // end of file, or EIO: a terminal with no other end left
}

void ExecSession::Run() {
  if (process_->awaiting_terminal()) {
    if (absl::Status s = process_->AwaitTerminal(kTerminalTimeout); !s.ok()) {
      process_->KillAndReap();
      sink_(ExecEvent{.error = std::string(s.message())});
      return;
    }
  }
  sink_(ExecEvent{.started = true});
  std::optional<ExecExit> exit;
  absl::Time quiet_since = absl::InfiniteFuture();  // after the exit: the last output seen
  for (;;) {
    if (!TakeInputs()) {
      process_->KillAndReap();
      return;
    }
    ExecEvent ev;
    ev.stdin_credit = WriteStdin();
    if (out_open_ && unacked_ < window_) out_open_ = ReadSome(process_->stdout_fd(), ev.out);
    if (err_open_ && unacked_ + ev.out.size() < window_) {
      err_open_ = ReadSome(process_->stderr_fd(), ev.err);
    }
    const bool output = !ev.out.empty() || !ev.err.empty();
    unacked_ += ev.out.size() + ev.err.size();
    const absl::Time now = absl::Now();
    if (!exit) {
      exit = process_->Reap();
      if (exit) quiet_since = now;
    }
    if (exit && output) quiet_since = now;
    const bool drained = !out_open_ && !err_open_;
    const bool quiet = unacked_ < window_ && now - quiet_since >= absl::Milliseconds(kDrainMs);
    if (exit && (drained || quiet)) {
      ev.exit = exit;
      sink_(std::move(ev));
      return;
    }
    if (output || ev.stdin_credit > 0) {
      sink_(std::move(ev));
      continue;  // there may be more at once
    }
    std::vector<pollfd> fds = {{wake_.get(), POLLIN, 0}};
    if (unacked_ < window_) {
      if (out_open_) fds.push_back({process_->stdout_fd(), POLLIN, 0});
      if (err_open_) fds.push_back({process_->stderr_fd(), POLLIN, 0});
    }
    if (!stdin_.empty() && process_->stdin_fd() >= 0) {
      fds.push_back({process_->stdin_fd(), POLLOUT, 0});
    }
    if (!exit) fds.push_back({process_->pidfd(), POLLIN, 0});
    int timeout = -1;
    if (exit && unacked_ < window_) {
      timeout = static_cast<int>(
          std::max<int64_t>(1, kDrainMs - absl::ToInt64Milliseconds(absl::Now() - quiet_since)));
    }
    ::poll(fds.data(), fds.size(), timeout);
  }
}

}  // namespace paceline::agent
