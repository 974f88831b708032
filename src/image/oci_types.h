#pragma once
// The OCI image format's documents (image-spec v1.1), parsed with nlohmann::json and validated:
// descriptors, image manifests, image indexes (and Docker's schema-2 equivalents, which
// registries still serve) and the image configuration. Every parser returns INVALID_ARGUMENT
// naming the field that is wrong; nothing else about a document is trusted (digests are
// checked by whoever fetched its bytes).
//
// Thread-safety: pure functions over values.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paceline::image {

// Media types (OCI and Docker schema 2).
inline constexpr absl::string_view kOciManifest = "application/vnd.oci.image.manifest.v1+json";
inline constexpr absl::string_view kOciIndex = "application/vnd.oci.image.index.v1+json";
inline constexpr absl::string_view kOciConfig = "application/vnd.oci.image.config.v1+json";
inline constexpr absl::string_view kOciLayerGzip = "application/vnd.oci.image.layer.v1.tar+gzip";
inline constexpr absl::string_view kOciLayerTar = "application/vnd.oci.image.layer.v1.tar";
inline constexpr absl::string_view kDockerManifest =
    "application/vnd.docker.distribution.manifest.v2+json";
inline constexpr absl::string_view kDockerManifestList =
    "application/vnd.docker.distribution.manifest.list.v2+json";
inline constexpr absl::string_view kDockerConfig = "application/vnd.docker.container.image.v1+json";
inline constexpr absl::string_view kDockerLayerGzip =
    "application/vnd.docker.image.rootfs.diff.tar.gzip";

struct Platform {
  std::string os;            // "linux"
  std::string architecture;  // "amd64"
  std::string variant;
};

struct Descriptor {
  std::string media_type;
  std::string digest;  // "sha256:…" (validated)
  int64_t size = 0;    // >= 0
  std::optional<Platform> platform;
};

// An image manifest: one config and its layers, bottom first.
struct Manifest {
  std::string media_type;
  Descriptor config;
  std::vector<Descriptor> layers;
};

// An image index (or Docker manifest list): manifests per platform.
struct Index {
  std::vector<Descriptor> manifests;
};

// What a container of the image runs, from the config's "config" object, and its layers'
// uncompressed digests (rootfs.diff_ids).
struct ImageConfig {
  std::vector<std::string> entrypoint;
  std::vector<std::string> cmd;
  std::vector<std::string> env;  // "K=V"
  std::string working_dir;
  std::string user;
  std::vector<std::string> diff_ids;
  std::string os;
  std::string architecture;
};

// True for the media types of an index / manifest list, and of an image manifest.
bool IsIndexMediaType(absl::string_view media_type);
bool IsManifestMediaType(absl::string_view media_type);

absl::StatusOr<Manifest> ParseManifest(absl::string_view json);
absl::StatusOr<Index> ParseIndex(absl::string_view json);
absl::StatusOr<ImageConfig> ParseImageConfig(absl::string_view json);
// The manifest of an index that runs on this machine (linux and the build's architecture,
// in the OCI "GOARCH" spelling: amd64, arm64); NOT_FOUND listing the platforms it has.
absl::StatusOr<Descriptor> SelectPlatform(const Index& index);
// This machine's architecture in the OCI spelling.
std::string HostArchitecture();

}  // namespace paceline::image
