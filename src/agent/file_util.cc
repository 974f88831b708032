#include "agent/file_util.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"

namespace paceline::agent {

void UniqueFd::Reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

absl::Status ErrnoStatus(int err, absl::string_view what) { return absl::ErrnoToStatus(err, what); }

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  std::string out;
  char buf[16384];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, absl::StrCat("read ", path));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

absl::Status WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "write");
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status WriteFile(const std::string& path, absl::string_view data, mode_t mode) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  absl::Status s = WriteAll(fd.get(), data);
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
  return absl::OkStatus();
}

absl::Status WriteExisting(const std::string& path, absl::string_view data) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", path));
  ssize_t n;
  do {
    n = ::write(fd.get(), data.data(), data.size());
  } while (n < 0 && errno == EINTR);
  if (n < 0) return ErrnoStatus(errno, absl::StrCat("write '", data, "' to ", path));
  return absl::OkStatus();
}

absl::Status SyncDir(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, absl::StrCat("open ", dir));
  if (::fsync(fd.get()) != 0) return ErrnoStatus(errno, absl::StrCat("fsync ", dir));
  return absl::OkStatus();
}

absl::Status WriteFileAtomic(const std::string& path, absl::string_view data, bool sync) {
  using Options = AtomicWriteOptions;
  return WriteFileAtomically(
      path, data,
      {.mode = 0600,
       .temp_suffix = ".tmp",
       .sync = sync ? Options::Sync::kData : Options::Sync::kNone,
       .dir_sync = sync ? Options::DirSync::kChecked : Options::DirSync::kNone,
       .remove_temp_on_failure = false},
      ErrnoStatus);
}

std::string Dirname(absl::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

absl::Status MakeDirs(const std::string& path, mode_t mode) {
  if (path.empty()) return absl::InvalidArgumentError("MakeDirs: empty path");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(path, " exists and is not a directory"));
  }
  std::string parent = Dirname(path);
  if (parent != path && parent != "." && parent != "/") {
    absl::Status s = MakeDirs(parent, mode);
    if (!s.ok()) return s;
  }
  if (::mkdir(path.c_str(), mode) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, absl::StrCat("mkdir ", path));
  }
  return absl::OkStatus();
}

namespace {
int RemoveEntry(const char* path, const struct stat*, int typeflag, struct FTW*) {
  int rc = (typeflag == FTW_DP) ? ::rmdir(path) : ::unlink(path);
  return (rc != 0 && errno != ENOENT) ? -1 : 0;
}
}  // namespace

absl::Status RemoveTree(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return ErrnoStatus(errno, absl::StrCat("lstat ", path));
  }
  if (::nftw(path.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS) != 0) {
    return ErrnoStatus(errno, absl::StrCat("remove ", path));
  }
  return absl::OkStatus();
}

bool PathExists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace paceline::agent
