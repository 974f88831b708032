// libFuzzer target: what the master reads of a joining host's request and what a joining host
// reads of the CA it fetched (tls/join.h): SignAgentCsr over any bytes as the CSR (with a CA made
// once in a directory of this process), and CaHash, CertificateSerial and CertificateValidity
// over any bytes as a certificate. Any input: no crash, no leak; a request that is signed gives
// a certificate for the host asked for.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "tls/certificates.h"
#include "tls/join.h"

namespace {

const std::string& CaDir() {
  static const std::string dir = [] {
    const std::string d = (std::filesystem::temp_directory_path() /
                           ("paceline-csr-fuzz-" + std::to_string(::getpid())))
                              .string();
    if (!paceline::tls::EnsureMasterCertificates(d, {"localhost"}).ok()) __builtin_trap();
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<paceline::tls::SignedCertificate> signed_cert =
      paceline::tls::SignAgentCsr(CaDir(), text, "fuzz-host", absl::Hours(1));
  if (signed_cert.ok()) {
    absl::StatusOr<std::vector<std::string>> names =
        paceline::tls::CertificateNames(signed_cert->cert_pem);
    if (!names.ok() || names->empty() || names->front() != "fuzz-host") __builtin_trap();
  }
  (void)paceline::tls::CaHash(text);
  (void)paceline::tls::CertificateSerial(text);
  (void)paceline::tls::CertificateValidity(text);
  return 0;
}
