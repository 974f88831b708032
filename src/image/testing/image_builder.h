#pragma once
// ImageBuilder (tests only): small OCI images made in memory — layers from uncompressed tar
// streams (TarBuilder::Finish(false)), stored gzip-compressed; the config with the layers'
// diff_ids (sha256 of each uncompressed tar); the OCI image manifest — and what to do with
// one: an index over several, an OCI image layout directory or its tar (`docker save`-style
// archives are not made here), and BusyboxImage(), a rootfs that runs a shell.
// registry_push.h pushes them to a registry.
//
//   TarBuilder tar;
//   tar.Dir("app").File("app/hello.txt", "hi\n");
//   Image image = ImageBuilder().Layer(tar.Finish(false)).Cmd({"/bin/sh"}).Build();
//
// Thread-safety: values and pure functions, except BusyboxImage (reads /bin/busybox) and
// WriteOciLayout (writes files).

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "image/oci_types.h"

namespace paceline::image::testing {

// Content as a registry stores it: bytes, their digest, and a media type.
struct Blob {
  std::string media_type;
  std::string data;
  std::string digest;  // "sha256:<hex>" of data
  Descriptor descriptor() const {
    return Descriptor{media_type, digest, static_cast<int64_t>(data.size()), std::nullopt};
  }
};
Blob MakeBlob(absl::string_view media_type, std::string data);

struct Image {
  Blob config;                        // kOciConfig
  std::vector<Blob> layers;           // kOciLayerGzip, bottom first
  std::vector<std::string> diff_ids;  // of the uncompressed layers
  Blob manifest;                      // kOciManifest
  // The config, then the layers.
  std::vector<const Blob*> blobs() const;
};

class ImageBuilder {
 public:
  ImageBuilder();  // linux, this machine's architecture, no layers
  // A layer from an uncompressed tar stream.
  ImageBuilder& Layer(std::string tar);
  ImageBuilder& Entrypoint(std::vector<std::string> v);
  ImageBuilder& Cmd(std::vector<std::string> v);
  ImageBuilder& Env(std::vector<std::string> v);  // "K=V"
  ImageBuilder& WorkingDir(std::string dir);
  ImageBuilder& User(std::string user);
  ImageBuilder& Architecture(std::string arch);
  // Config, layers and manifest; the builder may be used again.
  Image Build() const;

 private:
  ImageConfig config_;
  std::vector<std::string> tars_;
};

// gzip (RFC 1952) of `data`, deterministic (no name, no time).
std::string Gzip(absl::string_view data);

// An OCI image index over `manifests`, each listed with its platform.
Blob MakeIndex(const std::vector<std::pair<Blob, Platform>>& manifests);

// An image of one layer: /bin/busybox (the host's static busybox) with symlinks sh, echo, cat,
// ls, sleep, touch, id, env, test, wc, mkdir; /etc/passwd and /etc/group with root (0) and
// nobody (65534); /tmp (1777). Cmd ["/bin/sh"], Env PATH=/bin. FAILED_PRECONDITION when
// /bin/busybox is missing or not a static binary.
absl::StatusOr<Image> BusyboxImage();

// The image as an OCI image layout (image-spec v1.1 "image-layout"): DIR/oci-layout,
// DIR/index.json naming the manifest `ref_name` (org.opencontainers.image.ref.name), and
// DIR/blobs/sha256/<hex> for the manifest, config and layers. DIR is created if missing.
absl::Status WriteOciLayout(const Image& image, const std::string& dir,
                            absl::string_view ref_name = "latest");
// The same layout as an uncompressed tar stream (paths relative to the layout's root).
std::string OciLayoutTar(const Image& image, absl::string_view ref_name = "latest");

}  // namespace paceline::image::testing
