// libFuzzer target: the certificate-name path — what the master reads of a certificate
// (tls::CertificateNames, used to decide whether its own certificate covers its names). Any
// input: no crash, no leak; a certificate that parses gives names without NUL bytes in the
// common name.

#include <cstddef>
#include <cstdint>
#include <string>

#include "tls/certificates.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string pem(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<std::string>> names = paceline::tls::CertificateNames(pem);
  if (names.ok() && !names->empty() && names->front().find('\0') != std::string::npos) {
    __builtin_trap();
  }
  return 0;
}
