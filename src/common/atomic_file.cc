#include "common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"

namespace paceline {
namespace {

// The directory part of "a/b/c" ("a/b"); "." when there is none, "/" for "/c".
std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

bool WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Closes `fd` (and removes `tmp` when asked) without changing errno.
void Abandon(int fd, const std::string& tmp, bool remove) {
  int err = errno;
  if (fd >= 0) ::close(fd);
  if (remove) ::unlink(tmp.c_str());
  errno = err;
}

absl::Status SyncDirectory(const std::string& dir, bool checked, ErrnoError error) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return checked ? error(errno, absl::StrCat("open ", dir)) : absl::OkStatus();
  bool synced = ::fsync(fd) == 0;
  Abandon(fd, dir, /*remove=*/false);
  if (!synced && checked) return error(errno, absl::StrCat("fsync ", dir));
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents,
                                 const AtomicWriteOptions& options, ErrnoError error) {
  using Sync = AtomicWriteOptions::Sync;
  using DirSync = AtomicWriteOptions::DirSync;
  const std::string tmp = absl::StrCat(path, options.temp_suffix);
  const bool remove = options.remove_temp_on_failure;
  int flags = O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC;
  if (options.owner.has_value()) {
    ::unlink(tmp.c_str());  // ENOENT or not: O_EXCL refuses whatever is left
    flags |= O_EXCL;
  }
  int fd = ::open(tmp.c_str(), flags, options.mode);
  if (fd < 0) return error(errno, absl::StrCat("open ", tmp));
  if (options.owner.has_value() && ::fchown(fd, options.owner->uid, options.owner->gid) != 0) {
    Abandon(fd, tmp, remove);
    return error(errno, absl::StrCat("chown ", tmp));
  }
  if (!WriteAll(fd, contents)) {
    Abandon(fd, tmp, remove);
    return error(errno, absl::StrCat("write ", tmp));
  }
  if (options.sync == Sync::kData && ::fdatasync(fd) != 0) {
    Abandon(fd, tmp, remove);
    return error(errno, absl::StrCat("fdatasync ", tmp));
  }
  if (options.sync == Sync::kFull && ::fsync(fd) != 0) {
    Abandon(fd, tmp, remove);
    return error(errno, absl::StrCat("fsync ", tmp));
  }
  ::close(fd);
  if (options.replace) {
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      Abandon(-1, tmp, remove);
      return error(errno, absl::StrCat("rename ", tmp, " to ", path));
    }
  } else {
    int rc = ::link(tmp.c_str(), path.c_str());
    Abandon(-1, tmp, /*remove=*/true);
    if (rc != 0 && errno != EEXIST) return error(errno, absl::StrCat("link ", tmp, " to ", path));
  }
  if (options.dir_sync == DirSync::kNone) return absl::OkStatus();
  return SyncDirectory(DirectoryOf(path), options.dir_sync == DirSync::kChecked, error);
}

}  // namespace paceline
