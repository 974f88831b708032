#include "archive/archive_reader.h"

#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "archive/archive_files.h"
#include "archive/archive_format.h"
#include "archive/gzip.h"
#include "common/status.h"

namespace paceline::archive {
namespace {

absl::StatusOr<std::vector<IndexEntry>> ReadIndex(const std::string& dir, const std::string& day) {
  absl::StatusOr<std::string> text = ReadWhole(IndexPath(dir, day));
  if (absl::IsNotFound(text.status())) return std::vector<IndexEntry>{};
  if (!text.ok()) return text.status();
  return ParseIndex(*text);
}

// The last line of `member` (a gzip member of a day's data) that is job `id`'s.
absl::StatusOr<std::optional<std::string>> LineIn(const std::string& text, JobId id) {
  const std::string prefix = LinePrefix(id);
  std::optional<std::string> found;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, prefix)) found = std::string(line);
  }
  return found;
}

absl::StatusOr<std::string> Member(const std::string& dir, const std::string& day,
                                   const IndexEntry& e) {
  ASSIGN_OR_RETURN(std::string gz, ReadRange(DataPath(dir, day), e.offset, e.length));
  return Gunzip(gz);
}

}  // namespace

absl::StatusOr<std::optional<std::string>> ArchiveReader::FindJob(JobId id) const {
  ASSIGN_OR_RETURN(std::vector<std::string> days, ArchiveDays(dir_));
  for (auto day = days.rbegin(); day != days.rend(); ++day) {
    ASSIGN_OR_RETURN(std::vector<IndexEntry> entries, ReadIndex(dir_, *day));
    auto last = std::find_if(entries.rbegin(), entries.rend(),
                             [&](const IndexEntry& e) { return e.job == id; });
    if (last == entries.rend()) continue;
    ASSIGN_OR_RETURN(std::string text, Member(dir_, *day, *last));
    return LineIn(text, id);
  }
  return std::nullopt;
}

absl::StatusOr<ArchiveMatches> ArchiveReader::Find(const ArchiveQuery& q) const {
  ASSIGN_OR_RETURN(std::vector<std::string> days, ArchiveDays(dir_));
  const std::string first = q.since == absl::InfinitePast() ? "" : DayOf(q.since);
  const std::string last = q.until == absl::InfiniteFuture() ? "~" : DayOf(q.until);
  struct Hit {
    IndexEntry entry;
    std::string day;
  };
  absl::flat_hash_map<JobId, Hit> hits;  // the last entry of each job wins
  for (const std::string& day : days) {
    if (day < first || day > last) continue;
    ASSIGN_OR_RETURN(std::vector<IndexEntry> entries, ReadIndex(dir_, day));
    for (IndexEntry& e : entries) {
      if (e.finished_at < q.since || e.finished_at >= q.until || !InPool(e.pool, q.pool)) continue;
      hits[e.job] = Hit{std::move(e), day};
    }
  }
  std::vector<Hit> sorted;
  sorted.reserve(hits.size());
  for (auto& [_, h] : hits) sorted.push_back(std::move(h));
  std::sort(sorted.begin(), sorted.end(), [](const Hit& a, const Hit& b) {
    return std::tie(a.entry.finished_at, a.entry.job) < std::tie(b.entry.finished_at, b.entry.job);
  });
  ArchiveMatches out;
  out.truncated = sorted.size() > q.limit;
  if (out.truncated) sorted.resize(q.limit);
  std::map<std::pair<std::string, int64_t>, std::string> members;  // inflated once each
  for (const Hit& h : sorted) {
    auto key = std::make_pair(h.day, h.entry.offset);
    auto it = members.find(key);
    if (it == members.end()) {
      ASSIGN_OR_RETURN(std::string text, Member(dir_, h.day, h.entry));
      it = members.emplace(key, std::move(text)).first;
    }
    ASSIGN_OR_RETURN(std::optional<std::string> line, LineIn(it->second, h.entry.job));
    if (line) out.lines.push_back(*std::move(line));
  }
  return out;
}

}  // namespace paceline::archive
