#pragma once
// Paths inside a root filesystem being written by layer unpacking (layer_unpack.h), resolved
// without ever letting the kernel follow a symlink:
//   - SplitEntryPath cleans an archive entry's name into components and refuses absolute names
//     and "..";
//   - OpenDirInRoot walks from a directory fd of the root one component at a time with
//     O_NOFOLLOW; a symlink met on the way is read and its target walked in turn, an absolute
//     target from the root again (the root is the container's "/"), and a ".." that would climb
//     above the root is refused: nothing it returns is outside the root;
//   - RemoveTree removes a file or a whole directory tree below a directory fd, following
//     nothing and holding a bounded number of fds however deep the tree.
// Not safe against another process renaming directories of the same rootfs concurrently (the
// rootfs is a private temporary directory while it is unpacked).
//
// Thread-safety: pure functions over files.

#include <sys/types.h>

#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paceline::image::internal {

// An owned file descriptor (-1: none).
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.Release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release();

 private:
  int fd_ = -1;
};

// The status of a failed system call, for every file the image layer writes: RESOURCE_EXHAUSTED
// for ENOSPC ("what: no space left on device (the disk is full)") and EDQUOT, otherwise the
// errno's code; the message is "what: strerror".
absl::Status IoError(int err, absl::string_view what);

// "a/./b//c/" -> {"a", "b", "c"}; "", "." and "./" -> {} (the root itself). INVALID_ARGUMENT
// for an absolute name, a ".." component, or a NUL byte.
absl::StatusOr<std::vector<std::string>> SplitEntryPath(absl::string_view path);

// "a/b" + "c" -> "a/b/c"; "" + "c" -> "c".
std::string JoinPath(absl::string_view dir, absl::string_view name);

struct WalkOptions {
  bool create = false;   // create missing directories (mode 0755, owned by the caller)
  bool symlinks = true;  // false: a symlink on the way is an error (FAILED_PRECONDITION)
};

// One directory on the way: `name` in the directory (dev, ino).
struct DirStep {
  dev_t parent_dev = 0;
  ino_t parent_ino = 0;
  std::string name;
};

struct DirInRoot {
  Fd fd;                       // O_RDONLY|O_DIRECTORY
  std::vector<DirStep> steps;  // where it really is below the root: no symlink, no ".."
  std::string Path() const;    // the steps' names joined: "" (the root) or "a/b"
};

// The directory at `components` below `root_fd` (see above). NOT_FOUND when a component is
// missing (and not created), INVALID_ARGUMENT when one is not a directory, when a symlink
// climbs out of the root or when there are too many symlinks (40). Linear in the length of the
// components and of the symlinks' targets.
absl::StatusOr<DirInRoot> OpenDirInRoot(int root_fd, std::span<const std::string> components,
                                        const WalkOptions& options);

// Removes `name` in `dir_fd`, a directory with everything below it; nothing there is fine.
absl::Status RemoveTree(int dir_fd, const std::string& name);

}  // namespace paceline::image::internal
