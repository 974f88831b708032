#pragma once
// ImageRef: a reference to an OCI image, as written in a job spec's `task.container.image`
// (docs/containers.md), in the grammar of the distribution spec's references:
//
//   [REGISTRY/]REPOSITORY[:TAG][@sha256:HEX]
//
//   REGISTRY    a host name with a dot or a port, or "localhost" (e.g. "registry.example.com",
//               "127.0.0.1:5000"); absent: "docker.io", where a one-component repository gets
//               the "library/" prefix (as Docker does)
//   REPOSITORY  lower-case path components of [a-z0-9] joined by '.', '_', '__' or '-'s,
//               separated by '/'; at most 255 characters in all
//   TAG         [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}; absent and no digest: "latest"
//   DIGEST      "sha256:" and 64 lower-case hex digits; pins the image (the tag is then only a
//               label)
//
// Thread-safety: pure functions over values.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paceline::spec {

struct ImageRef {
  std::string registry;    // "registry.example.com:5000"
  std::string repository;  // "team/trainer"
  std::string tag;         // "1.4"; "" when only a digest is given
  std::string digest;      // "sha256:…", or ""
  // The reference in canonical form: registry/repository[:tag][@digest].
  std::string ToString() const;
  // What the registry's manifest endpoint is asked for: the digest if pinned, else the tag.
  const std::string& ManifestReference() const { return digest.empty() ? tag : digest; }
  friend bool operator==(const ImageRef&, const ImageRef&) = default;
};

// Parses a reference; INVALID_ARGUMENT names the part that is wrong and what was expected.
absl::StatusOr<ImageRef> ParseImageRef(absl::string_view text);

// True when `digest` is "sha256:" followed by 64 lower-case hex digits.
bool IsSha256Digest(absl::string_view digest);

}  // namespace paceline::spec
