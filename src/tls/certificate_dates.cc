#include "tls/certificate_dates.h"

#include "tls/openssl_util.h"

namespace paceline::tls {

absl::StatusOr<absl::Time> CertificateNotAfter(const std::string& pem) {
  absl::StatusOr<internal::Ptr<X509>> x = internal::ParseCert(pem);
  if (!x.ok()) return x.status();
  return internal::TimeOf(X509_get0_notAfter(x->get()), "notAfter");
}

}  // namespace paceline::tls
