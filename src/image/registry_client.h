#pragma once
// RegistryClient: pulls manifests and blobs from an OCI distribution (Docker registry v2)
// endpoint over HTTPS with libcurl: TLS verified against the system's CAs or a given CA file,
// optional credentials (HTTP basic, or the bearer-token flow a registry asks for in its
// WWW-Authenticate challenge), redirects followed (blob stores), bounded by a connect timeout
// and a low-speed timeout (a registry that hangs fails the pull instead of stalling it).
//
//   GET /v2/<repository>/manifests/<tag|digest>   Accept: OCI + Docker manifest/index types
//   GET /v2/<repository>/blobs/<digest>           streamed to a file, hashed as it is written
//
// Errors say what to fix, with the registry's own answer where it gave one:
//   NOT_FOUND           no such repository, tag or blob (the registry's error code and message)
//   PERMISSION_DENIED   401/403: credentials missing or refused
//   DATA_LOSS           a blob or manifest whose digest or size is not the one asked for
//   DEADLINE_EXCEEDED   connect or transfer timeout
//   UNAVAILABLE         cannot connect, TLS failure (names the certificate problem), 5xx,
//                       408, 429
//   RESOURCE_EXHAUSTED  the disk is full while writing a blob
//   INVALID_ARGUMENT    400 (a name or reference the registry refuses), a malformed descriptor
//   FAILED_PRECONDITION another 4xx, a manifest over 4 MiB, a media type that is neither an
//                       image manifest nor an index
// Each message names the URL and, for an HTTP error, the status and the registry's JSON error
// body ("MANIFEST_UNKNOWN: manifest unknown").
//
// Authentication: a 401 is answered once per request from its WWW-Authenticate challenge —
// Basic: the credentials; Bearer: a token from the challenge's realm (https, or http when
// `scheme` is "http"; service and scope passed on; the credentials sent to it as HTTP basic, or
// none for an anonymous token) — and what worked is reused for later requests to the same
// repository. Authorization is never sent to another host that a redirect leads to.
//
// A blob is written to `path`.partial and renamed to `path` only once its digest and size are
// verified; on any error nothing is left at either name.
//
// Thread-safety: one client per thread (a client holds a curl handle and a token cache).

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "image/oci_types.h"
#include "spec/image_ref.h"

namespace paceline::image {

struct RegistryOptions {
  std::string ca_file;   // PEM bundle to verify the registry with; "" = the system's CAs
  std::string username;  // credentials; "" = anonymous
  std::string password;
  // Bounds the TCP connect and the TLS handshake.
  absl::Duration connect_timeout = absl::Seconds(10);
  // The transfer fails when fewer than 1 KiB/s arrive for this long (a hung registry);
  // whole seconds, at least 1.
  absl::Duration stall_timeout = absl::Seconds(30);
  // "http" only for registries on loopback in tests that want plain HTTP; "https" otherwise.
  std::string scheme = "https";
};

// A manifest as fetched: its bytes, their digest and its media type (Content-Type).
struct FetchedManifest {
  std::string body;
  std::string digest;
  std::string media_type;
};

class RegistryClient {
 public:
  explicit RegistryClient(RegistryOptions options);
  ~RegistryClient();
  RegistryClient(const RegistryClient&) = delete;
  RegistryClient& operator=(const RegistryClient&) = delete;

  // The manifest `ref` names (its digest if pinned, else its tag). When pinned, the body's
  // digest must equal it (DATA_LOSS otherwise).
  absl::StatusOr<FetchedManifest> FetchManifest(const spec::ImageRef& ref);
  // Resolves `ref` to an image manifest for this machine: fetches it, and when it is an index,
  // the manifest SelectPlatform picks (verified against the index's descriptor).
  absl::StatusOr<FetchedManifest> ResolveManifest(const spec::ImageRef& ref);
  // Downloads the blob `blob` of `ref`'s repository to `path`, verifying digest and size.
  absl::Status FetchBlob(const spec::ImageRef& ref, const Descriptor& blob,
                         const std::string& path);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace paceline::image
