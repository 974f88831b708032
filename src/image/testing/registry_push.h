#pragma once
// Pushing test images (image_builder.h) to a registry with libcurl, as the distribution spec
// describes it (tests only):
//
//   POST /v2/<repository>/blobs/uploads/                      202, Location: <upload URL>
//   PUT  <upload URL>?digest=<digest>   (the whole blob)       201
//   PUT  /v2/<repository>/manifests/<reference>               201  (Content-Type: its type)
//
// TLS is verified against `ca_file`; credentials, when given, are sent as HTTP basic auth
// (what RegistryServer's htpasswd mode asks for; no bearer-token flow here).
//
// Thread-safety: functions; each call uses its own curl handle.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "image/testing/image_builder.h"

namespace paceline::image::testing {

struct PushTarget {
  std::string registry;    // "127.0.0.1:PORT"
  std::string repository;  // "team/app"
  std::string ca_file;     // PEM to verify the registry with; "" = the system's CAs
  std::string username;    // "" = anonymous
  std::string password;
  std::string scheme = "https";
};

// Uploads one blob (monolithic upload).
absl::Status PushBlob(const PushTarget& to, const Blob& blob);
// Puts a manifest or an index under `reference` (a tag, or its digest).
absl::Status PushManifest(const PushTarget& to, const Blob& manifest, absl::string_view reference);
// The image's config and layers, then its manifest under `tag`.
absl::Status PushImage(const PushTarget& to, const Image& image, absl::string_view tag);

}  // namespace paceline::image::testing
