#pragma once
// RegistryServer (tests only): a throw-away OCI registry on 127.0.0.1 — Debian's
// `docker-registry` (distribution 2.8) with its storage in a temporary directory, over HTTPS
// with the given certificate (or plain HTTP), optionally behind HTTP basic auth (an htpasswd
// file made with `htpasswd -B`, from apache2-utils) — or, in the "hung" mode, a socket that
// accepts connections and never answers a byte, to test a client's timeouts.
//
//   auto certs = tls::EnsureMasterCertificates(dir, {"127.0.0.1"});   // the test makes them
//   ASSIGN_OR_RETURN(auto registry, RegistryServer::Start({.cert_file = certs->cert,
//                                                          .key_file = certs->key}));
//   registry->address();   // "127.0.0.1:PORT", a port that was free
//
// Start returns once the registry accepts connections. The destructor stops it by its PID
// (SIGTERM, then SIGKILL after 5 s; always reaped) and removes its directory. The child also
// gets SIGKILL if the thread that started it dies first (PR_SET_PDEATHSIG).
//
// Thread-safety: one thread starts and stops a server; any thread may read its accessors.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace paceline::image::testing {

class RegistryServer {
 public:
  struct Options {
    // HTTPS with this certificate and key (PEM files); both "" = plain HTTP.
    std::string cert_file;
    std::string key_file;
    // Require HTTP basic auth as this user; "" = anonymous pulls and pushes.
    // Needs `htpasswd` (see HtpasswdAvailable()).
    std::string username;
    std::string password;
    // No registry: a socket on 127.0.0.1 whose connections are never answered.
    bool hung = false;
  };

  static absl::StatusOr<std::unique_ptr<RegistryServer>> Start(Options options);
  ~RegistryServer();
  RegistryServer(const RegistryServer&) = delete;
  RegistryServer& operator=(const RegistryServer&) = delete;

  // "127.0.0.1:PORT": the registry part of an image reference.
  const std::string& address() const { return address_; }
  // The registry's storage root ("" when hung): tests corrupt blobs there.
  const std::string& storage_dir() const { return storage_dir_; }
  // The file in storage_dir() that holds the bytes of the blob `digest` ("sha256:<hex>").
  std::string BlobDataPath(absl::string_view digest) const;
  // The registry's stdout and stderr (for a failing test's message).
  std::string Log() const;

  // True when `htpasswd` is installed (basic auth can be configured).
  static bool HtpasswdAvailable();

 private:
  RegistryServer() = default;
  absl::Status Launch(const Options& options);
  void Stop();

  std::string dir_;  // temporary directory: config, htpasswd, log, storage
  std::string storage_dir_;
  std::string address_;
  int pid_ = -1;        // the registry process
  int listen_fd_ = -1;  // the hung mode's socket
};

}  // namespace paceline::image::testing
