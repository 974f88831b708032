#include "tls/join.h"

#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "tls/certificates.h"

namespace paceline::tls {
namespace {

namespace fs = std::filesystem;

class JoinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("paceline-join-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    ASSERT_TRUE(EnsureMasterCertificates(dir_.string(), {"localhost"}).ok());
    ca_pem_ = *ReadFile((dir_ / "ca.pem").string());
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string ca_pem_;
};

// Whether `cert` chains to `ca` as a TLS client.
bool VerifiesAsClient(const std::string& ca, const std::string& cert) {
  auto read = [](const std::string& pem) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    return x;
  };
  X509* c = read(ca);
  X509* x = read(cert);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, c);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, x, nullptr);
  X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_CLIENT);
  const bool ok = X509_verify_cert(ctx) == 1;
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  X509_free(x);
  X509_free(c);
  return ok;
}

bool KeyMatches(const std::string& key_pem, const std::string& cert_pem) {
  BIO* kb = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(kb, nullptr, nullptr, nullptr);
  BIO* cb = BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size()));
  X509* x = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr);
  const bool ok = key != nullptr && x != nullptr && X509_check_private_key(x, key) == 1;
  X509_free(x);
  EVP_PKEY_free(key);
  BIO_free(cb);
  BIO_free(kb);
  return ok;
}

TEST_F(JoinTest, SignedCsrChainsToTheCaForTheHostAndItsKey) {
  absl::StatusOr<KeyAndCsr> made = MakeKeyAndCsr("node-7");
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(made->csr_pem.find("PRIVATE KEY"), std::string::npos);
  absl::StatusOr<SignedCertificate> cert =
      SignAgentCsr(dir_.string(), made->csr_pem, "node-7", absl::Hours(24));
  ASSERT_TRUE(cert.ok()) << cert.status();
  EXPECT_TRUE(VerifiesAsClient(ca_pem_, cert->cert_pem));
  EXPECT_TRUE(KeyMatches(made->key_pem, cert->cert_pem));
  EXPECT_EQ(*CertificateNames(cert->cert_pem), (std::vector<std::string>{"node-7", "node-7"}));
  EXPECT_EQ(*CertificateSerial(cert->cert_pem), cert->serial);
  EXPECT_GE(cert->serial.size(), 20u);
  absl::StatusOr<Validity> v = CertificateValidity(cert->cert_pem);
  ASSERT_TRUE(v.ok());
  EXPECT_NEAR(absl::ToDoubleHours(v->not_after - absl::Now()), 24, 0.1);
  EXPECT_EQ(v->not_after, cert->not_after);
  // Two signings of one request: two serial numbers.
  EXPECT_NE(SignAgentCsr(dir_.string(), made->csr_pem, "node-7", absl::Hours(1))->serial,
            cert->serial);
}

TEST_F(JoinTest, CsrForAnotherHostIsRefused) {
  absl::StatusOr<KeyAndCsr> made = MakeKeyAndCsr("node-7");
  ASSERT_TRUE(made.ok());
  absl::StatusOr<SignedCertificate> cert =
      SignAgentCsr(dir_.string(), made->csr_pem, "node-8", absl::Hours(1));
  EXPECT_EQ(cert.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(cert.status().message().find("'node-7'"), std::string::npos) << cert.status();
}

TEST_F(JoinTest, TamperedOrGarbageCsrIsRefused) {
  EXPECT_EQ(SignAgentCsr(dir_.string(), "not a request", "a", absl::Hours(1)).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Another key's signature over the same subject: the request's signature does not verify.
  KeyAndCsr one = *MakeKeyAndCsr("a");
  KeyAndCsr two = *MakeKeyAndCsr("a");
  const size_t cut = one.csr_pem.size() / 2;
  std::string mixed = one.csr_pem.substr(0, cut) + two.csr_pem.substr(cut);
  EXPECT_FALSE(SignAgentCsr(dir_.string(), mixed, "a", absl::Hours(1)).ok());
}

TEST_F(JoinTest, MissingCaIsAFailedPrecondition) {
  KeyAndCsr made = *MakeKeyAndCsr("a");
  EXPECT_EQ(
      SignAgentCsr((dir_ / "none").string(), made.csr_pem, "a", absl::Hours(1)).status().code(),
      absl::StatusCode::kFailedPrecondition);
}

TEST_F(JoinTest, CaHashIsTheSha256OfThePublicKey) {
  absl::StatusOr<std::string> hash = CaHash(ca_pem_);
  ASSERT_TRUE(hash.ok()) << hash.status();
  EXPECT_EQ(hash->rfind("sha256:", 0), 0u);
  EXPECT_EQ(hash->size(), 7u + 64u);
  EXPECT_EQ(*CaHash(ca_pem_), *hash);  // stable
  // Another CA: another hash.
  fs::path other = dir_ / "other";
  ASSERT_TRUE(EnsureMasterCertificates(other.string(), {"localhost"}).ok());
  EXPECT_NE(*CaHash(*ReadFile((other / "ca.pem").string())), *hash);
  EXPECT_EQ(CaHash("garbage").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace paceline::tls
