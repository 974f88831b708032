#include "tls/certificate_dates.h"

#include <openssl/asn1.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <ctime>
#include <memory>

namespace paceline::tls {

absl::StatusOr<absl::Time> CertificateNotAfter(const std::string& pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> x(
      bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr, &X509_free);
  if (x == nullptr) {
    return absl::InvalidArgumentError("expected a PEM certificate (-----BEGIN CERTIFICATE-----)");
  }
  std::tm tm{};
  const ASN1_TIME* not_after = X509_get0_notAfter(x.get());
  if (not_after == nullptr || ASN1_TIME_to_tm(not_after, &tm) != 1) {
    return absl::InvalidArgumentError("the certificate's notAfter is not a valid time");
  }
  return absl::FromUnixSeconds(timegm(&tm));
}

}  // namespace paceline::tls
