#include "agent/logs/log_rotation.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace paceline::agent {

RotatingLog::RotatingLog(std::string path, std::string base_file, int64_t max_bytes, int uid,
                         int gid)
    : path_(std::move(path)),
      rotated_path_(path_ + ".1"),
      base_file_(std::move(base_file)),
      half_(std::max<int64_t>(max_bytes / 2, 1)),
      uid_(uid),
      gid_(gid) {}

RotatingLog::~RotatingLog() {
  if (fd_ >= 0) ::close(fd_);
}

bool RotatingLog::Open() {
  opened_ = true;
  // The directory belongs to the task's user and the wrapper is root: never follow or reuse
  // what the task may have put under this name (a symlink to /etc/shadow, a hard link).
  if (::unlink(path_.c_str()) != 0 && errno != ENOENT) return false;
  fd_ =
      ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0) return false;
  if (uid_ >= 0 && ::fchown(fd_, static_cast<uid_t>(uid_), static_cast<gid_t>(gid_)) != 0) {
    return false;
  }
  return true;
}

void RotatingLog::Rotate() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::rename(path_.c_str(), rotated_path_.c_str());
  base_ += size_;
  size_ = 0;
  // Publish the new base before the new file exists, so a reader never sees a fresh file with
  // an old base (it may briefly see the old base with no current file: it retries).
  std::string tmp = base_file_ + ".tmp";
  int bfd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (bfd >= 0) {
    std::string text = std::to_string(base_) + "\n";
    ssize_t n = ::write(bfd, text.data(), text.size());
    ::close(bfd);
    if (n == static_cast<ssize_t>(text.size())) ::rename(tmp.c_str(), base_file_.c_str());
  }
  Open();
}

void RotatingLog::Write(const char* data, size_t n) {
  if (!opened_) Open();
  while (n > 0) {
    if (size_ >= half_) Rotate();
    if (fd_ < 0) return;
    size_t chunk = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(n), half_ - size_));
    ssize_t w = ::write(fd_, data, chunk);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;  // disk full or similar: drop
    }
    size_ += w;
    data += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace paceline::agent
