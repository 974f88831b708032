#pragma once
// What tls/'s files share over OpenSSL's C API: owning pointers that free each object with its
// own function, memory BIOs in and out, the one error wording, reading a PEM certificate and
// its times, and adding an X.509v3 extension. Internal to tls/.

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace paceline::tls::internal {

struct Free {
  void operator()(X509* x) const { X509_free(x); }
  void operator()(X509_REQ* r) const { X509_REQ_free(r); }
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
  void operator()(BIO* b) const { BIO_free(b); }
  void operator()(BIGNUM* b) const { BN_free(b); }
  void operator()(X509_EXTENSION* e) const { X509_EXTENSION_free(e); }
  void operator()(GENERAL_NAMES* n) const { GENERAL_NAMES_free(n); }
  void operator()(char* s) const { OPENSSL_free(s); }
};
template <typename T>
using Ptr = std::unique_ptr<T, Free>;

inline absl::Status OpenSslError(const std::string& what) {
  return absl::InternalError(absl::StrCat("OpenSSL could not ", what));
}

// A BIO reading `text` (which must outlive it); null when OpenSSL could not make one.
inline Ptr<BIO> Reader(const std::string& text) {
  return Ptr<BIO>(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// What a memory BIO holds.
inline std::string BioText(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

// The first certificate of `pem`; INVALID_ARGUMENT when it holds none.
absl::StatusOr<Ptr<X509>> ParseCert(const std::string& pem);

// `t` as a time; INVALID_ARGUMENT ("the certificate's FIELD is not a valid time") when it is
// missing or unreadable.
absl::StatusOr<absl::Time> TimeOf(const ASN1_TIME* t, absl::string_view field);

// Adds the extension `nid` = `value` (OpenSSL's config syntax) to `x`, issued by `issuer`.
absl::Status AddExtension(X509* x, X509* issuer, int nid, const std::string& value);

}  // namespace paceline::tls::internal
