#pragma once
// How the master's ports are secured (docs/security.md "TLS"):
//   - by default, TLS: the cluster's CA and the master's certificate are made under
//     `tls_dir` when missing (tls/certificates.h), for localhost, 127.0.0.1, this machine's
//     name, the --listen, --http-listen and --advertise hosts; the gRPC port serves TLS and
//     asks clients for a certificate of the cluster (agents must present one; CLI clients may
//     not); the HTTP side (web UI, JSON API, /metrics) serves HTTPS with the same certificate;
//   - with `insecure_loopback`, plain text, and only when both ports are on a loopback address.
//
// Thread-safety: a pure function of the configuration and the files it makes.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <grpcpp/security/server_credentials.h>

#include "absl/status/statusor.h"
#include "api/cluster_service.h"
#include "http/http_server.h"
#include "masterd/master.h"

namespace paceline::masterd {

struct MasterTls {
  std::shared_ptr<grpc::ServerCredentials> credentials;
  bool on = false;
  std::string ca_file;  // with TLS: the CA clients and agents verify the master against
  std::optional<http::HttpTls> http;  // with TLS: the HTTP side's certificate and key
};

absl::StatusOr<MasterTls> SetUpTls(const MasterConfig& config);

// With TLS, the end of validity of the CA's certificate and of the master's, read from their
// files at each call (a certificate replaced on disk shows at once), for /metrics; a file that
// cannot be read or holds no certificate is left out. Empty without TLS.
std::vector<api::CertificateExpiry> CertificateExpiries(const MasterTls& tls);

}  // namespace paceline::masterd
