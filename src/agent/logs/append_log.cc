#include "agent/logs/append_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status.h"

namespace paceline::agent {

absl::StatusOr<std::unique_ptr<AppendLog>> AppendLog::Open(const std::string& path,
                                                           std::vector<std::string>* lines) {
  lines->clear();
  std::string text;
  if (PathExists(path)) {
    ASSIGN_OR_RETURN(text, ReadFile(path));
  }
  size_t complete = text.rfind('\n');
  complete = complete == std::string::npos ? 0 : complete + 1;
  for (absl::string_view line :
       absl::StrSplit(absl::string_view(text).substr(0, complete), '\n', absl::SkipEmpty())) {
    lines->emplace_back(line);
  }
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  if (complete != text.size() && ::ftruncate(fd.get(), static_cast<off_t>(complete)) != 0) {
    return ErrnoStatus(errno, absl::StrCat("truncate the torn tail of ", path));
  }
  return std::unique_ptr<AppendLog>(
      new AppendLog(path, std::move(fd), static_cast<int64_t>(complete)));
}

absl::Status AppendLog::Append(absl::string_view line) {
  std::string buf;
  buf.reserve(line.size() + 1);
  buf.append(line.data(), line.size());
  buf.push_back('\n');
  absl::Status s = WriteAll(fd_.get(), buf);
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat(path_, ": ", s.message()));
  bytes_ += static_cast<int64_t>(buf.size());
  dirty_ = true;
  return absl::OkStatus();
}

absl::Status AppendLog::Sync() {
  if (!dirty_) return absl::OkStatus();
  if (::fdatasync(fd_.get()) != 0) return ErrnoStatus(errno, absl::StrCat("fdatasync ", path_));
  dirty_ = false;
  return absl::OkStatus();
}

absl::Status AppendLog::Rewrite(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& l : lines) absl::StrAppend(&text, l, "\n");
  RETURN_IF_ERROR(WriteFileAtomic(path_, text, /*sync=*/true));
  UniqueFd fd(::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("reopen ", path_));
  fd_ = std::move(fd);
  bytes_ = static_cast<int64_t>(text.size());
  dirty_ = false;
  return absl::OkStatus();
}

}  // namespace paceline::agent
