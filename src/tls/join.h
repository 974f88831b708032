#pragma once
// The certificates of hosts that join with a bootstrap token (docs/operations.md "Joining
// hosts"), made with OpenSSL:
//
//   - on the joining host, MakeKeyAndCsr makes a private key (ECDSA P-256) and a certificate
//     signing request for the host's name; the key never leaves the host;
//   - on the master, SignAgentCsr checks the request (its signature, and that it asks for
//     exactly that host) and signs it with the cluster's CA in DIR (tls/certificates.h): a
//     certificate for client and server use (its /metrics), its common name and DNS name the
//     host, valid `validity`, with a random serial number that names it (`paceline host
//     revoke-cert`);
//   - CaHash is how the joining host pins the CA it fetched before trusting it: "sha256:" and
//     the hex SHA-256 of the CA certificate's DER-encoded SubjectPublicKeyInfo (the hash
//     `kubeadm join --discovery-token-ca-cert-hash` uses).
//
// Thread-safety: pure functions over their arguments (SignAgentCsr reads the CA's files).

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace paceline::tls {

struct KeyAndCsr {
  std::string key_pem;  // the private key: stays on the host
  std::string csr_pem;  // the request: sent to the master
};
absl::StatusOr<KeyAndCsr> MakeKeyAndCsr(const std::string& host);

struct SignedCertificate {
  std::string cert_pem;
  std::string serial;  // upper-case hex, as `openssl x509 -serial` prints it
  absl::Time not_after;
};
// INVALID_ARGUMENT when `csr_pem` is not a request signed by its key, or asks for another
// name than `host`; FAILED_PRECONDITION when the CA in `ca_dir` cannot be read.
absl::StatusOr<SignedCertificate> SignAgentCsr(const std::string& ca_dir,
                                               const std::string& csr_pem, const std::string& host,
                                               absl::Duration validity);

// "sha256:<64 hex digits>" of the certificate's public key; INVALID_ARGUMENT when `pem` is not
// a certificate.
absl::StatusOr<std::string> CaHash(const std::string& ca_pem);

// The certificate's serial number in upper-case hex; INVALID_ARGUMENT when `pem` is not one.
absl::StatusOr<std::string> CertificateSerial(const std::string& pem);

// The certificate's validity: [not_before, not_after]; INVALID_ARGUMENT when `pem` is not one.
struct Validity {
  absl::Time not_before;
  absl::Time not_after;
};
absl::StatusOr<Validity> CertificateValidity(const std::string& pem);

// Whether `key_pem` is the private key of `cert_pem`'s public key (false when either is not
// readable).
bool KeyMatchesCertificate(const std::string& cert_pem, const std::string& key_pem);

}  // namespace paceline::tls
