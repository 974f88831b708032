#include "dns/zone.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paceline::dns {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

InstanceEndpoint Instance(uint32_t i, std::string address, bool ready,
                          std::map<std::string, uint16_t> ports = {{"http", 31000}}) {
  for (auto& [name, port] : ports) port = static_cast<uint16_t>(port + i);
  return InstanceEndpoint{
      .instance = i, .address = std::move(address), .ports = ports, .ready = ready};
}

ServiceEndpoints Web(uint64_t id = 7) {
  return ServiceEndpoints{
      .job_id = id,
      .pool = "/prod",
      .name = "web",
      .instances = {Instance(0, "198.18.0.11", true), Instance(1, "198.18.0.12", false),
                    Instance(2, "198.18.0.11", true), Instance(3, "fd00::3", true)}};
}

std::vector<std::string> Addresses(const std::vector<Record>& records) {
  std::vector<std::string> out;
  for (const Record& r : records) out.push_back(r.name + " " + r.address);
  return out;
}

class ZoneTest : public ::testing::Test {
 protected:
  Zone zone_{ZoneOptions{.domain = "paceline", .ttl_s = 2}};
};

TEST_F(ZoneTest, AServiceNameAnswersItsReadyInstancesDistinctAddresses) {
  ASSERT_TRUE(zone_.Set(Web()).ok());
  Answer a = zone_.Lookup("WEB.prod.paceline.", RecordType::kA);
  EXPECT_EQ(a.rcode, Rcode::kNoError);
  EXPECT_TRUE(a.authoritative);
  EXPECT_FALSE(a.negative);
  EXPECT_THAT(Addresses(a.answers), ElementsAre("web.prod.paceline 198.18.0.11"));
  EXPECT_EQ(a.answers[0].ttl, 2u);
  a = zone_.Lookup("web.prod.paceline", RecordType::kAaaa);
  EXPECT_THAT(Addresses(a.answers), ElementsAre("web.prod.paceline fd00::3"));
  a = zone_.Lookup("web.prod.paceline", RecordType::kAny);
  EXPECT_EQ(a.answers.size(), 2u);
  a = zone_.Lookup("web.prod.paceline", RecordType{16});  // TXT: the name exists
  EXPECT_EQ(a.rcode, Rcode::kNoError);
  EXPECT_TRUE(a.negative);
  EXPECT_THAT(a.answers, IsEmpty());
}

TEST_F(ZoneTest, SrvNamesGiveEachReadyInstancesPortAndTargetWithItsAddress) {
  ASSERT_TRUE(zone_.Set(Web()).ok());
  Answer a = zone_.Lookup("_http._tcp.web.prod.paceline", RecordType::kSrv);
  ASSERT_EQ(a.answers.size(), 3u);
  EXPECT_EQ(a.answers[0].target, "0.web.prod.paceline");
  EXPECT_EQ(a.answers[0].port, 31000);
  EXPECT_EQ(a.answers[1].target, "2.web.prod.paceline");
  EXPECT_EQ(a.answers[1].port, 31002);
  EXPECT_EQ(a.answers[2].target, "3.web.prod.paceline");
  EXPECT_THAT(Addresses(a.additional),
              ElementsAre("0.web.prod.paceline 198.18.0.11", "2.web.prod.paceline 198.18.0.11",
                          "3.web.prod.paceline fd00::3"));
  // An unknown port is an unknown name; a known one asked for A has no data.
  EXPECT_EQ(zone_.Lookup("_grpc._tcp.web.prod.paceline", RecordType::kSrv).rcode, Rcode::kNxDomain);
  a = zone_.Lookup("_http._tcp.web.prod.paceline", RecordType::kA);
  EXPECT_EQ(a.rcode, Rcode::kNoError);
  EXPECT_TRUE(a.negative);
}

TEST_F(ZoneTest, AnInstanceNameAnswersOnlyWhileItIsReady) {
  ASSERT_TRUE(zone_.Set(Web()).ok());
  EXPECT_THAT(Addresses(zone_.Lookup("2.web.prod.paceline", RecordType::kA).answers),
              ElementsAre("2.web.prod.paceline 198.18.0.11"));
  Answer not_ready = zone_.Lookup("1.web.prod.paceline", RecordType::kA);
  EXPECT_EQ(not_ready.rcode, Rcode::kNoError);
  EXPECT_TRUE(not_ready.negative);
  EXPECT_EQ(zone_.Lookup("9.web.prod.paceline", RecordType::kA).rcode, Rcode::kNxDomain);
}

TEST_F(ZoneTest, ChangesShowAtOnceAndBumpTheSerial) {
  ASSERT_TRUE(zone_.Set(Web()).ok());
  const uint32_t serial = zone_.Soa().serial;
  ServiceEndpoints web = Web();
  web.instances[0].ready = false;
  web.instances[2].ready = false;
  ASSERT_TRUE(zone_.Set(web).ok());
  EXPECT_GT(zone_.Soa().serial, serial);
  EXPECT_THAT(zone_.Lookup("web.prod.paceline", RecordType::kA).answers, IsEmpty());
  const uint32_t unchanged = zone_.Soa().serial;
  ASSERT_TRUE(zone_.Set(web).ok());
  EXPECT_EQ(zone_.Soa().serial, unchanged);
  zone_.Remove(7);
  EXPECT_EQ(zone_.Lookup("web.prod.paceline", RecordType::kA).rcode, Rcode::kNxDomain);
  EXPECT_EQ(zone_.Lookup("prod.paceline", RecordType::kA).rcode, Rcode::kNxDomain);
  EXPECT_EQ(zone_.jobs(), 0u);
}

TEST_F(ZoneTest, JobsSharingANameInAPoolAnswerTogether) {
  ASSERT_TRUE(zone_.Set(Web(7)).ok());
  ServiceEndpoints green = Web(8);
  green.instances = {Instance(0, "198.18.0.20", true)};
  ASSERT_TRUE(zone_.Set(green).ok());
  EXPECT_THAT(Addresses(zone_.Lookup("web.prod.paceline", RecordType::kA).answers),
              ElementsAre("web.prod.paceline 198.18.0.11", "web.prod.paceline 198.18.0.20"));
  zone_.Remove(7);
  EXPECT_THAT(Addresses(zone_.Lookup("web.prod.paceline", RecordType::kA).answers),
              ElementsAre("web.prod.paceline 198.18.0.20"));
}

TEST_F(ZoneTest, PoolsAreNamesWithoutDataAndOtherNamesAreUnknownOrRefused) {
  ServiceEndpoints deep = Web();
  deep.pool = "/prod/eu/edge";
  ASSERT_TRUE(zone_.Set(deep).ok());
  for (const char* pool : {"edge.eu.prod.paceline", "eu.prod.paceline", "prod.paceline"}) {
    Answer a = zone_.Lookup(pool, RecordType::kA);
    EXPECT_EQ(a.rcode, Rcode::kNoError) << pool;
    EXPECT_TRUE(a.negative) << pool;
  }
  EXPECT_EQ(zone_.Lookup("nope.paceline", RecordType::kA).rcode, Rcode::kNxDomain);
  EXPECT_EQ(zone_.Lookup("x.web.edge.eu.prod.paceline", RecordType::kA).rcode, Rcode::kNxDomain);
  Answer outside = zone_.Lookup("example.com", RecordType::kA);
  EXPECT_EQ(outside.rcode, Rcode::kRefused);
  EXPECT_FALSE(outside.authoritative);
  Answer apex = zone_.Lookup("paceline.", RecordType::kSoa);
  ASSERT_EQ(apex.answers.size(), 1u);
  EXPECT_EQ(apex.answers[0].type, RecordType::kSoa);
  EXPECT_TRUE(zone_.Lookup("paceline", RecordType::kA).negative);
}

TEST_F(ZoneTest, AJobWithoutADnsNameOrWithABadAddressIsKeptOutSayingWhy) {
  ServiceEndpoints bad = Web();
  bad.name = "my_web";
  absl::Status s = zone_.Set(bad);
  EXPECT_THAT(s.message(), HasSubstr("my_web"));
  EXPECT_EQ(zone_.jobs(), 0u);

  ASSERT_TRUE(zone_.Set(Web()).ok());
  ServiceEndpoints wrong = Web();
  wrong.instances[0].address = "host-1";
  EXPECT_THAT(zone_.Set(wrong).message(), HasSubstr("'host-1' is not an IP address"));
  EXPECT_EQ(zone_.Lookup("web.prod.paceline", RecordType::kA).rcode, Rcode::kNxDomain);

  // Renamed: the old name goes, the new one comes.
  ASSERT_TRUE(zone_.Set(Web()).ok());
  ServiceEndpoints renamed = Web();
  renamed.name = "www";
  ASSERT_TRUE(zone_.Set(renamed).ok());
  EXPECT_EQ(zone_.Lookup("web.prod.paceline", RecordType::kA).rcode, Rcode::kNxDomain);
  EXPECT_FALSE(zone_.Lookup("www.prod.paceline", RecordType::kA).answers.empty());
}

TEST_F(ZoneTest, AnswersAreBoundedLowestInstancesFirst) {
  Zone small(ZoneOptions{.domain = "paceline", .ttl_s = 1, .max_records = 5});
  ServiceEndpoints big{.job_id = 1, .pool = "/", .name = "big"};
  for (uint32_t i = 0; i < 100; ++i) {
    big.instances.push_back(Instance(i, "198.18.1." + std::to_string(i + 1), true));
  }
  ASSERT_TRUE(small.Set(big).ok());
  Answer a = small.Lookup("big.paceline", RecordType::kA);
  ASSERT_EQ(a.answers.size(), 5u);
  EXPECT_EQ(a.answers[0].address, "198.18.1.1");
  EXPECT_EQ(a.answers[4].address, "198.18.1.5");
  a = small.Lookup("_http._tcp.big.paceline", RecordType::kSrv);
  EXPECT_EQ(a.answers.size(), 5u);
  EXPECT_EQ(a.additional.size(), 5u);
}

}  // namespace
}  // namespace paceline::dns
