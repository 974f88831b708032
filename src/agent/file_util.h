#pragma once
// Small POSIX file helpers used across the agent: owned file descriptors, whole-file reads,
// atomic replacement (temp file + rename + fsync), recursive mkdir / remove, and errno -> Status.
//
// Every descriptor the agent opens is O_CLOEXEC so that no task inherits it.
//
// Thread-safety: free functions without shared state; UniqueFd is a move-only value.

#include <sys/types.h>

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paceline::agent {

// An owned file descriptor, closed on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) Reset(std::exchange(o.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release() { return std::exchange(fd_, -1); }
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

// A Status with the canonical code of `err` and "what: strerror(err)".
absl::Status ErrnoStatus(int err, absl::string_view what);

// Reads a whole (small or large) file.
absl::StatusOr<std::string> ReadFile(const std::string& path);
// Writes `data` to `path` (created 0600 or truncated), without fsync.
absl::Status WriteFile(const std::string& path, absl::string_view data, mode_t mode = 0600);
// Writes `data` to an existing file without O_CREAT/O_TRUNC (cgroup control files).
absl::Status WriteExisting(const std::string& path, absl::string_view data);
// Replaces `path` atomically: writes `path.tmp` (0600), optionally fdatasyncs it, renames it
// over `path` and (when `sync`) fsyncs the directory, so a reader sees the old or the new
// content (common/atomic_file.h with these options; a failure leaves `path.tmp`).
absl::Status WriteFileAtomic(const std::string& path, absl::string_view data, bool sync);
// fsync of a directory (after a rename or create inside it).
absl::Status SyncDir(const std::string& dir);

// mkdir -p with `mode` for every directory it creates (existing ones are left alone).
absl::Status MakeDirs(const std::string& path, mode_t mode);
// rm -rf without following symlinks; OK when `path` does not exist.
absl::Status RemoveTree(const std::string& path);
bool PathExists(const std::string& path);

// The directory part of "a/b/c" ("a/b"); "." when there is none.
std::string Dirname(absl::string_view path);

// Writes all of `data` to `fd`, retrying on EINTR and short writes.
absl::Status WriteAll(int fd, absl::string_view data);

}  // namespace paceline::agent
