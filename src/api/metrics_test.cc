#include "api/metrics.h"

#include <memory>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/time/clock.h"

namespace paceline::api {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kGiB = int64_t{1} << 30;

placement::HostSpec Host(const std::string& name) {
  placement::HostSpec spec;
  spec.name = name;
  spec.capacity = Resources::Of(8000, 16 * kGiB, 100 * kGiB);
  return spec;
}

TEST(MetricsTest, HostsShowTheirConnectionCapacityAndWhatTheirTasksHold) {
  const absl::Time now = absl::Now();
  hostmgr::HostTracker hosts(absl::Seconds(30));
  placement::ClusterSnapshot snapshot;
  for (const char* name : {"a", "b"}) {
    placement::HostSpec spec = Host(name);
    auto [id, is_new] = hosts.Register(spec, now);
    ASSERT_TRUE(is_new);
    spec.id = id;
    ASSERT_TRUE(snapshot.AddHost(spec).ok());
  }
  auto shape = std::make_shared<placement::TaskShape>();
  shape->resources = Resources::Of(2000, 4 * kGiB, 90 * kGiB);
  ASSERT_TRUE(snapshot.Commit({TaskId{JobId(1), 0}, HostId(0), shape}).ok());
  // a's agent presented a certificate; b's did too, but b is not connected now.
  hosts.SetAgentFacts("a", {.certificate_not_after = absl::FromUnixSeconds(1900000000)});
  hosts.SetAgentFacts("b", {.certificate_not_after = absl::FromUnixSeconds(1800000000)});
  hosts.Disconnect("b");

  const std::string text = RenderHostMetrics(hosts, snapshot);
  EXPECT_THAT(text, HasSubstr("paceline_agent_certificate_not_after_timestamp_seconds{host=\"a\"} "
                              "1900000000\n"));
  EXPECT_THAT(text, Not(HasSubstr("not_after_timestamp_seconds{host=\"b\"}")));
  EXPECT_THAT(text, HasSubstr("# TYPE paceline_host_connected gauge\n"));
  EXPECT_THAT(text, HasSubstr("paceline_host_connected{host=\"a\",maintenance=\"UP\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("paceline_host_connected{host=\"b\",maintenance=\"UP\"} 0\n"));
  EXPECT_THAT(text,
              HasSubstr("paceline_host_capacity{host=\"a\",resource=\"disk\"} 107374182400\n"));
  EXPECT_THAT(text,
              HasSubstr("paceline_host_allocated{host=\"a\",resource=\"disk\"} 96636764160\n"));
  EXPECT_THAT(text, HasSubstr("paceline_host_allocated{host=\"a\",resource=\"cpu\"} 2000\n"));
  EXPECT_THAT(text, HasSubstr("paceline_host_allocated{host=\"b\",resource=\"disk\"} 0\n"));
}

TEST(MetricsTest, CertificatesShowWhenTheyExpireAndNothingWithoutTls) {
  EXPECT_EQ(RenderCertificateMetrics({}), "");
  const std::string text = RenderCertificateMetrics(
      {{"ca", "/var/lib/paceline/tls/ca.pem", absl::FromUnixSeconds(2000000000)},
       {"master", "/var/lib/paceline/tls/master.pem", absl::FromUnixSeconds(1900000000)}});
  EXPECT_THAT(text,
              HasSubstr("# TYPE paceline_tls_certificate_not_after_timestamp_seconds gauge\n"));
  EXPECT_THAT(text, HasSubstr("paceline_tls_certificate_not_after_timestamp_seconds{certificate="
                              "\"ca\",file=\"/var/lib/paceline/tls/ca.pem\"} 2000000000\n"));
  EXPECT_THAT(text,
              HasSubstr("paceline_tls_certificate_not_after_timestamp_seconds{certificate="
                        "\"master\",file=\"/var/lib/paceline/tls/master.pem\"} 1900000000\n"));
  EXPECT_THAT(text, Not(HasSubstr("e+")));  // whole seconds, never in exponent form
}

}  // namespace
}  // namespace paceline::api
