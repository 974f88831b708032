#pragma once
// The files of an archive directory (archive_format.h): their names, the index's lines, and
// the few POSIX calls the writer and the reader share.
//
// Thread-safety: pure functions and plain file access.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/ids.h"

namespace paceline::archive {

std::string DataPath(const std::string& dir, const std::string& day);   // DIR/DAY.jsonl.gz
std::string IndexPath(const std::string& dir, const std::string& day);  // DIR/DAY.idx

// One line of a day's index.
struct IndexEntry {
  JobId job;
  int64_t offset = 0;  // of its gzip member in the day's .gz
  int64_t length = 0;
  absl::Time finished_at;
  std::string pool;
  size_t line_end = 0;  // set by ParseIndex: where its line ends in the index's text
};
std::string IndexLine(const IndexEntry& e);  // with its newline
// The complete lines of an index file's text, in order; a malformed or torn line ends them.
std::vector<IndexEntry> ParseIndex(absl::string_view text);

// The days that have an index in `dir`, oldest first ("2026-11-26", ...).
absl::StatusOr<std::vector<std::string>> ArchiveDays(const std::string& dir);

// A whole file; NOT_FOUND when it does not exist.
absl::StatusOr<std::string> ReadWhole(const std::string& path);
// `length` bytes of a file at `offset`; DATA_LOSS when the file is shorter.
absl::StatusOr<std::string> ReadRange(const std::string& path, int64_t offset, int64_t length);
// Appends `data` and fsyncs; on failure the file is cut back to `expected_size` (its size
// before) and the error returned. Creates the file (0640) when it is missing.
absl::Status AppendDurably(const std::string& path, int64_t expected_size, absl::string_view data);
// Cuts a file to `size` (and fsyncs); a missing file is left missing.
absl::Status Truncate(const std::string& path, int64_t size);
// The size of a file, 0 when it does not exist.
absl::StatusOr<int64_t> FileSize(const std::string& path);

}  // namespace paceline::archive
