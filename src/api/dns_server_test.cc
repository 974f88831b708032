#include "api/dns_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "dns/testing/wire.h"
#include "gtest/gtest.h"

namespace paceline::api {
namespace {

std::vector<uint8_t> Query(const std::string& name, ldns_rr_type type, uint16_t id = 7) {
  return dns::testing::QueryWire(name, type, id);
}

struct Reply {
  int rcode = -1;
  int answers = 0;
  bool tc = false;
  uint16_t id = 0;
};

std::optional<Reply> ParseReply(const uint8_t* data, size_t size) {
  dns::testing::Pkt p = dns::testing::Parse(data, size);
  if (p == nullptr) return std::nullopt;
  return Reply{.rcode = ldns_pkt_get_rcode(p.get()),
               .answers = ldns_pkt_ancount(p.get()),
               .tc = ldns_pkt_tc(p.get()),
               .id = ldns_pkt_id(p.get())};
}

sockaddr_in Loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

bool Readable(int fd, int ms) {
  pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
  return poll(&p, 1, ms) == 1;
}

// One UDP query; nullopt when no answer comes within `ms`.
std::optional<Reply> AskUdp(uint16_t port, const std::vector<uint8_t>& query, int ms = 2000) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in to = Loopback(port);
  sendto(fd, query.data(), query.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));
  std::optional<Reply> r;
  if (Readable(fd, ms)) {
    uint8_t buf[65536];
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n > 0) r = ParseReply(buf, static_cast<size_t>(n));
  }
  close(fd);
  return r;
}

int ConnectTcp(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to = Loopback(port);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0);
  return fd;
}

std::optional<Reply> AskTcp(int fd, const std::vector<uint8_t>& query) {
  std::vector<uint8_t> framed = {static_cast<uint8_t>(query.size() >> 8),
                                 static_cast<uint8_t>(query.size() & 0xff)};
  framed.insert(framed.end(), query.begin(), query.end());
  if (send(fd, framed.data(), framed.size(), MSG_NOSIGNAL) != ssize_t(framed.size())) {
    return std::nullopt;
  }
  uint8_t length[2];
  if (!Readable(fd, 2000) || recv(fd, length, 2, MSG_WAITALL) != 2) return std::nullopt;
  std::vector<uint8_t> body(size_t{length[0]} << 8 | length[1]);
  if (recv(fd, body.data(), body.size(), MSG_WAITALL) != ssize_t(body.size())) return std::nullopt;
  return ParseReply(body.data(), body.size());
}

// Whether the server closed `fd` (a read sees the end) within `ms`.
bool ClosedByServer(int fd, int ms) {
  uint8_t b;
  return Readable(fd, ms) && recv(fd, &b, 1, 0) <= 0;
}

std::shared_ptr<const dns::Zone> WebZone(uint32_t ready) {
  auto zone = std::make_shared<dns::Zone>(dns::ZoneOptions{});
  dns::ServiceEndpoints web{.job_id = 1, .pool = "/prod", .name = "web"};
  for (uint32_t i = 0; i < 6; ++i) {
    web.instances.push_back({.instance = i,
                             .address = "198.18.0." + std::to_string(10 + i),
                             .ports = {{"http", static_cast<uint16_t>(31000 + i)}},
                             .ready = i < ready});
  }
  EXPECT_TRUE(zone->Set(web).ok());
  return zone;
}

class DnsServerTest : public ::testing::Test {
 protected:
  void Start(DnsLimits limits = {}) {
    server_.emplace("127.0.0.1", 0, limits);
    ASSERT_TRUE(server_->Start(dns::ZoneOptions{}).ok());
    ASSERT_NE(server_->port(), 0);
  }
  std::optional<DnsServer> server_;
};

TEST_F(DnsServerTest, AnswersOverUdpAndTcpFromTheNewestPublishedZone) {
  Start();
  std::optional<Reply> r = AskUdp(server_->port(), Query("web.prod.paceline.", LDNS_RR_TYPE_A));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->rcode, LDNS_RCODE_NXDOMAIN);  // nothing published yet

  server_->Publish(WebZone(6));
  r = AskUdp(server_->port(), Query("web.prod.paceline.", LDNS_RR_TYPE_A, 99));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->rcode, LDNS_RCODE_NOERROR);
  EXPECT_EQ(r->answers, 6);
  EXPECT_EQ(r->id, 99);

  server_->Publish(WebZone(2));
  int fd = ConnectTcp(server_->port());
  for (int i = 0; i < 3; ++i) {  // several queries on one connection
    r = AskTcp(fd, Query("_http._tcp.web.prod.paceline.", LDNS_RR_TYPE_SRV));
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->answers, 2);
  }
  close(fd);
  EXPECT_EQ(server_->stats().udp_queries, 2u);
  EXPECT_EQ(server_->stats().tcp_queries, 3u);
}

TEST_F(DnsServerTest, AQuestionAskedAgainFollowsEachPublishedZone) {
  // The same question, over and over, across zones that alternate (answers are cached per zone).
  Start();
  const int fd = ConnectTcp(server_->port());
  for (uint32_t round = 0; round < 6; ++round) {
    const uint32_t ready = round % 2 == 0 ? 6 : 3;
    server_->Publish(WebZone(ready));
    for (uint16_t id = 1; id <= 3; ++id) {
      std::optional<Reply> udp =
          AskUdp(server_->port(), Query("_http._tcp.web.prod.paceline.", LDNS_RR_TYPE_SRV, id));
      ASSERT_TRUE(udp.has_value());
      EXPECT_EQ(udp->answers, static_cast<int>(ready)) << "round " << round;
      EXPECT_EQ(udp->id, id);
      std::optional<Reply> tcp =
          AskTcp(fd, Query("_http._tcp.web.prod.paceline.", LDNS_RR_TYPE_SRV, 100 + id));
      ASSERT_TRUE(tcp.has_value());
      EXPECT_EQ(tcp->answers, static_cast<int>(ready)) << "round " << round;
      EXPECT_EQ(tcp->id, 100 + id);
    }
  }
  close(fd);
}

TEST_F(DnsServerTest, GarbageGetsFormErrOrNothingAndTheServerGoesOn) {
  Start();
  server_->Publish(WebZone(6));
  std::vector<uint8_t> junk(40, 0xff);
  junk[2] = 0x01;  // not a response
  std::optional<Reply> r = AskUdp(server_->port(), junk, 500);
  EXPECT_FALSE(r.has_value() && r->rcode == LDNS_RCODE_NOERROR);
  EXPECT_FALSE(AskUdp(server_->port(), {1, 2, 3}, 300).has_value());
  r = AskUdp(server_->port(), Query("web.prod.paceline.", LDNS_RR_TYPE_A));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->answers, 6);
}

TEST_F(DnsServerTest, AFloodFromOneSourceIsLimitedWithSlippedTruncations) {
  Start(DnsLimits{.rate = {.rate = 0.01, .burst = 5, .slip = 2}});  // no refill during the test
  server_->Publish(WebZone(6));
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in to = Loopback(server_->port());
  const std::vector<uint8_t> q = Query("web.prod.paceline.", LDNS_RR_TYPE_A);
  for (int i = 0; i < 45; ++i) {
    sendto(fd, q.data(), q.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));
  }
  int answered = 0, truncated = 0;
  uint8_t buf[4096];
  while (Readable(fd, 500)) {
    ssize_t n = recv(fd, buf, sizeof(buf), 0);
    std::optional<Reply> r = ParseReply(buf, static_cast<size_t>(n));
    ASSERT_TRUE(r.has_value());
    (r->tc ? truncated : answered)++;
  }
  close(fd);
  EXPECT_EQ(answered, 5);
  EXPECT_EQ(truncated, 20);  // one in two of the 40 refused
  EXPECT_EQ(server_->stats().rate_limited, 40u);
}

TEST_F(DnsServerTest, TcpConnectionsAreCappedAndIdleOnesClosed) {
  Start(DnsLimits{
      .max_tcp_connections = 8, .max_tcp_per_address = 2, .tcp_idle = absl::Milliseconds(300)});
  server_->Publish(WebZone(6));
  int a = ConnectTcp(server_->port());
  int b = ConnectTcp(server_->port());
  int c = ConnectTcp(server_->port());  // a third from one address: closed at once
  EXPECT_TRUE(ClosedByServer(c, 2000));
  EXPECT_TRUE(AskTcp(a, Query("web.prod.paceline.", LDNS_RR_TYPE_A)).has_value());
  EXPECT_TRUE(ClosedByServer(b, 2000));  // idle
  EXPECT_TRUE(ClosedByServer(a, 2000));
  close(a);
  close(b);
  close(c);
  EXPECT_EQ(server_->stats().tcp_refused, 1u);
  // Room again once they are gone.
  int d = ConnectTcp(server_->port());
  EXPECT_TRUE(AskTcp(d, Query("web.prod.paceline.", LDNS_RR_TYPE_A)).has_value());
  close(d);
}

TEST_F(DnsServerTest, StopsWithOpenConnections) {
  Start();
  int a = ConnectTcp(server_->port());
  server_->Stop();
  EXPECT_TRUE(ClosedByServer(a, 2000));
  close(a);
}

}  // namespace
}  // namespace paceline::api
