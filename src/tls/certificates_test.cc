#include "tls/certificates.h"

#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace paceline::tls {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

X509* Load(const std::string& path) {
  std::string pem = *ReadFile(path);
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* x = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return x;
}

// Whether `cert` chains to `ca` for `purpose` (X509_PURPOSE_SSL_SERVER or _CLIENT).
bool Verifies(const std::string& ca, const std::string& cert, int purpose) {
  X509_STORE* store = X509_STORE_new();
  X509* root = Load(ca);
  X509_STORE_add_cert(store, root);
  X509* leaf = Load(cert);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf, nullptr);
  X509_STORE_CTX_set_purpose(ctx, purpose);
  bool ok = X509_verify_cert(ctx) == 1;
  X509_STORE_CTX_free(ctx);
  X509_free(leaf);
  X509_free(root);
  X509_STORE_free(store);
  return ok;
}

class CertificatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pl-tls-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CertificatesTest, TheMasterCertificateChainsToTheClustersCaWithItsNames) {
  absl::StatusOr<CertificateFiles> f =
      EnsureMasterCertificates(dir_.string(), {"localhost", "127.0.0.1", "m1.example.com"});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(Verifies(f->ca, f->cert, X509_PURPOSE_SSL_SERVER));
  EXPECT_TRUE(Verifies(f->ca, f->cert, X509_PURPOSE_SSL_CLIENT));
  EXPECT_THAT(*CertificateNames(*ReadFile(f->cert)),
              ElementsAre("paceline master", "localhost", "127.0.0.1", "m1.example.com"));
  // Keys are private; the directory too.
  struct stat st;
  ASSERT_EQ(::stat(f->key.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  ASSERT_EQ(::stat((dir_ / "ca.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  ASSERT_EQ(::stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700);
}

TEST_F(CertificatesTest, FilesAreKeptAndTheMasterCertificateIsRemadeForANewName) {
  CertificateFiles f = *EnsureMasterCertificates(dir_.string(), {"localhost"});
  const std::string ca = *ReadFile(f.ca);
  const std::string cert = *ReadFile(f.cert);
  EnsureMasterCertificates(dir_.string(), {"localhost"}).IgnoreError();
  EXPECT_EQ(*ReadFile(f.cert), cert);
  EnsureMasterCertificates(dir_.string(), {"localhost", "10.1.2.3"}).IgnoreError();
  EXPECT_NE(*ReadFile(f.cert), cert);
  EXPECT_EQ(*ReadFile(f.ca), ca);  // the CA stays: agents' certificates remain valid
  EXPECT_TRUE(Verifies(f.ca, f.cert, X509_PURPOSE_SSL_SERVER));
}

// A client certificate, and a server one for its host name: the agent serves its /metrics with
// it (agentd/agent_metrics.h).
TEST_F(CertificatesTest, AnAgentCertificateNamesItsHostAndServesAsClientAndServer) {
  CertificateFiles m = *EnsureMasterCertificates(dir_.string(), {"localhost"});
  absl::StatusOr<CertificateFiles> a =
      IssueAgentCertificate(dir_.string(), "host-7", (dir_ / "agents").string());
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(*CertificateNames(*ReadFile(a->cert)), ElementsAre("host-7", "host-7"));
  EXPECT_TRUE(Verifies(m.ca, a->cert, X509_PURPOSE_SSL_CLIENT));
  EXPECT_TRUE(Verifies(m.ca, a->cert, X509_PURPOSE_SSL_SERVER));
  // Another cluster's CA does not accept it.
  fs::path other = dir_ / "other";
  CertificateFiles o = *EnsureMasterCertificates(other.string(), {"localhost"});
  EXPECT_FALSE(Verifies(o.ca, a->cert, X509_PURPOSE_SSL_CLIENT));
}

TEST_F(CertificatesTest, BadInputIsRefused) {
  EXPECT_EQ(CertificateNames("not a certificate").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(IssueAgentCertificate(dir_.string(), "h", dir_.string()).status().code(),
            absl::StatusCode::kNotFound);  // no CA yet
  EXPECT_EQ(ReadFile((dir_ / "none").string()).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace paceline::tls
