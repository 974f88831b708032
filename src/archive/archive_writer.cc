#include "archive/archive_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "archive/archive_files.h"
#include "archive/archive_format.h"
#include "archive/gzip.h"
#include "common/status.h"

namespace paceline::archive {
namespace {

// Makes the directory's new entries durable.
void SyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

absl::StatusOr<int64_t> ArchiveWriter::Recover(const std::string& day) {
  if (auto it = ends_.find(day); it != ends_.end()) return it->second;
  absl::StatusOr<std::string> index = ReadWhole(IndexPath(dir_, day));
  if (!index.ok() && !absl::IsNotFound(index.status())) return index.status();
  std::string text = index.ok() ? *std::move(index) : std::string();
  std::vector<IndexEntry> entries = ParseIndex(text);
  ASSIGN_OR_RETURN(int64_t data_size, FileSize(DataPath(dir_, day)));
  // Keep the entries whose member is wholly in the .gz (all of them, unless the .gz lost data).
  int64_t end = 0;
  size_t keep_bytes = 0;
  for (const IndexEntry& e : entries) {
    if (e.offset + e.length > data_size) break;
    end = std::max(end, e.offset + e.length);
    keep_bytes = e.line_end;
  }
  if (keep_bytes != text.size()) {
    RETURN_IF_ERROR(Truncate(IndexPath(dir_, day), static_cast<int64_t>(keep_bytes)));
  }
  if (data_size > end) RETURN_IF_ERROR(Truncate(DataPath(dir_, day), end));
  ends_[day] = end;
  return end;
}

absl::StatusOr<int64_t> ArchiveWriter::Append(const std::vector<records::JobHistory>& jobs,
                                              absl::Time archived_at) {
  struct Day {
    std::string lines;
    std::vector<IndexEntry> entries;
  };
  std::map<std::string, Day> days;
  for (const records::JobHistory& h : jobs) {
    const absl::Time finished = FinishedAt(h);
    Day& d = days[DayOf(finished)];
    absl::StrAppend(&d.lines, ArchiveLine(h, archived_at), "\n");
    d.entries.push_back(IndexEntry{h.job.id, 0, 0, finished, h.job.pool});
  }
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", dir_, ": ", ec.message()));
  int64_t written = 0;
  for (auto& [day, d] : days) {
    ASSIGN_OR_RETURN(int64_t offset, Recover(day));
    const bool fresh = offset == 0;
    const std::string member = GzipMember(d.lines);
    RETURN_IF_ERROR(AppendDurably(DataPath(dir_, day), offset, member));
    std::string index;
    for (IndexEntry& e : d.entries) {
      e.offset = offset;
      e.length = static_cast<int64_t>(member.size());
      index += IndexLine(e);
    }
    ASSIGN_OR_RETURN(int64_t index_size, FileSize(IndexPath(dir_, day)));
    absl::Status s = AppendDurably(IndexPath(dir_, day), index_size, index);
    if (!s.ok()) {
      (void)Truncate(DataPath(dir_, day), offset);  // the member is not indexed: take it back
      return s;
    }
    if (fresh) SyncDir(dir_);
    ends_[day] = offset + static_cast<int64_t>(member.size());
    written += static_cast<int64_t>(member.size());
  }
  return written;
}

}  // namespace paceline::archive
