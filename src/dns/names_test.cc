#include "dns/names.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paceline::dns {
namespace {

using ::testing::HasSubstr;

TEST(DnsNames, LabelsFollowRfc1123) {
  EXPECT_TRUE(IsLabel("web"));
  EXPECT_TRUE(IsLabel("Web-2"));
  EXPECT_TRUE(IsLabel("0"));
  EXPECT_TRUE(IsLabel(std::string(63, 'a')));
  EXPECT_FALSE(IsLabel(""));
  EXPECT_FALSE(IsLabel(std::string(64, 'a')));
  EXPECT_FALSE(IsLabel("-web"));
  EXPECT_FALSE(IsLabel("web-"));
  EXPECT_FALSE(IsLabel("we_b"));
  EXPECT_FALSE(IsLabel("we.b"));
}

TEST(DnsNames, TheDomainIsNormalizedOrRefusedNamingTheFlag) {
  EXPECT_EQ(*NormalizeDomain("Paceline."), "paceline");
  EXPECT_EQ(*NormalizeDomain("cluster.Example.com"), "cluster.example.com");
  for (const char* bad : {"", ".", "a..b", "a_b.com", "-a.com"}) {
    absl::StatusOr<std::string> d = NormalizeDomain(bad);
    ASSERT_FALSE(d.ok()) << bad;
    EXPECT_THAT(d.status().message(), ::testing::AnyOf(HasSubstr("empty"), HasSubstr("label")))
        << bad;
  }
  EXPECT_FALSE(NormalizeDomain(std::string(254, 'a')).ok());
}

TEST(DnsNames, AServiceNameReadsThePoolLeafFirst) {
  EXPECT_EQ(*ServiceNameOf("/prod/web", "api", "paceline"), "api.web.prod.paceline");
  EXPECT_EQ(*ServiceNameOf("/", "API", "c.example"), "api.c.example");
  EXPECT_EQ(InstanceName("api.web.prod.paceline", 3), "3.api.web.prod.paceline");
  EXPECT_EQ(SrvName("api.web.prod.paceline", "http"), "_http._tcp.api.web.prod.paceline");
}

TEST(DnsNames, AJobWithoutANameSaysWhichPartIsNotALabel) {
  EXPECT_THAT(ServiceNameOf("/prod", "2fast", "p").status().message(),
              HasSubstr("job's name '2fast'"));
  EXPECT_THAT(ServiceNameOf("/prod", "my_job", "p").status().message(),
              HasSubstr("job's name 'my_job'"));
  EXPECT_THAT(ServiceNameOf("/team.a/x", "web", "p").status().message(),
              HasSubstr("segment 'team.a' of /team.a/x"));
  EXPECT_THAT(ServiceNameOf("/" + std::string(60, 'a') + "/" + std::string(60, 'b') + "/" +
                                std::string(60, 'c') + "/" + std::string(60, 'd'),
                            "web", "paceline")
                  .status()
                  .message(),
              HasSubstr("characters"));
}

TEST(DnsNames, QueryNamesSplitIntoServiceInstanceAndSrv) {
  auto q = SplitQueryName("api.web.paceline", "paceline");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->kind, QueryName::Kind::kService);
  EXPECT_EQ(q->service, "api.web.paceline");

  q = SplitQueryName("12.api.paceline", "paceline");
  EXPECT_EQ(q->kind, QueryName::Kind::kInstance);
  EXPECT_EQ(q->instance, 12u);
  EXPECT_EQ(q->service, "api.paceline");

  q = SplitQueryName("_http._tcp.api.paceline", "paceline");
  EXPECT_EQ(q->kind, QueryName::Kind::kSrv);
  EXPECT_EQ(q->port, "http");
  EXPECT_EQ(q->service, "api.paceline");

  // Not a service's form, but in the domain.
  for (const char* other :
       {"012.api.paceline", "4294967296.api.paceline", "1x.api.paceline", "_http._udp.api.paceline",
        "_._tcp.api.paceline", "3.paceline", "_http._tcp.paceline"}) {
    q = SplitQueryName(other, "paceline");
    ASSERT_TRUE(q.has_value()) << other;
    EXPECT_EQ(q->kind, QueryName::Kind::kOther) << other;
  }
  EXPECT_EQ(SplitQueryName("paceline", "paceline")->kind, QueryName::Kind::kOther);
  EXPECT_FALSE(SplitQueryName("example.com", "paceline").has_value());
  EXPECT_FALSE(SplitQueryName("xpaceline", "paceline").has_value());
  EXPECT_FALSE(SplitQueryName("", "paceline").has_value());
}

}  // namespace
}  // namespace paceline::dns
