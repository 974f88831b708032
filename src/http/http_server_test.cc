#include "http/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"

namespace paceline::http {
namespace {

using ::testing::HasSubstr;

// A connected TCP socket to 127.0.0.1:port; -1 when it cannot connect.
int Connect(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Everything the server sends until it closes (or 5 s pass).
std::string ReadAll(int fd) {
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

void SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

class HttpServerTest : public ::testing::Test {
 protected:
  void Start(HttpLimits limits = {}) {
    server_ = std::make_unique<HttpServer>(limits);
    HttpRouter& r = server_->Routes();
    r.Get("/hello", [](const HttpRequest& req, HttpResponse& res) {
      std::string text = "hello";
      for (const auto& [k, v] : req.params) absl::StrAppend(&text, " ", k, "=", v);
      res.set_content(text, "text/plain");
    });
    r.Get("/items/:kind/:n", [](const HttpRequest& req, HttpResponse& res) {
      res.set_content(absl::StrCat(req.matches[1], "#", req.matches[2]), "text/plain");
    });
    r.Post("/echo", [](const HttpRequest& req, HttpResponse& res) {
      res.set_header("X-Seen", req.header("x-custom"));
      res.set_content(req.body, "application/octet-stream");
    });
    r.Get("/stream", [this](const HttpRequest&, HttpResponse& res) {
      res.content_type = "application/x-ndjson";
      res.stream = [this](HttpStreamSink& sink) {
        auto closed = std::make_shared<absl::Notification>();
        sink.OnClose([this, closed] {
          closed->Notify();
          ++streams_closed_;
        });
        for (int i = 0; i < 3; ++i) {
          if (!sink.Write(absl::StrCat("{\"n\":", i, "}\n"))) return;
        }
        if (hold_stream_) closed->WaitForNotificationWithTimeout(absl::Seconds(10));
      };
    });
    absl::StatusOr<HostPort> bound = server_->Start(HostPort{"127.0.0.1", 0});
    ASSERT_TRUE(bound.ok()) << bound.status();
    port_ = bound->port;
  }

  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
  std::atomic<bool> hold_stream_{false};
  std::atomic<int> streams_closed_{0};

  bool WaitStreamsClosed(int n) {
    for (int i = 0; i < 250 && streams_closed_ < n; ++i) ::usleep(20000);
    return streams_closed_ >= n;
  }
};

TEST_F(HttpServerTest, RoutesCapturesQueriesBodiesAndKeepAlive) {
  Start();
  httplib::Client c("127.0.0.1", port_);
  c.set_keep_alive(true);
  auto r = c.Get("/hello?name=a%20b&x=1");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello name=a b x=1");
  r = c.Get("/items/book/42");  // the same connection
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "book#42");
  r = c.Post("/echo", httplib::Headers{{"X-Custom", "yes"}}, "payload", "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->body, "payload");
  EXPECT_EQ(r->get_header_value("X-Seen"), "yes");
  r = c.Get("/nowhere");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  r = c.Post("/hello", "", "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
}

TEST_F(HttpServerTest, OneConnectionServesRequestsInTurnAndHeadHasNoBody) {
  Start();
  int fd = Connect(port_);
  ASSERT_GE(fd, 0);
  SendAll(fd,
          "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"
          "HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\n"
          "GET /items/pen/7 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  std::string all = ReadAll(fd);
  ::close(fd);
  // Three answers on the one connection, in order; HEAD's says the length and sends nothing.
  size_t first = all.find("HTTP/1.1 200");
  size_t second = all.find("HTTP/1.1 200", first + 1);
  size_t third = all.find("HTTP/1.1 200", second + 1);
  ASSERT_NE(third, std::string::npos) << all;
  EXPECT_THAT(all.substr(0, second), HasSubstr("\r\n\r\nhello"));
  std::string head = all.substr(second, third - second);
  EXPECT_THAT(head, HasSubstr("Content-Length: 5\r\n"));
  EXPECT_EQ(head.substr(head.find("\r\n\r\n") + 4), "") << "HEAD sent a body";
  EXPECT_THAT(all.substr(third), HasSubstr("pen#7"));
}

TEST_F(HttpServerTest, OversizedHeadersAre431AndOversizedBodies413) {
  HttpLimits limits;
  limits.max_header_bytes = 4096;
  limits.max_body_bytes = 1000;
  Start(limits);
  int fd = Connect(port_);
  ASSERT_GE(fd, 0);
  SendAll(fd, "GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(8000, 'a') + "\r\n\r\n");
  EXPECT_THAT(ReadAll(fd), HasSubstr("HTTP/1.1 431"));
  ::close(fd);

  fd = Connect(port_);
  ASSERT_GE(fd, 0);
  SendAll(fd, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n");
  EXPECT_THAT(ReadAll(fd), HasSubstr("HTTP/1.1 413"));
  ::close(fd);

  httplib::Client c("127.0.0.1", port_);
  auto r = c.Post("/echo", std::string(900, 'b'), "text/plain");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << "within the limit";
}

TEST_F(HttpServerTest, AStreamIsChunkedAndSeesItsClientLeave) {
  Start();
  httplib::Client c("127.0.0.1", port_);
  std::string body;
  auto r = c.Get("/stream", [&](const char* data, size_t n) {
    body.append(data, n);
    return true;
  });
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/x-ndjson");
  EXPECT_EQ(body, "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n");
  EXPECT_TRUE(WaitStreamsClosed(1)) << "a stream that ended closes its connection";

  // A client that leaves while the stream waits: the stream learns it at once.
  hold_stream_ = true;
  int fd = Connect(port_);
  ASSERT_GE(fd, 0);
  SendAll(fd, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  char buf[256];
  ASSERT_GT(::read(fd, buf, sizeof(buf)), 0);
  ::close(fd);
  EXPECT_TRUE(WaitStreamsClosed(2)) << "the stream did not see its client leave";
}

TEST_F(HttpServerTest, ConnectionsBeyondTheCapPerAddressGet503) {
  HttpLimits limits;
  limits.max_connections_per_address = 3;
  Start(limits);
  std::vector<int> held;
  for (int i = 0; i < 3; ++i) held.push_back(Connect(port_));  // idle, within the cap
  int extra = Connect(port_);
  ASSERT_GE(extra, 0);
  EXPECT_THAT(ReadAll(extra), HasSubstr("HTTP/1.1 503"));
  ::close(extra);
  for (int fd : held) ::close(fd);
  // Once they are gone, new connections are served again.
  bool served = false;
  for (int i = 0; i < 50 && !served; ++i) {
    httplib::Client c("127.0.0.1", port_);
    auto r = c.Get("/hello");
    served = r && r->status == 200;
    if (!served) ::usleep(20000);
  }
  EXPECT_TRUE(served);
}

TEST_F(HttpServerTest, ASilentClientIsDisconnectedAfterTheReadTimeout) {
  HttpLimits limits;
  limits.read_timeout = absl::Milliseconds(300);
  Start(limits);
  int fd = Connect(port_);
  ASSERT_GE(fd, 0);
  SendAll(fd, "GET /hello HTTP/1.1\r\nHost: x\r\n");  // never finished
  absl::Time start = absl::Now();
  EXPECT_EQ(ReadAll(fd), "") << "closed without an answer";
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  ::close(fd);
}

TEST_F(HttpServerTest, StopEndsStreamsAndReturns) {
  hold_stream_ = true;
  Start();
  int fd = Connect(port_);
  ASSERT_GE(fd, 0);
  SendAll(fd, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  char buf[256];
  ASSERT_GT(::read(fd, buf, sizeof(buf)), 0);
  absl::Time t0 = absl::Now();
  server_->Stop();
  EXPECT_LT(absl::Now() - t0, absl::Seconds(2)) << "Stop waited for the stream to end by itself";
  EXPECT_EQ(streams_closed_, 1);
  ::close(fd);
}

TEST(HttpMessageTest, RoutesMatchLiteralSegmentsNamedSegmentsAndTheRest) {
  HttpRouter r;
  std::string seen;
  auto record = [&seen](const HttpRequest& req, HttpResponse&) {
    seen.clear();
    for (const std::string& m : req.matches) absl::StrAppend(&seen, "[", m, "]");
  };
  r.Get("/api/v1/:service/:method", record);
  r.Get("/ui/*", record);
  auto dispatch = [&](const std::string& path) {
    HttpRequest req;
    req.method = "GET";
    req.path = path;
    HttpResponse res;
    seen = "-";
    r.Dispatch(req, res);
    return res.status == 200 ? seen : std::to_string(res.status);
  };
  EXPECT_EQ(dispatch("/api/v1/JobService/GetJob"),
            "[/api/v1/JobService/GetJob][JobService][GetJob]");
  EXPECT_EQ(dispatch("/api/v1/JobService/"), "404") << "a named segment is not empty";
  EXPECT_EQ(dispatch("/api/v1/JobService/GetJob/x"), "404");
  EXPECT_EQ(dispatch("/api/v1/JobService"), "404");
  EXPECT_EQ(dispatch("/ui/"), "[/ui/][]");
  EXPECT_EQ(dispatch("/ui/jobs/12/tasks/0"), "[/ui/jobs/12/tasks/0][jobs/12/tasks/0]");
  EXPECT_EQ(dispatch("/ui"), "404");
  EXPECT_EQ(dispatch("/uix/a"), "404");
  EXPECT_EQ(dispatch(std::string(100000, '/')), "404") << "long paths cost linear time";
}

TEST(HttpMessageTest, QueriesAndPathsAreDecoded) {
  auto q = ParseQuery("a=1&b=x%20y&a=2&flag&c=%zz&d=1+1");
  EXPECT_EQ(q.count("a"), 2u);
  EXPECT_EQ(q.find("b")->second, "x y");
  EXPECT_EQ(q.find("flag")->second, "");
  EXPECT_EQ(q.find("c")->second, "%zz") << "a malformed escape is kept";
  EXPECT_EQ(q.find("d")->second, "1 1");
  EXPECT_EQ(PercentDecode("/pools/a%2Fb+c", false), "/pools/a/b+c");
  EXPECT_EQ(PercentDecode("%", false), "%");
  EXPECT_EQ(PercentDecode("%4", false), "%4");
}

}  // namespace
}  // namespace paceline::http
