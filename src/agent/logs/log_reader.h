#pragma once
// Reading a task's captured stdout/stderr for `task logs` (tail) and `task logs -f` (follow
// from an offset), across the rotation done by RotatingLog (log_rotation.h).
//
// Offsets are logical: byte N of everything the task ever wrote to the stream. The current file
// holds [base, base + size(current)), the rotated ".1" file the bytes just before base. Reading
// from an offset that rotation already dropped returns the oldest kept bytes and says how many
// were skipped. A rotation racing with a read is detected (the base changed) and retried.
//
// Thread-safety: pure functions over files; any thread.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace paceline::agent {

enum class LogStream { kStdout, kStderr };

struct LogChunk {
  std::string data;
  int64_t offset = 0;       // logical offset of data[0]
  int64_t next_offset = 0;  // offset + data.size(): pass it to the next read to follow
  int64_t skipped = 0;      // bytes between the requested offset and `offset` lost to rotation
  bool finished = false;    // the run is over: nothing more will be written
};

struct LogFiles {
  std::string current;    // SANDBOX/stdout
  std::string rotated;    // SANDBOX/stdout.1
  std::string base_file;  // RUN_DIR/stdout.base
};

// At most `max_bytes` from logical `offset` on.
absl::StatusOr<LogChunk> ReadLogFrom(const LogFiles& files, int64_t offset, int64_t max_bytes);
// The last `lines` lines, within the last `max_bytes` bytes.
absl::StatusOr<LogChunk> ReadLogTail(const LogFiles& files, int64_t lines, int64_t max_bytes);

}  // namespace paceline::agent
