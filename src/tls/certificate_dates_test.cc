#include "tls/certificate_dates.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tls/certificates.h"

namespace paceline::tls {
namespace {

namespace fs = std::filesystem;

TEST(CertificateDatesTest, ReadsTheNotAfterOfTheClustersCertificates) {
  const fs::path dir =
      fs::temp_directory_path() /
      absl::StrCat("paceline_cert_dates_", getpid(), "_", absl::ToUnixNanos(absl::Now()));
  absl::StatusOr<CertificateFiles> files = EnsureMasterCertificates(dir.string(), {"localhost"});
  ASSERT_TRUE(files.ok()) << files.status();
  const absl::Time now = absl::Now();
  // certificates.cc: the CA for 3650 days, the master's certificate for 1825.
  absl::StatusOr<absl::Time> ca = CertificateNotAfter(*ReadFile(files->ca));
  ASSERT_TRUE(ca.ok()) << ca.status();
  EXPECT_LT(absl::AbsDuration(*ca - (now + absl::Hours(24 * 3650))), absl::Minutes(5));
  absl::StatusOr<absl::Time> master = CertificateNotAfter(*ReadFile(files->cert));
  ASSERT_TRUE(master.ok()) << master.status();
  EXPECT_LT(absl::AbsDuration(*master - (now + absl::Hours(24 * 1825))), absl::Minutes(5));
  fs::remove_all(dir);
}

TEST(CertificateDatesTest, TextThatIsNoCertificateIsRefused) {
  for (const std::string& pem :
       {std::string(""), std::string("not a certificate"),
        std::string("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")}) {
    absl::StatusOr<absl::Time> t = CertificateNotAfter(pem);
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << pem;
    EXPECT_NE(t.status().message().find("PEM certificate"), std::string::npos);
  }
}

}  // namespace
}  // namespace paceline::tls
