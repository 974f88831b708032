#pragma once
// ArchiveWriter: appends retired jobs to the archive directory (archive_format.h has the
// layout), durably: when Append returns OK, the jobs' lines and index entries are on disk
// (fsync'd), so that the master may remove the jobs from the store.
//
// Crash safety: the index says which gzip members are complete. The first time the writer
// touches a day's files it cuts what follows the last indexed member from the .gz (a member
// written before a crash, or a write cut short by a full disk) and a torn last line from the
// .idx. Those jobs were not removed from the store, so they are archived again. A failed
// Append takes back what it wrote and changes nothing.
//
// Thread-safety: not thread-safe; one writer per directory (the master's retention worker).

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "records/records.h"

namespace paceline::archive {

class ArchiveWriter {
 public:
  explicit ArchiveWriter(std::string dir) : dir_(std::move(dir)) {}

  // Writes each job into the files of the day it finished, one gzip member per day touched.
  // Returns the bytes written (compressed).
  absl::StatusOr<int64_t> Append(const std::vector<records::JobHistory>& jobs,
                                 absl::Time archived_at);
  const std::string& dir() const { return dir_; }

 private:
  // The size of the day's .gz up to its last indexed member, after cutting anything past it.
  absl::StatusOr<int64_t> Recover(const std::string& day);

  std::string dir_;
  std::map<std::string, int64_t> ends_;  // by day: where the next member goes
};

}  // namespace paceline::archive
