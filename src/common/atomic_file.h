#pragma once
// WriteFileAtomically: puts a whole file in place so that a reader sees the old content or the
// new one, never a part. The content goes to a temporary file beside `path` (`path` +
// `temp_suffix`, created with `mode` and O_CLOEXEC), which is synced as asked and then renamed
// over `path`; the directory is synced afterwards as asked, which makes the rename durable.
//
// With an `owner`, the temporary file is given to that user and group (fchown(2)) before the
// rename, so the file appears under `path` already theirs (the caller needs the privilege to
// chown). Such a file is usually written into a directory that user may write too, so its
// temporary file is made afresh: whatever is under its name is removed first and it is created
// with O_EXCL, never reusing or following a link someone else put there. Any temporary file is
// opened with O_NOFOLLOW.
//
// With `replace = false` the temporary file is linked to `path` instead of renamed, so that a
// file already there is kept (and the call is OK): the first of several writers wins. The
// temporary file is removed in either case.
//
// The default options are the strictest: fsync of the file, rename, fsync of the directory
// (errors of the directory's fsync reported).
//
// Errors: a failed system call is reported as `error(errno, "<call> <file>")`, e.g.
// error(ENOSPC, "write /d/f.tmp") or error(EXDEV, "rename /d/f.tmp to /d/f"); the default,
// absl::ErrnoToStatus, makes "<call> <file>: <strerror>" with errno's canonical code. errno is
// left as the failed call set it. A failure removes the temporary file unless
// `remove_temp_on_failure` is false. Closing the temporary file is not checked (its data is
// synced first when the options ask for durability).
//
// Thread-safety: no shared state; concurrent writers of one `path` need distinct temp suffixes.

#include <sys/types.h>

#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace paceline {

struct AtomicWriteOptions {
  enum class Sync {
    kNone,  // no sync: atomic for readers, not durable across a crash
    kData,  // fdatasync(2)
    kFull,  // fsync(2)
  };
  enum class DirSync {
    kNone,
    kBestEffort,  // fsync the directory, ignoring errors
    kChecked,     // fsync the directory, reporting errors
  };

  mode_t mode = 0600;
  std::string temp_suffix = ".tmp";
  Sync sync = Sync::kFull;
  DirSync dir_sync = DirSync::kChecked;
  bool replace = true;  // false: link(2) into place; an existing `path` stays and is no error
  bool remove_temp_on_failure = true;
  struct Owner {
    uid_t uid;
    gid_t gid;
  };
  std::optional<Owner> owner;  // none: the writer's own
};

using ErrnoError = absl::FunctionRef<absl::Status(int err, absl::string_view what)>;

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents,
                                 const AtomicWriteOptions& options = {},
                                 ErrnoError error = absl::ErrnoToStatus);

}  // namespace paceline
