#pragma once
// Extraction of an image archive for ArchiveSource (archive_source.h): a tar file (compressed
// or not: libarchive's filters) holding an OCI image layout or a `docker save` image. Only the
// files an image is made of are written, as regular files, with paths (after a leading "./")
// exactly one of
//
//   oci-layout  index.json  manifest.json  repositories  blobs/sha256/<hex>
//   <hex>.json  <hex>/layer.tar  <hex>/json  <hex>/VERSION          (<hex>: 64 lower-case hex)
//
// Everything else (directories, other files, devices, ...) is skipped. A symlink or hard link
// entry whose name is one of these and whose target is another (`docker save` links a layer
// that appears twice: "<id2>/layer.tar -> ../<id1>/layer.tar") is not written but returned as
// an alias, resolved by whoever opens the file. Files are created with O_CREAT|O_EXCL|
// O_NOFOLLOW (mode 0600) in directories made here (0700) below the given directory, which must
// be empty and private to the caller.
//
// Refused, before anything is written for them (INVALID_ARGUMENT naming the entry): an entry,
// or a hard link's target, that is an absolute path or has a ".." component; a kept file that
// appears twice; a kept file larger than `max_file_bytes`; more than `max_files` kept files or
// `max_entries` entries in all. Other errors: INVALID_ARGUMENT when the file is not a tar
// archive, DATA_LOSS when it is corrupt or cut short, RESOURCE_EXHAUSTED when the disk is full,
// an errno status naming the path for other I/O. On error the directory is left partly
// written (the caller removes it).
//
// Thread-safety: pure functions over files.

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace paceline::image {

// Bounds on what an archive may make the host write.
struct ArchiveLimits {
  int64_t max_file_bytes = int64_t{64} << 30;  // one kept file (a layer)
  int64_t max_files = 100000;                  // kept files
  int64_t max_entries = 10000000;              // entries of any kind, kept or skipped
};

namespace internal {

// True for 64 lower-case hex digits.
bool IsHex64(absl::string_view s);
// True when `path` (relative, without "./") is one of the files kept (above).
bool IsImageArchiveFile(absl::string_view path);

// Extracts the kept files of the tar file `archive_path` into the directory `dir_fd`; links
// between kept files go to `aliases` (name -> target, both kept-file paths).
absl::Status ExtractImageArchive(const std::string& archive_path, int dir_fd,
                                 const ArchiveLimits& limits,
                                 std::map<std::string, std::string>* aliases);

}  // namespace internal
}  // namespace paceline::image
