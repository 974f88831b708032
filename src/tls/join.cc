#include "tls/join.h"

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <filesystem>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "tls/certificates.h"
#include "tls/openssl_util.h"

namespace paceline::tls {
namespace {

using internal::AddExtension;
using internal::BioText;
using internal::OpenSslError;
using internal::ParseCert;
using internal::Ptr;
using internal::Reader;
using internal::TimeOf;

std::string SerialHex(X509* x) {
  Ptr<BIGNUM> bn(ASN1_INTEGER_to_BN(X509_get_serialNumber(x), nullptr));
  Ptr<char> hex(bn ? BN_bn2hex(bn.get()) : nullptr);
  return hex ? std::string(hex.get()) : "";
}

}  // namespace

absl::StatusOr<KeyAndCsr> MakeKeyAndCsr(const std::string& host) {
  Ptr<EVP_PKEY> key(EVP_EC_gen("P-256"));
  Ptr<X509_REQ> req(X509_REQ_new());
  if (!key || !req) return OpenSslError("make a key");
  X509_NAME* name = X509_REQ_get_subject_name(req.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("Paceline"), -1, -1, 0);
  if (!X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                  reinterpret_cast<const unsigned char*>(host.c_str()), -1, -1,
                                  0) ||
      !X509_REQ_set_pubkey(req.get(), key.get()) ||
      !X509_REQ_sign(req.get(), key.get(), EVP_sha256())) {
    return OpenSslError("make a certificate signing request");
  }
  KeyAndCsr out;
  Ptr<BIO> kb(BIO_new(BIO_s_mem()));
  Ptr<BIO> rb(BIO_new(BIO_s_mem()));
  if (!PEM_write_bio_PrivateKey(kb.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) ||
      !PEM_write_bio_X509_REQ(rb.get(), req.get())) {
    return OpenSslError("write a key and its request");
  }
  out.key_pem = BioText(kb.get());
  out.csr_pem = BioText(rb.get());
  return out;
}

absl::StatusOr<SignedCertificate> SignAgentCsr(const std::string& ca_dir,
                                               const std::string& csr_pem, const std::string& host,
                                               absl::Duration validity) {
  Ptr<BIO> rb = Reader(csr_pem);
  Ptr<X509_REQ> req(rb ? PEM_read_bio_X509_REQ(rb.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!req) {
    return absl::InvalidArgumentError(
        "csr: expected a PEM certificate signing request (-----BEGIN CERTIFICATE REQUEST-----)");
  }
  EVP_PKEY* pub = X509_REQ_get0_pubkey(req.get());
  if (pub == nullptr || X509_REQ_verify(req.get(), pub) != 1) {
    return absl::InvalidArgumentError("csr: its signature does not verify with its public key");
  }
  char cn[256] = {0};
  if (X509_NAME_get_text_by_NID(X509_REQ_get_subject_name(req.get()), NID_commonName, cn,
                                sizeof cn) <= 0 ||
      host != cn) {
    return absl::InvalidArgumentError(
        absl::StrCat("csr: its common name is '", cn, "', and the host joins as '", host, "'"));
  }
  const std::string dir(ca_dir);
  absl::StatusOr<std::string> ca_pem = ReadFile((std::filesystem::path(dir) / "ca.pem").string());
  absl::StatusOr<std::string> key_pem = ReadFile((std::filesystem::path(dir) / "ca.key").string());
  if (!ca_pem.ok() || !key_pem.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the cluster's CA in ", dir,
                     " cannot be read: ", (!ca_pem.ok() ? ca_pem : key_pem).status().message()));
  }
  absl::StatusOr<Ptr<X509>> ca = ParseCert(*ca_pem);
  Ptr<BIO> kb = Reader(*key_pem);
  Ptr<EVP_PKEY> ca_key(kb ? PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr) : nullptr);
  if (!ca.ok() || !ca_key) {
    return absl::FailedPreconditionError(absl::StrCat(dir, "/ca.pem or ca.key is unreadable"));
  }
  Ptr<X509> x(X509_new());
  Ptr<BIGNUM> serial(BN_new());
  if (!x || !serial) return OpenSslError("make a certificate");
  X509_set_version(x.get(), 2);
  if (!BN_rand(serial.get(), 120, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY) ||
      !BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(x.get()))) {
    return OpenSslError("make a serial number");
  }
  // Valid from a little earlier, for hosts whose clocks lag: 5 minutes, or a tenth of a short
  // validity (whose renewal, at two thirds of it, must still come after the signing).
  X509_gmtime_adj(X509_getm_notBefore(x.get()),
                  -std::min<int64_t>(300, absl::ToInt64Seconds(validity) / 10));
  X509_gmtime_adj(X509_getm_notAfter(x.get()), absl::ToInt64Seconds(validity));
  X509_set_pubkey(x.get(), pub);
  X509_set_subject_name(x.get(), X509_REQ_get_subject_name(req.get()));
  X509_set_issuer_name(x.get(), X509_get_subject_name(ca->get()));
  for (const auto& [nid, value] : std::vector<std::pair<int, std::string>>{
           {NID_basic_constraints, "critical,CA:FALSE"},
           {NID_key_usage, "critical,digitalSignature,keyAgreement"},
           {NID_ext_key_usage, "serverAuth,clientAuth"},  // and its /metrics
           {NID_subject_key_identifier, "hash"},
           {NID_authority_key_identifier, "keyid:always"},
           {NID_subject_alt_name, absl::StrCat("DNS:", host)}}) {
    if (absl::Status s = AddExtension(x.get(), ca->get(), nid, value); !s.ok()) return s;
  }
  if (!X509_sign(x.get(), ca_key.get(), EVP_sha256())) return OpenSslError("sign a certificate");
  Ptr<BIO> out(BIO_new(BIO_s_mem()));
  if (!PEM_write_bio_X509(out.get(), x.get())) return OpenSslError("write a certificate");
  SignedCertificate signed_cert;
  signed_cert.cert_pem = BioText(out.get());
  signed_cert.serial = SerialHex(x.get());
  absl::StatusOr<absl::Time> not_after = TimeOf(X509_get0_notAfter(x.get()), "validity");
  if (!not_after.ok()) return not_after.status();
  signed_cert.not_after = *not_after;
  return signed_cert;
}

absl::StatusOr<std::string> CaHash(const std::string& ca_pem) {
  absl::StatusOr<Ptr<X509>> x = ParseCert(ca_pem);
  if (!x.ok()) return x.status();
  unsigned char* der = nullptr;
  const int n = i2d_PUBKEY(X509_get0_pubkey(x->get()), &der);
  if (n <= 0) return OpenSslError("encode a public key");
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(der, static_cast<size_t>(n), digest);
  OPENSSL_free(der);
  return absl::StrCat("sha256:", absl::BytesToHexString(absl::string_view(
                                     reinterpret_cast<const char*>(digest), sizeof digest)));
}

absl::StatusOr<std::string> CertificateSerial(const std::string& pem) {
  absl::StatusOr<Ptr<X509>> x = ParseCert(pem);
  if (!x.ok()) return x.status();
  return SerialHex(x->get());
}

absl::StatusOr<Validity> CertificateValidity(const std::string& pem) {
  absl::StatusOr<Ptr<X509>> x = ParseCert(pem);
  if (!x.ok()) return x.status();
  absl::StatusOr<absl::Time> from = TimeOf(X509_get0_notBefore(x->get()), "validity");
  absl::StatusOr<absl::Time> to = TimeOf(X509_get0_notAfter(x->get()), "validity");
  if (!from.ok()) return from.status();
  if (!to.ok()) return to.status();
  return Validity{*from, *to};
}

bool KeyMatchesCertificate(const std::string& cert_pem, const std::string& key_pem) {
  absl::StatusOr<Ptr<X509>> x = ParseCert(cert_pem);
  Ptr<BIO> kb = Reader(key_pem);
  if (!x.ok() || !kb) return false;
  Ptr<EVP_PKEY> key(PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr));
  return key != nullptr && X509_check_private_key(x->get(), key.get()) == 1;
}

}  // namespace paceline::tls
