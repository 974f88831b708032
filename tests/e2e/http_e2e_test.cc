// End to end: the master's HTTP port as an attacker on the same network would try it — a
// thousand connections that never finish their request and a thousand that never read their
// answer, held open from other addresses — while /healthz, /metrics and an authenticated JSON
// call from a well-behaved client keep answering within 100 ms, oversized requests get 431 and
// 413, and the master's memory stays bounded; watches whose clients reset at once give their
// slots back. The same stalls over HTTPS, in the middle of the TLS handshake.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;

constexpr int kStalled = 1000;
constexpr int kSlowReaders = 1000;
constexpr int kSourceAddresses = 8;  // per kind: 125 connections each, within the per-address cap

void RaiseOpenFileLimit() {
  rlimit r{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &r), 0);
  r.rlim_cur = r.rlim_max;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &r), 0);
  ASSERT_GE(r.rlim_cur, static_cast<rlim_t>(kStalled + kSlowReaders + 256))
      << "the test needs that many open files";
}

// A socket from `source` (a loopback address) to 127.0.0.1:port, with a small receive buffer
// when `small_buffer` (so that a reader that does not read holds the server's answer back).
int ConnectFrom(const std::string& source, uint16_t port, bool small_buffer) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (small_buffer) {
    int size = 2048;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
  }
  sockaddr_in from{};
  from.sin_family = AF_INET;
  ::inet_pton(AF_INET, source.c_str(), &from.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

void Send(int fd, const std::string& data) {
  (void)::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
}

std::string ReadAll(int fd) {
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof(buf))) > 0;) out.append(buf, static_cast<size_t>(n));
  return out;
}

// The resident memory of process `pid`, in bytes.
int64_t ResidentBytes(int pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    std::vector<std::string> parts = absl::StrSplit(line, ' ', absl::SkipEmpty());
    int64_t kb = 0;
    if (parts.size() >= 2 && absl::SimpleAtoi(parts[1], &kb)) return kb * 1024;
  }
  return -1;
}

// 20 rounds of /healthz, /metrics and an authenticated JSON call, each expected to answer 200;
// `slowest` is the longest any of them took.
void CallAsAWellBehavedClient(httplib::Client& c, const std::string& token,
                              absl::Duration& slowest) {
  httplib::Headers auth = {{"Authorization", "Bearer " + token}};
  for (int i = 0; i < 20; ++i) {
    for (const char* path : {"/healthz", "/metrics"}) {
      absl::Time t0 = absl::Now();
      auto r = c.Get(path, auth);
      slowest = std::max(slowest, absl::Now() - t0);
      ASSERT_TRUE(r) << path << ": " << httplib::to_string(r.error());
      EXPECT_EQ(r->status, 200) << path;
    }
    absl::Time t0 = absl::Now();
    auto r = c.Post("/api/v1/PoolService/ListPools", auth, "{}", "application/json");
    slowest = std::max(slowest, absl::Now() - t0);
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    EXPECT_EQ(r->status, 200) << r->body;
  }
}

class HttpAbuseE2E : public ::testing::Test {
 protected:
  static ClusterOptions Options() {
    ClusterOptions o;
    o.agents = 0;
    return o;
  }
  TestCluster cluster_{Options()};
};

TEST_F(HttpAbuseE2E, StalledAndSlowClientsDoNotStopHealthMetricsOrTheApi) {
  RaiseOpenFileLimit();
  const std::string http = cluster_.HttpAddress();
  uint16_t port = 0;
  {
    uint32_t p = 0;
    ASSERT_TRUE(absl::SimpleAtoi(http.substr(http.rfind(':') + 1), &p)) << http;
    port = static_cast<uint16_t>(p);
  }
  nlohmann::json endpoints =
      nlohmann::json::parse(ReadFile(cluster_.dir() + "/master/master.json"));
  const int pid = endpoints["pid"];
  // The web UI's script: the largest answer the port gives without a token.
  std::smatch m;
  std::string index = cluster_.HttpGet("/ui/");
  ASSERT_TRUE(std::regex_search(index, m, std::regex(R"((app-[A-Z0-9]+\.js))"))) << index;
  const std::string script = m[1];
  const int64_t rss_before = ResidentBytes(pid);

  std::vector<int> held;
  for (int i = 0; i < kStalled; ++i) {
    int fd = ConnectFrom(absl::StrCat("127.0.0.", 2 + i % kSourceAddresses), port, false);
    ASSERT_GE(fd, 0) << "stalled connection " << i;
    Send(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Never-Ends: ");
    held.push_back(fd);
  }
  for (int i = 0; i < kSlowReaders; ++i) {
    int fd = ConnectFrom(absl::StrCat("127.0.0.", 20 + i % kSourceAddresses), port, true);
    ASSERT_GE(fd, 0) << "slow reader " << i;
    Send(fd, absl::StrCat("GET /ui/", script, " HTTP/1.1\r\nHost: x\r\n\r\n"));
    held.push_back(fd);
  }
  absl::SleepFor(absl::Seconds(1));  // the server has accepted them all

  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(2);
  c.set_read_timeout(2);
  absl::Duration slowest = absl::ZeroDuration();
  ASSERT_NO_FATAL_FAILURE(CallAsAWellBehavedClient(c, cluster_.token(), slowest));
  std::cout << "with " << kStalled << " stalled and " << kSlowReaders
            << " slow clients held open: slowest answer " << slowest << std::endl;
  // The 100 ms promise is the release build's (`make test`). The sanitizers make every call
  // several times slower and other tests share the cores, so their run (`make test-asan-full`)
  // checks only that nothing waits for the stalled clients (a read deadline is 10 s).
  EXPECT_LT(slowest, kSanitized ? absl::Milliseconds(1500) : absl::Milliseconds(100));

  // Oversized requests are refused with their status, whatever else is going on.
  int fd = ConnectFrom("127.0.0.1", port, false);
  ASSERT_GE(fd, 0);
  Send(fd,
       "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(64 * 1024, 'a') + "\r\n\r\n");
  EXPECT_THAT(ReadAll(fd), HasSubstr("HTTP/1.1 431"));
  ::close(fd);
  fd = ConnectFrom("127.0.0.1", port, false);
  ASSERT_GE(fd, 0);
  Send(fd,
       "POST /api/v1/PoolService/ListPools HTTP/1.1\r\nHost: x\r\nContent-Length: "
       "100000000\r\n\r\n");
  EXPECT_THAT(ReadAll(fd), HasSubstr("HTTP/1.1 413"));
  ::close(fd);

  const int64_t rss_after = ResidentBytes(pid);
  std::cout << "master resident memory: " << rss_before / (1 << 20) << " MiB before, "
            << rss_after / (1 << 20) << " MiB with them" << std::endl;
  EXPECT_LT(rss_after - rss_before, int64_t{64} << 20) << "2,000 connections cost more than 64 MiB";
  for (int h : held) ::close(h);
}

TEST_F(HttpAbuseE2E, WatchesWhoseClientsResetAtOnceGiveTheirSlotsBack) {
  const std::string http = cluster_.HttpAddress();
  uint32_t port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(http.substr(http.rfind(':') + 1), &port)) << http;
  const std::string watch = absl::StrCat("GET /api/v1/JobService/Watch HTTP/1.1\r\nHost: x\r\n",
                                         "Authorization: Bearer ", cluster_.token(), "\r\n\r\n");
  // More than the 32 watches HTTP allows at once, each reset right after its request.
  for (int i = 0; i < 40; ++i) {
    int fd = ConnectFrom("127.0.0.1", static_cast<uint16_t>(port), false);
    ASSERT_GE(fd, 0);
    Send(fd, watch);
    linger reset{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    ::close(fd);
  }
  // A watch still starts (not 429): wait for the slots to come back, then read its first event.
  std::string first;
  ASSERT_TRUE(WaitFor(
      [&] {
        int fd = ConnectFrom("127.0.0.1", static_cast<uint16_t>(port), false);
        if (fd < 0) return false;
        Send(fd, watch);
        timeval tv{2, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        char buf[2048];
        first.clear();
        for (ssize_t n; first.find("started") == std::string::npos &&
                        (n = ::read(fd, buf, sizeof(buf))) > 0;) {
          first.append(buf, static_cast<size_t>(n));
        }
        ::close(fd);
        return first.rfind("HTTP/1.1 200", 0) == 0;
      },
      absl::Seconds(20)))
      << first;
  EXPECT_THAT(first, HasSubstr("started"));
}

// The same over HTTPS (the default): connections that stop in the middle of their TLS
// handshake, and connections that never start one, cost a socket each until the read deadline,
// never a thread, and the master's memory stays bounded while well-behaved HTTPS clients are
// answered within 100 ms.
TEST(HttpsAbuseE2E, StalledHandshakesDoNotStopHealthMetricsOrTheApi) {
  RaiseOpenFileLimit();
  TestCluster cluster({.agents = 0, .tls = true});
  const std::string http = cluster.HttpAddress();
  uint32_t port = 0;
  ASSERT_TRUE(absl::SimpleAtoi(http.substr(http.rfind(':') + 1), &port)) << http;
  nlohmann::json endpoints = nlohmann::json::parse(ReadFile(cluster.dir() + "/master/master.json"));
  const int pid = endpoints["pid"];
  const int64_t rss_before = ResidentBytes(pid);
  std::vector<int> held;
  for (int i = 0; i < kStalled + kSlowReaders; ++i) {
    int fd = ConnectFrom(absl::StrCat("127.0.0.", 2 + i % (2 * kSourceAddresses)),
                         static_cast<uint16_t>(port), false);
    ASSERT_GE(fd, 0) << "connection " << i;
    // Half send the first bytes of a ClientHello record and stop; half send nothing.
    if (i % 2 == 0) Send(fd, std::string("\x16\x03\x01\x02\x00\x01", 6));
    held.push_back(fd);
  }
  absl::SleepFor(absl::Seconds(1));
  httplib::Client c("https://" + http);
  c.set_ca_cert_path(cluster.ca_file().c_str());
  c.set_keep_alive(true);
  c.set_connection_timeout(2);
  c.set_read_timeout(2);
  absl::Duration slowest = absl::ZeroDuration();
  ASSERT_NO_FATAL_FAILURE(CallAsAWellBehavedClient(c, cluster.token(), slowest));
  std::cout << "with " << held.size() << " stalled TLS handshakes held open: slowest answer "
            << slowest << std::endl;
  EXPECT_LT(slowest, kSanitized ? absl::Milliseconds(1500) : absl::Milliseconds(100));
  const int64_t rss_after = ResidentBytes(pid);
  std::cout << "master resident memory: " << rss_before / (1 << 20) << " MiB before, "
            << rss_after / (1 << 20) << " MiB with them" << std::endl;
  EXPECT_LT(rss_after - rss_before, int64_t{64} << 20) << "2,000 handshakes cost more than 64 MiB";
  for (int h : held) ::close(h);
}

}  // namespace
}  // namespace paceline::e2e
