#include "tls/openssl_util.h"

#include <openssl/asn1.h>
#include <openssl/pem.h>

#include <ctime>

namespace paceline::tls::internal {

absl::StatusOr<Ptr<X509>> ParseCert(const std::string& pem) {
  Ptr<BIO> bio = Reader(pem);
  Ptr<X509> x(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!x) {
    return absl::InvalidArgumentError("expected a PEM certificate (-----BEGIN CERTIFICATE-----)");
  }
  return x;
}

absl::StatusOr<absl::Time> TimeOf(const ASN1_TIME* t, absl::string_view field) {
  std::tm tm{};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("the certificate's ", field, " is not a valid time"));
  }
  return absl::FromUnixSeconds(timegm(&tm));
}

absl::Status AddExtension(X509* x, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, x, nullptr, nullptr, 0);
  Ptr<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  if (!ext || !X509_add_ext(x, ext.get(), -1)) {
    return OpenSslError(absl::StrCat("add the extension ", value));
  }
  return absl::OkStatus();
}

}  // namespace paceline::tls::internal
