#pragma once
// ImageSource: where the image store gets an image's manifest and blobs from — a registry
// (RegistrySource, over RegistryClient) or an image archive on disk (archive_source.h: an OCI
// image layout, or a `docker save` tarball). The store verifies what a source gives it: the
// manifest's digest (when pinned), every blob's digest and size, every layer's diff_id.
//
// Thread-safety: one source per pull, used by one thread.

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "image/oci_types.h"
#include "image/registry_client.h"
#include "spec/image_ref.h"

namespace paceline::image {

class ImageSource {
 public:
  virtual ~ImageSource() = default;
  // The image manifest for this machine (an index already resolved to one manifest).
  virtual absl::StatusOr<FetchedManifest> Manifest() = 0;
  // Writes the blob to `path`, verified against `blob`'s digest and size; nothing at `path`
  // on error.
  virtual absl::Status FetchBlob(const Descriptor& blob, const std::string& path) = 0;
};

// An image in a registry.
class RegistrySource : public ImageSource {
 public:
  RegistrySource(spec::ImageRef ref, RegistryOptions options)
      : ref_(std::move(ref)), client_(std::move(options)) {}
  absl::StatusOr<FetchedManifest> Manifest() override { return client_.ResolveManifest(ref_); }
  absl::Status FetchBlob(const Descriptor& blob, const std::string& path) override {
    return client_.FetchBlob(ref_, blob, path);
  }

 private:
  spec::ImageRef ref_;
  RegistryClient client_;
};

}  // namespace paceline::image
