#include "image/archive_extract.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <set>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/status.h"
#include "image/rootfs_path.h"

namespace paceline::image::internal {
namespace {

constexpr size_t kBufferBytes = 1 << 20;

absl::string_view StripDotSlash(absl::string_view path) {
  if (absl::StartsWith(path, "./")) path.remove_prefix(2);
  return path;
}

// The kept file a link entry named `name` points to: `target` relative to the entry's
// directory for a symlink, to the archive's root for a hard link. "" when it points to
// anything else.
std::string LinkTarget(absl::string_view name, absl::string_view target, bool symlink) {
  if (target.empty() || target.front() == '/') return "";
  std::vector<std::string> parts;
  if (symlink) {
    parts = absl::StrSplit(name, '/', absl::SkipEmpty());
    if (!parts.empty()) parts.pop_back();
  }
  for (absl::string_view c : absl::StrSplit(target, '/', absl::SkipEmpty())) {
    if (c == ".") continue;
    if (c == "..") {
      if (parts.empty()) return "";
      parts.pop_back();
      continue;
    }
    parts.emplace_back(c);
  }
  std::string joined = absl::StrJoin(parts, "/");
  return IsImageArchiveFile(joined) ? joined : "";
}

// The directory `rel` ("blobs/sha256", "<hex>") below `dir_fd`, made (0700) where missing.
// Only directories and regular files are ever made below `dir_fd`, so nothing met is a link.
absl::StatusOr<Fd> MakeDirs(int dir_fd, absl::string_view rel) {
  Fd current(::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0));
  if (!current.valid()) return IoError(errno, "dup");
  for (absl::string_view c : absl::StrSplit(rel, '/')) {
    std::string name(c);
    if (::mkdirat(current.get(), name.c_str(), 0700) != 0 && errno != EEXIST) {
      return IoError(errno, absl::StrCat("mkdir ", rel));
    }
    Fd next(::openat(current.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) return IoError(errno, absl::StrCat("open ", rel));
    current = std::move(next);
  }
  return current;
}

absl::Status WriteAll(int fd, const char* data, size_t n, const std::string& what) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return IoError(errno, absl::StrCat("write ", what));
    data += w;
    n -= static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

class Extractor {
 public:
  Extractor(const std::string& archive_path, archive* a, int dir_fd, const ArchiveLimits& limits,
            std::map<std::string, std::string>* aliases)
      : path_(archive_path), a_(a), dir_fd_(dir_fd), limits_(limits), aliases_(aliases) {}

  absl::Status Run() {
    int64_t entries = 0;
    while (true) {
      archive_entry* e = nullptr;
      int r = archive_read_next_header(a_, &e);
      if (r == ARCHIVE_EOF) return absl::OkStatus();
      if (r < ARCHIVE_WARN) {
        const char* what = archive_error_string(a_);
        std::string message = absl::StrCat(
            path_, entries == 0 ? ": not a tar archive (" : ": corrupt or truncated tar archive (",
            what ? what : "?", ")");
        if (entries == 0) return absl::InvalidArgumentError(message);
        return absl::DataLossError(message);
      }
      if (++entries > limits_.max_entries) {
        return absl::InvalidArgumentError(
            absl::StrCat(path_, ": more than ", limits_.max_entries, " entries"));
      }
      RETURN_IF_ERROR(Entry(e, entries));
    }
  }

 private:
  absl::Status Refuse(absl::string_view name, absl::string_view why) const {
    return absl::InvalidArgumentError(
        absl::StrCat(path_, ": entry \"", name, "\": ", why, "; refusing the archive"));
  }

  absl::Status Entry(archive_entry* e, int64_t index) {
    const char* raw = archive_entry_pathname(e);
    if (raw == nullptr) {
      return Refuse(absl::StrCat("#", index), "the name is not valid in this locale");
    }
    absl::string_view name = raw;
    if (absl::Status s = SplitEntryPath(name).status(); !s.ok()) return Refuse(name, s.message());
    const char* hardlink = archive_entry_hardlink(e);
    if (hardlink != nullptr) {
      if (absl::Status s = SplitEntryPath(hardlink).status(); !s.ok()) {
        return Refuse(name, absl::StrCat("its link target \"", hardlink, "\": ", s.message()));
      }
    }
    std::string rel(StripDotSlash(name));
    if (!IsImageArchiveFile(rel)) return absl::OkStatus();  // not part of an image
    const mode_t type = archive_entry_filetype(e);
    if (hardlink != nullptr || type == AE_IFLNK) {
      std::string target =
          hardlink != nullptr
              ? LinkTarget("", StripDotSlash(hardlink), /*symlink=*/false)
              : LinkTarget(rel, archive_entry_symlink(e) ? archive_entry_symlink(e) : "",
                           /*symlink=*/true);
      if (target.empty()) return absl::OkStatus();  // a link to something else: skipped
      RETURN_IF_ERROR(Claim(name, rel));
      (*aliases_)[rel] = target;
      return absl::OkStatus();
    }
    if (type != AE_IFREG) return absl::OkStatus();
    RETURN_IF_ERROR(Claim(name, rel));
    if (archive_entry_size_is_set(e) && archive_entry_size(e) > limits_.max_file_bytes) {
      return Refuse(name, absl::StrCat("larger than ", limits_.max_file_bytes, " bytes"));
    }
    return Write(name, rel);
  }

  // Counts a kept file and refuses a second one of the same name.
  absl::Status Claim(absl::string_view name, const std::string& rel) {
    if (!seen_.insert(rel).second) return Refuse(name, "a second file of the same name");
    if (static_cast<int64_t>(seen_.size()) > limits_.max_files) {
      return Refuse(name, absl::StrCat("more than ", limits_.max_files, " image files"));
    }
    return absl::OkStatus();
  }

  absl::Status Write(absl::string_view name, const std::string& rel) {
    const size_t slash = rel.rfind('/');
    Fd parent;
    if (slash != std::string::npos) {
      ASSIGN_OR_RETURN(parent, MakeDirs(dir_fd_, absl::string_view(rel).substr(0, slash)));
    }
    const int parent_fd = parent.valid() ? parent.get() : dir_fd_;
    const std::string leaf = slash == std::string::npos ? rel : rel.substr(slash + 1);
    Fd out(::openat(parent_fd, leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    0600));
    if (!out.valid()) return IoError(errno, absl::StrCat("create ", rel));
    buf_.resize(kBufferBytes);
    int64_t total = 0;
    while (true) {
      la_ssize_t n = archive_read_data(a_, buf_.data(), buf_.size());
      if (n == 0) break;
      if (n < 0) {
        const char* what = archive_error_string(a_);
        return absl::DataLossError(absl::StrCat(
            path_, ": entry \"", name, "\": corrupt or truncated (", what ? what : "?", ")"));
      }
      total += n;
      if (total > limits_.max_file_bytes) {
        return Refuse(name, absl::StrCat("larger than ", limits_.max_file_bytes, " bytes"));
      }
      RETURN_IF_ERROR(WriteAll(out.get(), buf_.data(), static_cast<size_t>(n), rel));
    }
    if (::close(out.Release()) != 0) return IoError(errno, absl::StrCat("write ", rel));
    return absl::OkStatus();
  }

  const std::string& path_;
  archive* a_;
  int dir_fd_;
  const ArchiveLimits& limits_;
  std::map<std::string, std::string>* aliases_;
  std::set<std::string> seen_;
  std::vector<char> buf_;
};

}  // namespace

bool IsHex64(absl::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool IsImageArchiveFile(absl::string_view path) {
  if (path == "oci-layout" || path == "index.json" || path == "manifest.json" ||
      path == "repositories") {
    return true;
  }
  if (absl::ConsumePrefix(&path, "blobs/sha256/")) return IsHex64(path);
  if (path.size() == 64 + 5 && absl::EndsWith(path, ".json")) return IsHex64(path.substr(0, 64));
  if (path.size() > 65 && path[64] == '/' && IsHex64(path.substr(0, 64))) {
    absl::string_view file = path.substr(65);
    return file == "layer.tar" || file == "json" || file == "VERSION";
  }
  return false;
}

absl::Status ExtractImageArchive(const std::string& archive_path, int dir_fd,
                                 const ArchiveLimits& limits,
                                 std::map<std::string, std::string>* aliases) {
  Fd fd(::open(archive_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return IoError(errno, absl::StrCat("open ", archive_path));
  std::unique_ptr<archive, int (*)(archive*)> a(archive_read_new(), archive_read_free);
  if (a == nullptr) return absl::ResourceExhaustedError("archive_read_new: out of memory");
  archive_read_support_filter_all(a.get());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_fd(a.get(), fd.get(), 1 << 16) != ARCHIVE_OK) {
    const char* what = archive_error_string(a.get());
    return absl::InvalidArgumentError(
        absl::StrCat(archive_path, ": not a tar archive (", what ? what : "?", ")"));
  }
  return Extractor(archive_path, a.get(), dir_fd, limits, aliases).Run();
}

}  // namespace paceline::image::internal
