#pragma once
// The cluster's certificates (docs/security.md "TLS"), made with OpenSSL when missing:
//
//   DIR/ca.pem, DIR/ca.key          a certificate authority of this cluster (self-signed,
//                                   ECDSA P-256, 10 years); the key never leaves DIR
//   DIR/master.pem, DIR/master.key  the masters' certificate, signed by the CA, for `names`
//                                   (DNS names and IP addresses), server and client use
//   OUT/HOST.pem, OUT/HOST.key      an agent's certificate (client, and server for its
//                                   /metrics), its common name and DNS name HOST
//
// Keys are written mode 0600 and DIR mode 0700; a file is written whole under another name and
// then renamed, so a reader never sees half of it. Existing files are kept: the CA is made once
// per cluster, and a master certificate that lacks one of `names` is made again (a new address).
//
// Thread-safety: functions over files; not for concurrent use on one DIR.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace paceline::tls {

struct CertificateFiles {
  std::string ca;    // the CA's certificate
  std::string cert;  // the certificate
  std::string key;   // its key
};

// Makes what is missing of the CA and the master's certificate in `dir`; returns their paths.
absl::StatusOr<CertificateFiles> EnsureMasterCertificates(const std::string& dir,
                                                          const std::vector<std::string>& names);

// Makes `out_dir`/`host`.pem and .key, signed by the CA in `dir` (remade when present).
absl::StatusOr<CertificateFiles> IssueAgentCertificate(const std::string& dir,
                                                       const std::string& host,
                                                       const std::string& out_dir);

// The names a certificate holds: its subject's common name first, then its DNS and IP
// alternative names. INVALID_ARGUMENT when `pem` is not a certificate.
absl::StatusOr<std::vector<std::string>> CertificateNames(const std::string& pem);

// The whole file, or NOT_FOUND / UNAVAILABLE naming it.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace paceline::tls
