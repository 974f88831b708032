#pragma once
// ArchiveSource: an image read from a file on disk, for hosts without a registry
// (`paceline image load FILE`). FILE is
//   - an OCI image layout directory (image-spec "image-layout": oci-layout, index.json,
//     blobs/sha256/<hex>);
//   - the same layout as a tar file (`skopeo copy ... oci-archive:X.tar`,
//     `tar -C LAYOUT -cf X.tar .`), compressed or not;
//   - a `docker save` tarball (manifest.json, <hex>.json configs, <id>/layer.tar layers), or
//     such a tarball unpacked into a directory. Docker 25 and later writes both an OCI layout
//     and manifest.json; the OCI layout is used then.
// A tar file is extracted into a private directory below `scratch_dir` (only the files an image
// is made of; archive_extract.h says what is refused), removed when the source is destroyed.
//
// Which image: `name` is matched against the names the archive gives its images — the
// "org.opencontainers.image.ref.name" (and containerd's "io.containerd.image.name")
// annotations of index.json's entries, the RepoTags of manifest.json — as written, or as
// references in canonical form ("busybox" matches "docker.io/library/busybox:latest"). "" picks
// the only image of the archive. Entries of index.json that are the same image (one digest)
// are one image; several entries of one name that all carry a platform are one image per
// platform (SelectPlatform chooses).
//
// Manifest(): an OCI layout's manifest blob (an index, at most 4 levels deep, resolved with
// SelectPlatform), verified against its descriptor's digest and size; for `docker save`, an OCI
// manifest made from manifest.json: the config (its sha256 and size; a "<hex>.json" config
// must hash to <hex>) and the layers as application/vnd.oci.image.layer.v1.tar with their
// diff_ids (docker's layer.tar files are the uncompressed layers) or, for "blobs/sha256/<hex>"
// layers, that digest.
//
// FetchBlob(): the blob file, copied to `path`.partial while hashed (extracted files are hard
// linked instead, then hashed) and renamed to `path` once its digest and size are the
// descriptor's; nothing at `path` on error.
//
// Errors name the archive and the file in it:
//   NOT_FOUND           FILE, or a file of the image (a blob, a layer, a config), is missing;
//                       `name` names no image (the message lists the names there are)
//   INVALID_ARGUMENT    FILE is neither a directory nor a tar file of an image; a malformed
//                       index.json / manifest.json / oci-layout (naming the field); `name` is
//                       "" and the archive holds several images (listing their names); a tar
//                       entry refused by the extraction
//   DATA_LOSS           a blob, manifest or config whose content is not what its descriptor
//                       (or file name) says; a corrupt tar file
//   FAILED_PRECONDITION a descriptor whose media type is neither a manifest nor an index; a
//                       manifest or index over 4 MiB
//   RESOURCE_EXHAUSTED  the disk is full
//
// Thread-safety: one source per pull, used by one thread.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "image/archive_extract.h"
#include "image/image_source.h"

namespace paceline::image {

class ArchiveSource : public ImageSource {
 public:
  // Reads (a tar file: extracts) `path` and chooses the image `name` ("" = the only one).
  // `scratch_dir` is created when missing; it is used only for tar files.
  static absl::StatusOr<std::unique_ptr<ArchiveSource>> Open(const std::string& path,
                                                             const std::string& scratch_dir,
                                                             const std::string& name,
                                                             const ArchiveLimits& limits = {});
  ~ArchiveSource() override;
  ArchiveSource(const ArchiveSource&) = delete;
  ArchiveSource& operator=(const ArchiveSource&) = delete;

  // The names the archive gives the chosen image (ref.name annotations, or RepoTags), in the
  // order the archive lists them, each once; empty when it gives none.
  std::vector<std::string> Names() const;

  absl::StatusOr<FetchedManifest> Manifest() override;
  absl::Status FetchBlob(const Descriptor& blob, const std::string& path) override;

  struct State;

 private:
  explicit ArchiveSource(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace paceline::image
