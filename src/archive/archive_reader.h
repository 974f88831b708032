#pragma once
// ArchiveReader: finds retired jobs in an archive directory (archive_format.h) through the
// days' indexes, inflating only the gzip members that hold them.
//
// Thread-safety: const methods, safe to call from several threads (they only read files; a
// writer appending meanwhile is fine: a reader sees whole indexed members only).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/ids.h"

namespace paceline::archive {

struct ArchiveQuery {
  absl::Time since = absl::InfinitePast();    // finished at or after
  absl::Time until = absl::InfiniteFuture();  // finished before
  std::string pool;                           // this pool and its subtree; "" or "/" = all
  size_t limit = 100;                         // > 0
};

struct ArchiveMatches {
  std::vector<std::string> lines;  // the jobs' lines, by finish time, then id
  bool truncated = false;          // more jobs matched than `limit`
};

class ArchiveReader {
 public:
  explicit ArchiveReader(std::string dir) : dir_(std::move(dir)) {}

  // The line of job `id`, nullopt when the archive does not hold it.
  absl::StatusOr<std::optional<std::string>> FindJob(JobId id) const;
  absl::StatusOr<ArchiveMatches> Find(const ArchiveQuery& query) const;

 private:
  std::string dir_;
};

}  // namespace paceline::archive
