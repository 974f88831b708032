#include "agentd/certificate_renewal.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tls/certificates.h"
#include "tls/join.h"

namespace paceline::agentd {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void Put(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

class CertificateRenewalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("renewal-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    ASSERT_TRUE(tls::EnsureMasterCertificates(dir_ / "ca", {"localhost"}).ok());
    files_ = {(dir_ / "host/ca.pem").string(), (dir_ / "host/agent.pem").string(),
              (dir_ / "host/agent.key").string(), (dir_ / "host/agent-token").string()};
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A certificate for host "h1" signed by the test's CA, with its key.
  Credentials Issue(absl::Duration validity, const std::string& token) {
    absl::StatusOr<tls::KeyAndCsr> made = tls::MakeKeyAndCsr("h1");
    EXPECT_TRUE(made.ok()) << made.status();
    absl::StatusOr<tls::SignedCertificate> cert =
        tls::SignAgentCsr((dir_ / "ca").string(), made->csr_pem, "h1", validity);
    EXPECT_TRUE(cert.ok()) << cert.status();
    return {.ca_pem = Slurp((dir_ / "ca/ca.pem").string()),
            .cert_pem = cert->cert_pem,
            .key_pem = made->key_pem,
            .token = token,
            .serial = cert->serial,
            .not_after = cert->not_after};
  }

  fs::path dir_;
  CredentialFiles files_;
};

TEST_F(CertificateRenewalTest, StoredCredentialsLoadBackWithPrivateKeyAndToken) {
  const Credentials c = Issue(absl::Hours(1), "plt_token");
  ASSERT_TRUE(StoreCredentials(files_, c).ok());
  absl::StatusOr<Credentials> loaded = LoadCredentials(files_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->cert_pem, c.cert_pem);
  EXPECT_EQ(loaded->key_pem, c.key_pem);
  EXPECT_EQ(loaded->token, "plt_token");
  EXPECT_EQ(loaded->serial, c.serial);
  for (const std::string& secret : {files_.key, files_.token}) {
    struct stat st {};
    ASSERT_EQ(::stat(secret.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << secret;
  }
  for (const auto& entry : fs::directory_iterator(dir_ / "host")) {
    EXPECT_THAT(entry.path().filename().string(),
                ::testing::AnyOf("ca.pem", "agent.pem", "agent.key", "agent-token"));
  }
}

TEST_F(CertificateRenewalTest, AStoreCutOffAfterTheCertificateIsFinishedWhenLoaded) {
  ASSERT_TRUE(StoreCredentials(files_, Issue(absl::Hours(1), "old")).ok());
  // The new set written beside the old one, the certificate's last: complete, not yet renamed.
  const Credentials next = Issue(absl::Hours(1), "new");
  Put(files_.key + ".next", next.key_pem);
  Put(files_.token + ".next", "new\n");
  Put(files_.cert + ".next", next.cert_pem);
  // ... and the key already renamed into place: the old certificate beside the new key.
  fs::rename(files_.key + ".next", files_.key);
  absl::StatusOr<Credentials> loaded = LoadCredentials(files_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->cert_pem, next.cert_pem);
  EXPECT_EQ(loaded->key_pem, next.key_pem);
  EXPECT_EQ(loaded->token, "new");
  EXPECT_FALSE(fs::exists(files_.cert + ".next"));
  EXPECT_FALSE(fs::exists(files_.token + ".next"));
}

TEST_F(CertificateRenewalTest, AStoreCutOffBeforeTheCertificateIsDropped) {
  const Credentials old = Issue(absl::Hours(1), "old");
  ASSERT_TRUE(StoreCredentials(files_, old).ok());
  const Credentials next = Issue(absl::Hours(1), "new");
  Put(files_.key + ".next", next.key_pem);
  Put(files_.token + ".next", "new\n");
  absl::StatusOr<Credentials> loaded = LoadCredentials(files_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->cert_pem, old.cert_pem);
  EXPECT_EQ(loaded->key_pem, old.key_pem);
  EXPECT_EQ(loaded->token, "old");
  EXPECT_FALSE(fs::exists(files_.key + ".next"));
  EXPECT_FALSE(fs::exists(files_.token + ".next"));
}

TEST_F(CertificateRenewalTest, AKeyOfAnotherCertificateIsRefusedNamingTheFile) {
  ASSERT_TRUE(StoreCredentials(files_, Issue(absl::Hours(1), "t")).ok());
  Put(files_.key, Issue(absl::Hours(1), "t").key_pem);
  absl::StatusOr<Credentials> loaded = LoadCredentials(files_);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr(files_.key));
  EXPECT_THAT(loaded.status().message(), HasSubstr("is not the key of the certificate"));
}

TEST_F(CertificateRenewalTest, AMissingFileIsNamed) {
  ASSERT_TRUE(StoreCredentials(files_, Issue(absl::Hours(1), "t")).ok());
  fs::remove(files_.cert);
  absl::StatusOr<Credentials> loaded = LoadCredentials(files_);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr(files_.cert));
}

TEST_F(CertificateRenewalTest, DueAfterTwoThirdsOfTheValidity) {
  const Credentials c = Issue(absl::Hours(3), "t");
  absl::StatusOr<tls::Validity> v = tls::CertificateValidity(c.cert_pem);
  ASSERT_TRUE(v.ok());
  absl::StatusOr<absl::Time> due = RenewalDue(c.cert_pem);
  ASSERT_TRUE(due.ok());
  EXPECT_EQ(*due, v->not_before + (v->not_after - v->not_before) * 2 / 3);
  EXPECT_GT(*due, absl::Now() + absl::Minutes(110));
  EXPECT_LT(*due, absl::Now() + absl::Minutes(125));
  EXPECT_FALSE(RenewalDue("not a certificate").ok());
}

TEST_F(CertificateRenewalTest, RenewingWithoutATokenOrAMasterChangesNothing) {
  const Credentials c = Issue(absl::Hours(1), "");
  CredentialFiles no_token = files_;
  no_token.token.clear();
  ASSERT_TRUE(StoreCredentials(no_token, c).ok());
  absl::StatusOr<Credentials> loaded = LoadCredentials(no_token);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  absl::StatusOr<Credentials> r =
      RenewCredentials(no_token, *loaded, "127.0.0.1:1", absl::Seconds(1));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("agent token"));
  ASSERT_TRUE(StoreCredentials(files_, Issue(absl::Hours(1), "plt_x")).ok());
  const std::string before = Slurp(files_.cert);
  loaded = LoadCredentials(files_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  r = RenewCredentials(files_, *loaded, "127.0.0.1:1", absl::Seconds(1));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("127.0.0.1:1"));
  EXPECT_EQ(Slurp(files_.cert), before);
}

}  // namespace
}  // namespace paceline::agentd
