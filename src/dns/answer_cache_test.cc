#include "dns/answer_cache.h"

#include <memory>
#include <string>
#include <vector>

#include "dns/testing/wire.h"
#include "gtest/gtest.h"

namespace paceline::dns {
namespace {

using testing::NewQuery;
using testing::Pkt;
using testing::ToWire;

std::vector<uint8_t> Query(const std::string& name, ldns_rr_type type, uint16_t id,
                           int edns_size = -1) {
  Pkt q = NewQuery(name, type, id);
  if (edns_size >= 0) ldns_pkt_set_edns_udp_size(q.get(), static_cast<uint16_t>(edns_size));
  return ToWire(q.get());
}

// A zone with service `web` in /prod: `ready` instances, each on its own address.
std::shared_ptr<const Zone> WebZone(uint32_t ready, uint32_t instances = 40) {
  auto zone = std::make_shared<Zone>(ZoneOptions{});
  ServiceEndpoints web{.job_id = 1, .pool = "/prod", .name = "web"};
  for (uint32_t i = 0; i < instances; ++i) {
    web.instances.push_back(InstanceEndpoint{.instance = i,
                                             .address = "198.18.1." + std::to_string(10 + i),
                                             .ports = {{"http", static_cast<uint16_t>(31000 + i)}},
                                             .ready = i < ready});
  }
  EXPECT_TRUE(zone->Set(web).ok());
  return zone;
}

TEST(AnswerCacheTest, AQuestionAskedAgainIsTheSameAnswerWithItsOwnId) {
  std::shared_ptr<const Zone> zone = WebZone(6);
  AnswerCache cache;
  for (uint16_t id : {1, 2, 0xbeef}) {
    for (const auto& [name, type] : std::vector<std::pair<std::string, ldns_rr_type>>{
             {"web.prod.paceline.", LDNS_RR_TYPE_A},
             {"_http._tcp.web.prod.paceline.", LDNS_RR_TYPE_SRV},
             {"nope.prod.paceline.", LDNS_RR_TYPE_A},
             {"example.com.", LDNS_RR_TYPE_A}}) {
      const std::vector<uint8_t> q = Query(name, type, id);
      std::optional<std::vector<uint8_t>> got = cache.Respond(zone, q, Transport::kUdp);
      ASSERT_TRUE(got.has_value()) << name;
      EXPECT_EQ(*got, *dns::Respond(*zone, q, Transport::kUdp)) << name << " id " << id;
      EXPECT_EQ((*got)[0] << 8 | (*got)[1], id);
    }
  }
  EXPECT_EQ(cache.stats().misses, 4u);
  EXPECT_EQ(cache.stats().hits, 8u);
  EXPECT_EQ(cache.size(), 4u);
}

TEST(AnswerCacheTest, TransportEdnsSizeAndLetterCaseAreAnswersOfTheirOwn) {
  // 40 SRV records and their addresses: TC without EDNS, part of it with 1232 bytes, all of it
  // over TCP; the question's letter case is echoed as asked.
  std::shared_ptr<const Zone> zone = WebZone(40);
  AnswerCache cache;
  const std::vector<std::vector<uint8_t>> queries = {
      Query("_http._tcp.web.prod.paceline.", LDNS_RR_TYPE_SRV, 7),
      Query("_http._tcp.web.prod.paceline.", LDNS_RR_TYPE_SRV, 7, 1232),
      Query("_http._tcp.WEB.prod.paceline.", LDNS_RR_TYPE_SRV, 7, 1232)};
  for (int round = 0; round < 2; ++round) {
    for (const std::vector<uint8_t>& q : queries) {
      for (Transport t : {Transport::kUdp, Transport::kTcp}) {
        EXPECT_EQ(cache.Respond(zone, q, t), dns::Respond(*zone, q, t));
      }
    }
  }
  EXPECT_EQ(cache.size(), 6u);
  EXPECT_EQ(cache.stats().hits, 6u);
  // The three UDP answers differ (TC, a part, another case): the key told them apart.
  const auto udp = [&](size_t i) { return *cache.Respond(zone, queries[i], Transport::kUdp); };
  EXPECT_NE(udp(0), udp(1));
  EXPECT_NE(udp(1), udp(2));
  EXPECT_NE(udp(1), *cache.Respond(zone, queries[1], Transport::kTcp));
}

TEST(AnswerCacheTest, ANewZoneIsAnsweredFromTheNewZone) {
  std::shared_ptr<const Zone> before = WebZone(6);
  std::shared_ptr<const Zone> after = WebZone(2);
  AnswerCache cache;
  const std::vector<uint8_t> q = Query("_http._tcp.web.prod.paceline.", LDNS_RR_TYPE_SRV, 9);
  EXPECT_EQ(cache.Respond(before, q, Transport::kUdp), dns::Respond(*before, q, Transport::kUdp));
  EXPECT_EQ(cache.Respond(after, q, Transport::kUdp), dns::Respond(*after, q, Transport::kUdp));
  EXPECT_NE(dns::Respond(*before, q, Transport::kUdp), dns::Respond(*after, q, Transport::kUdp));
  EXPECT_EQ(cache.stats().hits, 0u);
  EXPECT_EQ(cache.stats().clears, 1u);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(AnswerCacheTest, ItHoldsAtMostItsEntriesAndBytes) {
  std::shared_ptr<const Zone> zone = WebZone(6);
  AnswerCache cache({.max_entries = 3, .max_bytes = 1 << 20});
  for (int i = 0; i < 20; ++i) {
    const std::vector<uint8_t> q =
        Query("n" + std::to_string(i) + ".prod.paceline.", LDNS_RR_TYPE_A, 1);
    EXPECT_EQ(cache.Respond(zone, q, Transport::kUdp), dns::Respond(*zone, q, Transport::kUdp));
    EXPECT_LE(cache.size(), 3u);
  }
  // An answer bigger than all the bytes allowed is answered and not kept.
  AnswerCache tiny({.max_entries = 100, .max_bytes = 64});
  const std::vector<uint8_t> srv = Query("_http._tcp.web.prod.paceline.", LDNS_RR_TYPE_SRV, 1);
  EXPECT_EQ(tiny.Respond(zone, srv, Transport::kTcp), dns::Respond(*zone, srv, Transport::kTcp));
  EXPECT_EQ(tiny.size(), 0u);
}

TEST(AnswerCacheTest, MessagesWithoutAnAnswerOrThatDoNotParseAreAnsweredAsRespondDoes) {
  std::shared_ptr<const Zone> zone = WebZone(6);
  AnswerCache cache;
  const std::vector<uint8_t> shorter = {0x12, 0x34, 0x01};
  EXPECT_FALSE(cache.Respond(zone, shorter, Transport::kUdp).has_value());
  std::vector<uint8_t> response = Query("web.prod.paceline.", LDNS_RR_TYPE_A, 5);
  response[2] |= 0x80;  // QR: a response is never answered
  EXPECT_FALSE(cache.Respond(zone, response, Transport::kUdp).has_value());
  // A header and garbage: FORMERR with each query's own id.
  for (uint8_t id : {3, 4}) {
    std::vector<uint8_t> garbage = {0, id, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    std::optional<std::vector<uint8_t>> got = cache.Respond(zone, garbage, Transport::kUdp);
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(*got, *dns::Respond(*zone, garbage, Transport::kUdp));
    EXPECT_EQ((*got)[1], id);
  }
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.size(), 1u);
}

}  // namespace
}  // namespace paceline::dns
