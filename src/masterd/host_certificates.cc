#include "masterd/host_certificates.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "tls/certificate_dates.h"
#include "tls/certificates.h"
#include "tls/join.h"

namespace paceline::masterd {

absl::StatusOr<api::HostCertificates> HostCertificatesOf(const MasterTls& tls,
                                                         absl::Duration validity) {
  api::HostCertificates out;
  if (!tls.on) return out;
  absl::StatusOr<std::string> ca = tls::ReadFile(tls.ca_file);
  if (!ca.ok()) return ca.status();
  absl::StatusOr<std::string> hash = tls::CaHash(*ca);
  if (!hash.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(tls.ca_file, ": ", hash.status().message()));
  }
  out.ca_pem = *ca;
  out.ca_hash = *hash;
  const std::string dir = std::filesystem::path(tls.ca_file).parent_path().string();
  out.sign = [dir, validity](
                 const std::string& host,
                 const std::string& csr) -> absl::StatusOr<api::HostCertificates::Signed> {
    absl::StatusOr<tls::SignedCertificate> s = tls::SignAgentCsr(dir, csr, host, validity);
    if (!s.ok()) return s.status();
    return api::HostCertificates::Signed{s->cert_pem, s->serial, s->not_after};
  };
  out.serial_of = [](const std::string& pem) { return tls::CertificateSerial(pem); };
  out.not_after_of = [](const std::string& pem) { return tls::CertificateNotAfter(pem); };
  return out;
}

std::function<absl::Status(const std::string& cert_pem)> RevokedCertificateCheck(
    const AccessBook* book) {
  return [book](const std::string& cert_pem) -> absl::Status {
    absl::StatusOr<std::string> serial = tls::CertificateSerial(cert_pem);
    if (!serial.ok()) return absl::OkStatus();  // checked by TLS already; nothing to match
    const std::string name = absl::StrCat(api::kCertTokenPrefix, *serial);
    const absl::Time now = absl::Now();
    for (const records::TokenRecord& r : book->ListTokens()) {
      if (r.role == "agent" && r.name == name && r.revoked_at <= now) {
        return absl::PermissionDeniedError(absl::StrCat(
            "the agent's certificate ", *serial, " (host ", r.user, ") was revoked at ",
            absl::FormatTime(absl::RFC3339_sec, r.revoked_at, absl::UTCTimeZone()),
            "; join the host again (`paceline agent join`)"));
      }
    }
    return absl::OkStatus();
  };
}

}  // namespace paceline::masterd
