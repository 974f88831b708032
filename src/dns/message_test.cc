#include "dns/message.h"

#include <cstdlib>
#include <string>

#include "dns/testing/wire.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace paceline::dns {
namespace {

using testing::NewQuery;
using testing::Pkt;
using testing::ToWire;

struct Ask {
  std::string name;
  ldns_rr_type type = LDNS_RR_TYPE_A;
  ldns_rr_class klass = LDNS_RR_CLASS_IN;
  int edns_size = -1;  // -1: no EDNS
  uint8_t edns_version = 0;
  ldns_pkt_opcode opcode = LDNS_PACKET_QUERY;
};

std::vector<uint8_t> Query(const Ask& ask) {
  Pkt q = NewQuery(ask.name, ask.type, 4242, ask.klass);
  ldns_pkt_set_opcode(q.get(), ask.opcode);
  if (ask.edns_size >= 0) {
    ldns_pkt_set_edns_udp_size(q.get(), static_cast<uint16_t>(ask.edns_size));
    ldns_pkt_set_edns_version(q.get(), ask.edns_version);
  }
  return ToWire(q.get());
}

Pkt Parse(const std::vector<uint8_t>& wire) {
  Pkt p = testing::Parse(wire.data(), wire.size());
  EXPECT_TRUE(p != nullptr);
  return p;
}

std::vector<std::string> Section(const ldns_rr_list* list) {
  std::vector<std::string> out;
  for (size_t i = 0; i < ldns_rr_list_rr_count(list); ++i) {
    char* text = ldns_rr2str(ldns_rr_list_rr(list, i));
    std::string line(text);
    free(text);
    while (!line.empty() && line.back() == '\n') line.pop_back();
    out.push_back(line);
  }
  return out;
}

class MessageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServiceEndpoints web{.job_id = 1, .pool = "/prod", .name = "web"};
    for (uint32_t i = 0; i < 3; ++i) {
      web.instances.push_back(InstanceEndpoint{.instance = i,
                                               .address = "198.18.0." + std::to_string(11 + i),
                                               .ports = {{"http", uint16_t(31000 + i)}},
                                               .ready = true});
    }
    ASSERT_TRUE(zone_.Set(web).ok());
    ServiceEndpoints big{.job_id = 2, .pool = "/", .name = "big"};
    for (uint32_t i = 0; i < 200; ++i) {
      big.instances.push_back(InstanceEndpoint{
          .instance = i,
          .address = "198.18." + std::to_string(1 + i / 250) + "." + std::to_string(1 + i % 250),
          .ports = {{"http", uint16_t(32000 + i)}},
          .ready = true});
    }
    ASSERT_TRUE(zone_.Set(big).ok());
  }

  Pkt Ask(const struct Ask& ask, Transport transport = Transport::kUdp) {
    std::optional<std::vector<uint8_t>> wire = Respond(zone_, Query(ask), transport);
    EXPECT_TRUE(wire.has_value());
    if (!wire.has_value()) return nullptr;
    if (transport == Transport::kUdp && ask.edns_size < 0) {
      EXPECT_LE(wire->size(), kMaxUdpWithoutEdns);
    }
    return Parse(*wire);
  }

  Zone zone_{ZoneOptions{.domain = "paceline", .ttl_s = 1}};
};

TEST_F(MessageTest, AnAQueryIsAnsweredAuthoritativelyWithTheIdAndQuestion) {
  Pkt r = Ask({.name = "web.prod.paceline."});
  ASSERT_TRUE(r);
  EXPECT_EQ(ldns_pkt_id(r.get()), 4242);
  EXPECT_TRUE(ldns_pkt_qr(r.get()));
  EXPECT_TRUE(ldns_pkt_aa(r.get()));
  EXPECT_TRUE(ldns_pkt_rd(r.get()));
  EXPECT_FALSE(ldns_pkt_ra(r.get()));
  EXPECT_FALSE(ldns_pkt_tc(r.get()));
  EXPECT_EQ(ldns_pkt_get_rcode(r.get()), LDNS_RCODE_NOERROR);
  EXPECT_EQ(ldns_pkt_qdcount(r.get()), 1);
  EXPECT_THAT(Section(ldns_pkt_answer(r.get())),
              ::testing::ElementsAre("web.prod.paceline.\t1\tIN\tA\t198.18.0.11",
                                     "web.prod.paceline.\t1\tIN\tA\t198.18.0.12",
                                     "web.prod.paceline.\t1\tIN\tA\t198.18.0.13"));
}

TEST_F(MessageTest, SrvAnswersCarryTheTargetsAddresses) {
  Pkt r = Ask({.name = "_http._tcp.web.prod.paceline.", .type = LDNS_RR_TYPE_SRV});
  ASSERT_TRUE(r);
  EXPECT_THAT(Section(ldns_pkt_answer(r.get())),
              ::testing::ElementsAre(
                  "_http._tcp.web.prod.paceline.\t1\tIN\tSRV\t0 1 31000 0.web.prod.paceline.",
                  "_http._tcp.web.prod.paceline.\t1\tIN\tSRV\t0 1 31001 1.web.prod.paceline.",
                  "_http._tcp.web.prod.paceline.\t1\tIN\tSRV\t0 1 31002 2.web.prod.paceline."));
  EXPECT_THAT(Section(ldns_pkt_additional(r.get())),
              ::testing::Contains("1.web.prod.paceline.\t1\tIN\tA\t198.18.0.12"));
}

TEST_F(MessageTest, NegativeAnswersCarryTheSoa) {
  Pkt r = Ask({.name = "nothing.paceline."});
  EXPECT_EQ(ldns_pkt_get_rcode(r.get()), LDNS_RCODE_NXDOMAIN);
  std::vector<std::string> authority = Section(ldns_pkt_authority(r.get()));
  ASSERT_EQ(authority.size(), 1u);
  EXPECT_THAT(authority[0], ::testing::HasSubstr("SOA\tpaceline. hostmaster.paceline."));
  r = Ask({.name = "prod.paceline."});
  EXPECT_EQ(ldns_pkt_get_rcode(r.get()), LDNS_RCODE_NOERROR);
  EXPECT_EQ(ldns_pkt_ancount(r.get()), 0);
  EXPECT_EQ(ldns_pkt_nscount(r.get()), 1);
}

TEST_F(MessageTest, ItDoesNotRecurseTransferOrServeOtherClasses) {
  Pkt r = Ask({.name = "example.com."});
  EXPECT_EQ(ldns_pkt_get_rcode(r.get()), LDNS_RCODE_REFUSED);
  EXPECT_FALSE(ldns_pkt_aa(r.get()));
  r = Ask({.name = "paceline.", .type = LDNS_RR_TYPE_AXFR}, Transport::kTcp);
  EXPECT_EQ(ldns_pkt_get_rcode(r.get()), LDNS_RCODE_REFUSED);
  r = Ask({.name = "web.prod.paceline.", .klass = LDNS_RR_CLASS_CH});
  EXPECT_EQ(ldns_pkt_get_rcode(r.get()), LDNS_RCODE_REFUSED);
  r = Ask({.name = "web.prod.paceline.", .opcode = LDNS_PACKET_STATUS});
  EXPECT_EQ(ldns_pkt_get_rcode(r.get()), LDNS_RCODE_NOTIMPL);
}

TEST_F(MessageTest, LargeAnswersTruncateOverUdpAndFitTheClientsEdnsSize) {
  // 200 A records: 16 bytes each after the first name; more than 512 and more than 1232.
  Pkt r = Ask({.name = "big.paceline."});
  EXPECT_TRUE(ldns_pkt_tc(r.get()));
  EXPECT_EQ(ldns_pkt_ancount(r.get()), 0);
  r = Ask({.name = "big.paceline.", .edns_size = 4096});
  EXPECT_TRUE(ldns_pkt_tc(r.get()));
  EXPECT_TRUE(ldns_pkt_edns(r.get()));
  EXPECT_EQ(ldns_pkt_edns_udp_size(r.get()), kEdnsUdpSize);
  r = Ask({.name = "big.paceline."}, Transport::kTcp);
  EXPECT_FALSE(ldns_pkt_tc(r.get()));
  EXPECT_EQ(ldns_pkt_ancount(r.get()), 200);

  // SRV targets are not compressed (RFC 2782): 25 SRV records fit in 1232 bytes, not with their
  // targets' addresses, which are left out without truncating.
  ServiceEndpoints mid{.job_id = 3, .pool = "/", .name = "mid"};
  for (uint32_t i = 0; i < 25; ++i) {
    mid.instances.push_back(InstanceEndpoint{.instance = i,
                                             .address = "198.19.0." + std::to_string(i + 1),
                                             .ports = {{"http", uint16_t(33000 + i)}},
                                             .ready = true});
  }
  ASSERT_TRUE(zone_.Set(mid).ok());
  std::optional<std::vector<uint8_t>> wire = Respond(
      zone_,
      Query({.name = "_http._tcp.mid.paceline.", .type = LDNS_RR_TYPE_SRV, .edns_size = 1232}),
      Transport::kUdp);
  ASSERT_TRUE(wire.has_value());
  EXPECT_LE(wire->size(), kEdnsUdpSize);
  r = Parse(*wire);
  EXPECT_FALSE(ldns_pkt_tc(r.get()));
  EXPECT_EQ(ldns_pkt_ancount(r.get()), 25);
  EXPECT_EQ(ldns_pkt_arcount(r.get()), 0);  // ldns reads the OPT record apart
  EXPECT_TRUE(ldns_pkt_edns(r.get()));
}

TEST_F(MessageTest, AnEdnsVersionAboveZeroIsBadVers) {
  Pkt r = Ask({.name = "web.prod.paceline.", .edns_size = 1232, .edns_version = 1});
  EXPECT_EQ(ldns_pkt_get_rcode(r.get()), 0);
  EXPECT_EQ(ldns_pkt_edns_extended_rcode(r.get()), 1);  // BADVERS = 16
  EXPECT_EQ(ldns_pkt_ancount(r.get()), 0);
}

TEST_F(MessageTest, MalformedMessagesAreFormErrOrDropped) {
  std::vector<uint8_t> q = Query({.name = "web.prod.paceline."});
  // Too short for a header, and a response: dropped.
  EXPECT_FALSE(
      Respond(zone_, std::vector<uint8_t>(q.begin(), q.begin() + 11), Transport::kUdp).has_value());
  std::vector<uint8_t> response = q;
  response[2] |= 0x80;
  EXPECT_FALSE(Respond(zone_, response, Transport::kUdp).has_value());
  // A question cut short: FORMERR with the id.
  std::optional<std::vector<uint8_t>> r =
      Respond(zone_, std::vector<uint8_t>(q.begin(), q.end() - 3), Transport::kUdp);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->size(), 12u);
  EXPECT_EQ((*r)[0] * 256 + (*r)[1], 4242);
  EXPECT_EQ((*r)[3] & 0x0f, 1);
  EXPECT_NE((*r)[2] & 0x80, 0);
  // Two questions: FORMERR.
  Pkt two = NewQuery("web.prod.paceline.", LDNS_RR_TYPE_A, 1);
  ldns_pkt_push_rr(two.get(), LDNS_SECTION_QUESTION,
                   ldns_rr_clone(ldns_rr_list_rr(ldns_pkt_question(two.get()), 0)));
  r = Respond(zone_, ToWire(two.get()), Transport::kUdp);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(ldns_pkt_get_rcode(Parse(*r).get()), LDNS_RCODE_FORMERR);
}

TEST_F(MessageTest, ANameWithADotInsideALabelIsNotReadAsAnother) {
  // "web.prod" as one label under paceline: not web.prod.paceline.
  std::vector<uint8_t> q = Query({.name = "xx.paceline."});
  std::vector<uint8_t> crafted(q.begin(), q.begin() + 12);
  const std::string label = "web.prod";
  crafted.push_back(static_cast<uint8_t>(label.size()));
  crafted.insert(crafted.end(), label.begin(), label.end());
  crafted.push_back(8);
  for (char c : std::string("paceline")) crafted.push_back(static_cast<uint8_t>(c));
  crafted.insert(crafted.end(), {0, 0, 1, 0, 1});
  std::optional<std::vector<uint8_t>> r = Respond(zone_, crafted, Transport::kUdp);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(ldns_pkt_get_rcode(Parse(*r).get()), LDNS_RCODE_NXDOMAIN);
}

TEST_F(MessageTest, ATruncatedReplyIsEmptyWithTheQuestionAndTc) {
  std::optional<std::vector<uint8_t>> r = TruncatedReply(Query({.name = "web.prod.paceline."}));
  ASSERT_TRUE(r.has_value());
  Pkt reply = Parse(*r);
  EXPECT_TRUE(ldns_pkt_tc(reply.get()));
  EXPECT_EQ(ldns_pkt_id(reply.get()), 4242);
  EXPECT_EQ(ldns_pkt_qdcount(reply.get()), 1);
  EXPECT_EQ(ldns_pkt_ancount(reply.get()), 0);
  EXPECT_FALSE(TruncatedReply(std::vector<uint8_t>(5, 0)).has_value());
}

}  // namespace
}  // namespace paceline::dns
