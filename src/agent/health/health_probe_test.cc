// The TCP and HTTP probes against sockets served on 127.0.0.1 by this test, through a
// HealthMonitor on a real Poller.

#include "agent/health/health_probe.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "agent/file_util.h"
#include "agent/health/health_monitor.h"
#include "gtest/gtest.h"

namespace paceline::agent {
namespace {

// A one-connection-at-a-time HTTP server on 127.0.0.1 answering with `status`.
class TinyHttpServer {
 public:
  TinyHttpServer() {
    fd_.Reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(fd_.get(), 16);
    socklen_t len = sizeof(addr);
    ::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] {
      for (;;) {
        int c = ::accept(fd_.get(), nullptr, nullptr);
        if (c < 0 || stop_) {
          if (c >= 0) ::close(c);
          return;
        }
        char buf[1024];
        ssize_t n = ::read(c, buf, sizeof(buf));
        (void)n;
        std::string resp = "HTTP/1.1 " + std::to_string(status_.load()) + " X\r\n\r\n";
        n = ::write(c, resp.data(), resp.size());
        ::close(c);
      }
    });
  }
  ~TinyHttpServer() {
    stop_ = true;
    ::shutdown(fd_.get(), SHUT_RDWR);
    thread_.join();
  }
  uint16_t port() const { return port_; }
  void set_status(int s) { status_ = s; }

 private:
  UniqueFd fd_;
  uint16_t port_ = 0;
  std::atomic<int> status_{200};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Runs one probe to completion on a Poller; nullopt on timeout.
std::optional<bool> RunProbe(HealthProbe& probe) {
  std::optional<bool> r = probe.Start();
  if (r) return r;
  auto poller = Poller::Create().value();
  std::optional<bool> result;
  uint64_t id = poller
                    ->Add(probe.fd(), probe.events(),
                          [&](uint32_t ev) {
                            result = probe.OnReady(ev);
                            if (!result) poller->Modify(id, probe.events()).IgnoreError();
                          })
                    .value();
  absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!result && absl::Now() < deadline) poller->Dispatch(absl::Milliseconds(100));
  return result;
}

uint16_t ClosedPort() {
  UniqueFd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(s.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);  // bound but not listening, then closed: refused
}

TEST(HealthProbeTest, TcpConnectsOrIsRefused) {
  TinyHttpServer server;
  EXPECT_EQ(RunProbe(*MakeTcpProbe(server.port())), true);
  EXPECT_EQ(RunProbe(*MakeTcpProbe(ClosedPort())), false);
}

TEST(HealthProbeTest, HttpHealthyOn2xxAnd3xxOnly) {
  TinyHttpServer server;
  auto probe = MakeHttpProbe(server.port(), "healthz");
  EXPECT_EQ(RunProbe(*probe), true);
  server.set_status(302);
  EXPECT_EQ(RunProbe(*probe), true);
  server.set_status(503);
  EXPECT_EQ(RunProbe(*probe), false);
  EXPECT_EQ(RunProbe(*MakeHttpProbe(ClosedPort(), "/")), false);
}

TEST(HealthMonitorTest, ReportsTransitionsThroughTheEventLoop) {
  TinyHttpServer server;
  auto poller = Poller::Create().value();
  HealthSpec spec;
  spec.check = HttpCheck{"p", "/"};
  spec.interval = absl::Milliseconds(1);
  spec.timeout = absl::Seconds(5);
  spec.failures = 2;
  std::vector<HealthState> changes;
  absl::Time now = absl::Now();
  HealthMonitor m(
      spec, MakeHttpProbe(server.port(), "/"), *poller, [&] { return now; },
      [&](HealthState h) { changes.push_back(h); }, nullptr, now);
  auto step_until = [&](size_t n) {
    absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (changes.size() < n && absl::Now() < deadline) {
      now = absl::Now();
      m.OnTimer(now);
      poller->Dispatch(absl::Milliseconds(10));
    }
  };
  step_until(1);
  ASSERT_EQ(changes, (std::vector<HealthState>{HealthState::kHealthy}));
  server.set_status(500);
  step_until(2);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[1], HealthState::kUnhealthy);
  EXPECT_GE(m.checker().consecutive_failures(), 2u);
}

}  // namespace
}  // namespace paceline::agent
