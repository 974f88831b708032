#pragma once
// Unpacking of image layers (OCI image-spec "layer.md") into a root filesystem, with libarchive:
// tar, tar+gzip (zlib), tar+zstd, +xz, +bzip2, +lz4 (libarchive's filters; layer_stream.h),
// applied in order, bottom layer first, into one directory. libarchive only reads the tar
// stream: files are made here with the *at() system calls, relative to directory fds.
//
// What a layer may do, and how it is applied:
//   - regular files, directories, symlinks, hard links (to a file already in the rootfs, in
//     this or an earlier layer), FIFOs; character and block devices are skipped (the runtime
//     provides /dev). Modes (with setuid/setgid/sticky), owners (when running as root) and
//     modification times are kept; extended attributes are not.
//   - whiteouts: ".wh.NAME" removes NAME of the layers below; ".wh..wh..opq" in a directory
//     removes everything the layers below put in it. Whiteout files themselves never appear.
//   - an entry replaces what is at its path (a file over a directory removes the directory).
// What is refused (INVALID_ARGUMENT naming the entry; nothing is written outside `rootfs`):
//   - paths that are absolute after cleaning or contain "..", and any entry whose parent
//     resolves, through symlinks already in the rootfs, to outside it;
//   - hard links whose target is outside the rootfs or not yet there;
//   - symlinks are written as they are (an absolute target means "inside the container's
//     root"), but are never followed while unpacking: every path is resolved inside `rootfs`
//     component by component, with symlinks interpreted relative to `rootfs` (rootfs_path.h);
//     a symlink whose ".." climbs above `rootfs` on the way to an entry's parent is refused,
//     and an entry's own last component is never followed (it is replaced).
// Whiteouts and opaque markers hide only what the layers below wrote, not this layer's own
// entries, whatever their order in the tar.
// Other errors: DATA_LOSS for a truncated or corrupt archive (a gzip stream may end with zero
// padding; anything else after it is corrupt), RESOURCE_EXHAUSTED when the disk
// is full (ENOSPC/EDQUOT), an errno status for other I/O. On error the rootfs is left partly
// written: callers unpack into a temporary directory and rename it only on success.
//
// Thread-safety: pure functions over files; different rootfs directories may be unpacked
// concurrently.

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace paceline::image {

struct UnpackStats {
  int64_t entries = 0;
  int64_t bytes = 0;  // file data written
  int64_t whiteouts = 0;
};

// Applies the layer at `layer_path` (a file) to the directory `rootfs`, which must exist.
// When `diff_id` is not empty it must equal the sha256 of the uncompressed tar stream, all of
// it to the end ("sha256:…"; DATA_LOSS otherwise, INVALID_ARGUMENT when it is not a sha256
// digest). `stats`, when not null, is set to what this layer held (reset first).
absl::Status ApplyLayer(const std::string& layer_path, const std::string& rootfs,
                        const std::string& diff_id, UnpackStats* stats);

}  // namespace paceline::image
