#pragma once
// RotatingLog: the size-capped writer for a task's stdout or stderr, used inside
// paceline-task-wrapper (which reads the task's pipes; no extra process per task).
//
// Policy: rotate, keep one. The current file (e.g. SANDBOX/stdout) grows up to max_bytes / 2;
// the next byte rotates it to stdout.1 (replacing the previous .1) and starts a new stdout. So
// at most max_bytes per stream are ever on disk, and the newest output is always kept (a
// truncate-and-stop policy would lose exactly what an operator wants to see).
//
// Offsets: every byte the task writes has a logical offset (bytes written before it). The file
// BASE_FILE (agent-private, in the run dir) holds the logical offset of the current file's first
// byte; it is rewritten atomically on each rotation, and readers use it to serve "read from
// offset" across rotations (see log_reader.h).
//
// The current file is created on the first byte: a task that writes nothing to a stream leaves
// no file for it (creating files is a large part of a short task's cost on some file systems).
//
// Thread-safety: single-threaded. No abseil, so the wrapper stays small.

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace paceline::agent {

class RotatingLog {
 public:
  // `uid`/`gid` own the created files when >= 0 (the task user, so the task may read them).
  RotatingLog(std::string path, std::string base_file, int64_t max_bytes, int uid, int gid);
  ~RotatingLog();
  RotatingLog(const RotatingLog&) = delete;
  RotatingLog& operator=(const RotatingLog&) = delete;

  // Appends, creating the current file on the first call and rotating as needed. Errors (e.g.
  // disk full) drop the data: a full disk must not block or kill the task.
  void Write(const char* data, size_t n);

  int64_t base() const { return base_; }
  int64_t size() const { return size_; }

 private:
  // Creates the current file afresh (whatever had its name is unlinked first, never followed).
  bool Open();
  void Rotate();

  std::string path_;
  std::string rotated_path_;
  std::string base_file_;
  int64_t half_;
  int uid_;
  int gid_;
  int fd_ = -1;
  bool opened_ = false;  // Open() was called (fd_ < 0 after that: it failed; data is dropped)
  int64_t size_ = 0;     // bytes in the current file
  int64_t base_ = 0;     // logical offset of its first byte
};

}  // namespace paceline::agent
