#pragma once
// AppendLog: a durable append-only file of text lines, the storage under Checkpoint and Outbox.
//
// Append() writes a line with one write(2) into the page cache: it survives a crash of the agent
// process (kill -9) immediately, and a crash of the machine once Sync() (fdatasync) returned —
// callers batch many appends per Sync. Rewrite() replaces the whole file atomically (temp file,
// fdatasync, rename, directory fsync) for compaction. Open() returns the complete lines; a torn
// last line (a crash in the middle of a write) is dropped and cut off the file.
//
// Thread-safety: not thread-safe; one owner.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/file_util.h"

namespace paceline::agent {

class AppendLog {
 public:
  static absl::StatusOr<std::unique_ptr<AppendLog>> Open(const std::string& path,
                                                         std::vector<std::string>* lines);

  absl::Status Append(absl::string_view line);
  absl::Status Sync();
  absl::Status Rewrite(const std::vector<std::string>& lines);

  int64_t bytes() const { return bytes_; }
  const std::string& path() const { return path_; }

 private:
  AppendLog(std::string path, UniqueFd fd, int64_t bytes)
      : path_(std::move(path)), fd_(std::move(fd)), bytes_(bytes) {}

  std::string path_;
  UniqueFd fd_;
  int64_t bytes_;
  bool dirty_ = false;
};

}  // namespace paceline::agent
