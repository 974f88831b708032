#include "image/rootfs_path.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status.h"

namespace paceline::image::internal {
namespace {

constexpr int kMaxSymlinks = 40;  // as the kernel's path walk (MAXSYMLINKS)

absl::StatusOr<Fd> Dup(int fd) {
  int d = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (d < 0) return IoError(errno, "dup");
  return Fd(d);
}

absl::StatusOr<std::string> ReadLink(int dir_fd, const std::string& name, const std::string& at) {
  std::string buf(256, '\0');
  while (true) {
    ssize_t n = ::readlinkat(dir_fd, name.c_str(), buf.data(), buf.size());
    if (n < 0) return IoError(errno, absl::StrCat("readlink ", at));
    if (static_cast<size_t>(n) < buf.size()) {
      buf.resize(static_cast<size_t>(n));
      return buf;
    }
    buf.resize(buf.size() * 2);
  }
}

}  // namespace

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.Release();
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

int Fd::Release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

absl::Status IoError(int err, absl::string_view what) {
  if (err == ENOSPC) {
    return absl::ResourceExhaustedError(
        absl::StrCat(what, ": no space left on device (the disk is full)"));
  }
  std::string message = absl::StrCat(what, ": ", std::strerror(err));
  if (err == EDQUOT) return absl::ResourceExhaustedError(message);
  return absl::ErrnoToStatus(err, message);
}

absl::StatusOr<std::vector<std::string>> SplitEntryPath(absl::string_view path) {
  if (path.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError("the name has a NUL byte");
  }
  if (!path.empty() && path.front() == '/') {
    return absl::InvalidArgumentError("the name is an absolute path");
  }
  std::vector<std::string> out;
  for (absl::string_view c : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (c == ".") continue;
    if (c == "..") return absl::InvalidArgumentError("the name contains \"..\"");
    out.emplace_back(c);
  }
  return out;
}

std::string JoinPath(absl::string_view dir, absl::string_view name) {
  if (dir.empty()) return std::string(name);
  return absl::StrCat(dir, "/", name);
}

std::string DirInRoot::Path() const {
  std::string out;
  for (const DirStep& s : steps) {
    if (!out.empty()) out += '/';
    out += s.name;
  }
  return out;
}

absl::StatusOr<DirInRoot> OpenDirInRoot(int root_fd, std::span<const std::string> components,
                                        const WalkOptions& options) {
  std::deque<std::string> todo(components.begin(), components.end());
  DirInRoot here;  // where the walk is
  ASSIGN_OR_RETURN(here.fd, Dup(root_fd));
  // Messages name where the walk was (built only on error: paths can be long).
  auto at = [&here](const std::string& name) { return JoinPath(here.Path(), name); };
  int links = 0;
  while (!todo.empty()) {
    std::string name = std::move(todo.front());
    todo.pop_front();
    if (name.empty() || name == ".") continue;
    if (name == "..") {
      if (here.steps.empty()) {
        return absl::InvalidArgumentError("a symlink on the way climbs out of the rootfs");
      }
      // The real parent: the walk entered only directories, never a symlink.
      Fd up(::openat(here.fd.get(), "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (!up.valid()) return IoError(errno, absl::StrCat("open ", at("..")));
      here.fd = std::move(up);
      here.steps.pop_back();
      continue;
    }
    struct stat parent;
    if (::fstat(here.fd.get(), &parent) != 0) return IoError(errno, "stat " + here.Path());
    bool made = false;
    struct stat st;
    if (::fstatat(here.fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) return IoError(errno, absl::StrCat("stat ", at(name)));
      if (!options.create)
        return absl::NotFoundError(absl::StrCat(at(name), ": no such directory"));
      if (::mkdirat(here.fd.get(), name.c_str(), 0700) != 0) {
        return IoError(errno, absl::StrCat("mkdir ", at(name)));
      }
      made = true;
      st.st_mode = S_IFDIR;
    }
    if (S_ISLNK(st.st_mode)) {
      if (!options.symlinks) {
        return absl::FailedPreconditionError(absl::StrCat(at(name), " became a symlink"));
      }
      if (++links > kMaxSymlinks) {
        return absl::InvalidArgumentError(absl::StrCat(at(name), ": too many levels of symlinks"));
      }
      ASSIGN_OR_RETURN(std::string target, ReadLink(here.fd.get(), name, at(name)));
      if (target.empty()) return absl::NotFoundError(absl::StrCat(at(name), ": empty symlink"));
      std::vector<std::string> parts = absl::StrSplit(target, '/');
      todo.insert(todo.begin(), parts.begin(), parts.end());
      if (target.front() == '/') {  // the container's "/": the rootfs
        ASSIGN_OR_RETURN(here.fd, Dup(root_fd));
        here.steps.clear();
      }
      continue;
    }
    if (!S_ISDIR(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(at(name), " is not a directory"));
    }
    Fd next(::openat(here.fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) {
      if (errno == ELOOP || errno == ENOTDIR) {
        return absl::InvalidArgumentError(absl::StrCat(at(name), " is not a directory"));
      }
      return IoError(errno, absl::StrCat("open ", at(name)));
    }
    if (made && ::fchmod(next.get(), 0755) != 0) {  // not masked by the umask
      return IoError(errno, absl::StrCat("chmod ", at(name)));
    }
    here.fd = std::move(next);
    here.steps.push_back({parent.st_dev, parent.st_ino, std::move(name)});
  }
  return here;
}

absl::Status RemoveTree(int dir_fd, const std::string& name) {
  struct stat st;
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return IoError(errno, absl::StrCat("stat ", name));
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(dir_fd, name.c_str(), 0) != 0 && errno != ENOENT) {
      return IoError(errno, absl::StrCat("unlink ", name));
    }
    return absl::OkStatus();
  }
  // Depth first with one directory open at a time: descend into a subdirectory that is not
  // empty, and climb back through ".." (a real directory's, as only directories are entered)
  // once the current one is empty. `down` names the directories entered below `name`, one
  // component each (messages name the innermost only, to stay short in deep trees).
  Fd cur(::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!cur.valid()) return IoError(errno, absl::StrCat("open ", name));
  std::vector<std::string> down;
  while (true) {
    const std::string here = down.empty() ? name : absl::StrCat(name, "/.../", down.back());
    ASSIGN_OR_RETURN(Fd listing, Dup(cur.get()));
    DIR* d = ::fdopendir(listing.get());
    if (d == nullptr) return IoError(errno, absl::StrCat("opendir ", here));
    listing.Release();
    std::string subdir;
    absl::Status status;
    errno = 0;
    while (struct dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      bool is_dir = e->d_type == DT_DIR;
      if (e->d_type == DT_UNKNOWN) {
        struct stat cst;
        is_dir =
            ::fstatat(cur.get(), e->d_name, &cst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(cst.st_mode);
      }
      if (is_dir) {
        subdir = e->d_name;
        break;
      }
      if (::unlinkat(cur.get(), e->d_name, 0) != 0 && errno != ENOENT) {
        status = IoError(errno, absl::StrCat("unlink ", here, "/", e->d_name));
        break;
      }
      errno = 0;
    }
    if (status.ok() && subdir.empty() && errno != 0) {
      status = IoError(errno, absl::StrCat("readdir ", here));
    }
    ::closedir(d);
    RETURN_IF_ERROR(status);
    if (!subdir.empty()) {
      if (::unlinkat(cur.get(), subdir.c_str(), AT_REMOVEDIR) == 0) continue;
      if (errno != ENOTEMPTY && errno != EEXIST) {
        return IoError(errno, absl::StrCat("rmdir ", here, "/", subdir));
      }
      Fd next(::openat(cur.get(), subdir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!next.valid()) return IoError(errno, absl::StrCat("open ", here, "/", subdir));
      cur = std::move(next);
      down.push_back(std::move(subdir));
      continue;
    }
    if (down.empty()) break;
    Fd up(::openat(cur.get(), "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!up.valid()) return IoError(errno, absl::StrCat("open ", here, "/.."));
    if (::unlinkat(up.get(), down.back().c_str(), AT_REMOVEDIR) != 0) {
      return IoError(errno, absl::StrCat("rmdir ", here));
    }
    cur = std::move(up);
    down.pop_back();
  }
  if (::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) != 0) {
    return IoError(errno, absl::StrCat("rmdir ", name));
  }
  return absl::OkStatus();
}

}  // namespace paceline::image::internal
