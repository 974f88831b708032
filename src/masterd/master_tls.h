#pragma once
// How the master's ports are secured (docs/security.md "TLS"):
//   - by default, TLS: the cluster's CA and the master's certificate are made under
//     `tls_dir` when missing (tls/certificates.h), for localhost, 127.0.0.1, this machine's
//     name, the --listen host and the --advertise host; the gRPC port serves TLS and asks
//     clients for a certificate of the cluster (agents must present one; CLI clients may not);
//   - with `insecure_loopback`, plain text, and only when both ports are on a loopback address.
// The HTTP side (web UI, JSON API, /metrics) does not serve TLS yet: with TLS on it must be on a
// loopback address (put a TLS proxy in front of it to reach it from elsewhere).
//
// Thread-safety: a pure function of the configuration and the files it makes.

#include <memory>
#include <string>

#include <grpcpp/security/server_credentials.h>

#include "absl/status/statusor.h"
#include "masterd/master.h"

namespace paceline::masterd {

struct MasterTls {
  std::shared_ptr<grpc::ServerCredentials> credentials;
  bool on = false;
  std::string ca_file;  // with TLS: the CA clients and agents verify the master against
};

absl::StatusOr<MasterTls> SetUpTls(const MasterConfig& config);

// 127.0.0.0/8, ::1 and "localhost".
bool IsLoopback(const std::string& host);

}  // namespace paceline::masterd
