// RegistryClient against a scripted plain-HTTP server on 127.0.0.1 (in this process): what
// docker-registry cannot be made to do — the bearer-token flow, a blob redirected to another
// host (which must not receive the Authorization header), a 503.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "image/digest.h"
#include "image/registry_client.h"

namespace paceline::image {
namespace {

using ::testing::HasSubstr;

struct Request {
  std::string target;  // "/v2/r/manifests/v1"
  std::string host;
  std::string authorization;
};

// Answers each request with handler(request) (a whole HTTP response) and closes the connection.
class ScriptedServer {
 public:
  using Handler = std::function<std::string(const Request&)>;
  explicit ScriptedServer(Handler handler) : handler_(std::move(handler)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
        ::listen(fd_, 16) != 0) {
      std::abort();
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedServer() {
    ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  std::vector<Request> requests() {
    std::lock_guard<std::mutex> l(mu_);
    return requests_;
  }

 private:
  void Serve() {
    while (true) {
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) return;
      std::string in;
      char buf[4096];
      while (!absl::StrContains(in, "\r\n\r\n")) {
        ssize_t n = ::read(c, buf, sizeof(buf));
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
      }
      Request r;
      std::vector<std::string> lines = absl::StrSplit(in.substr(0, in.find("\r\n\r\n")), "\r\n");
      if (!lines.empty()) {
        std::vector<std::string> first = absl::StrSplit(lines[0], ' ');
        if (first.size() > 1) r.target = first[1];
      }
      for (const std::string& line : lines) {
        size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string name = absl::AsciiStrToLower(line.substr(0, colon));
        std::string value(absl::StripAsciiWhitespace(line.substr(colon + 1)));
        if (name == "host") r.host = value;
        if (name == "authorization") r.authorization = value;
      }
      {
        std::lock_guard<std::mutex> l(mu_);
        requests_.push_back(r);
      }
      std::string out = handler_(r);
      for (size_t off = 0; off < out.size();) {
        ssize_t n = ::write(c, out.data() + off, out.size() - off);
        if (n <= 0) break;
        off += static_cast<size_t>(n);
      }
      ::close(c);
    }
  }

  Handler handler_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<Request> requests_;
};

std::string Http(int status, const std::vector<std::string>& headers, const std::string& body) {
  std::string out = absl::StrCat("HTTP/1.1 ", status, " X\r\nConnection: close\r\n",
                                 "Content-Length: ", body.size(), "\r\n");
  for (const std::string& h : headers) absl::StrAppend(&out, h, "\r\n");
  return absl::StrCat(out, "\r\n", body);
}

spec::ImageRef Ref(int port, const std::string& rest) {
  auto ref = spec::ParseImageRef(absl::StrCat("127.0.0.1:", port, "/", rest));
  EXPECT_TRUE(ref.ok()) << ref.status();
  return *ref;
}

RegistryOptions HttpOptions(const std::string& user = "", const std::string& password = "") {
  return RegistryOptions{.username = user,
                         .password = password,
                         .connect_timeout = absl::Seconds(5),
                         .stall_timeout = absl::Seconds(5),
                         .scheme = "http"};
}

// A new directory of this test's own (others may run these tests at the same time).
std::string MakeTempDir() {
  std::string tmpl = ::testing::TempDir() + "registry-http-test-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
  return tmpl;
}

const std::string kManifest = R"({"schemaVersion":2})";

TEST(RegistryClientHttpTest, BearerTokenFlow) {
  const std::string basic = "Basic " + absl::Base64Escape("u:p w");
  int port = 0;
  ScriptedServer server([&](const Request& r) {
    if (absl::StartsWith(r.target, "/token?")) {
      if (r.authorization != basic) return Http(401, {}, R"({"errors":[{"code":"DENIED"}]})");
      return Http(200, {"Content-Type: application/json"}, R"({"token":"tok","expires_in":60})");
    }
    if (r.authorization == "Bearer tok") {
      return Http(200, {absl::StrCat("Content-Type: ", kOciManifest)}, kManifest);
    }
    return Http(401,
                {absl::StrCat(R"(WWW-Authenticate: Bearer realm="http://127.0.0.1:)", port,
                              R"(/token",service="fake registry",scope="repository:r:pull")")},
                R"({"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]})");
  });
  port = server.port();

  RegistryClient client(HttpOptions("u", "p w"));
  auto m = client.FetchManifest(Ref(port, "r:v1"));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->body, kManifest);
  EXPECT_EQ(m->media_type, kOciManifest);
  std::vector<Request> requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].authorization, "");
  EXPECT_EQ(requests[1].target, "/token?service=fake%20registry&scope=repository%3Ar%3Apull");
  EXPECT_EQ(requests[1].authorization, basic);
  EXPECT_EQ(requests[2].authorization, "Bearer tok");

  // The token is reused: one request more.
  ASSERT_TRUE(client.FetchManifest(Ref(port, "r:v1")).ok());
  EXPECT_EQ(server.requests().size(), 4u);

  // Without credentials the token endpoint refuses: PERMISSION_DENIED with its answer.
  RegistryClient anonymous(HttpOptions());
  auto denied = anonymous.FetchManifest(Ref(port, "r:v1"));
  EXPECT_EQ(denied.status().code(), absl::StatusCode::kPermissionDenied) << denied.status();
  EXPECT_THAT(denied.status().message(), HasSubstr("DENIED"));
}

TEST(RegistryClientHttpTest, RedirectedBlobGetsNoAuthorization) {
  const std::string blob = "the bytes of a blob in another store";
  const std::string digest = Sha256Digest(blob);
  int port = 0;
  ScriptedServer server([&](const Request& r) {
    if (r.target == "/store/blob") return Http(200, {}, blob);
    if (r.authorization.empty()) return Http(401, {R"(WWW-Authenticate: Basic realm="x")"}, "");
    return Http(307, {absl::StrCat("Location: http://localhost:", port, "/store/blob")}, "");
  });
  port = server.port();

  RegistryClient client(HttpOptions("u", "p"));
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/redirected";
  Descriptor d{"application/octet-stream", digest, static_cast<int64_t>(blob.size()), {}};
  absl::Status s = client.FetchBlob(Ref(port, "r:v1"), d, path);
  ASSERT_TRUE(s.ok()) << s;
  std::vector<Request> requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[1].target, "/v2/r/blobs/" + digest);
  EXPECT_THAT(requests[1].authorization, HasSubstr("Basic "));
  EXPECT_EQ(requests[2].host, absl::StrCat("localhost:", port));
  EXPECT_EQ(requests[2].authorization, "");
  std::filesystem::remove_all(dir);
}

TEST(RegistryClientHttpTest, ServerErrorsAreUnavailableAndNameTheStatus) {
  ScriptedServer server(
      [](const Request&) { return Http(503, {}, "<html>upstream overloaded</html>"); });
  RegistryClient client(HttpOptions());
  auto m = client.FetchManifest(Ref(server.port(), "r:v1"));
  EXPECT_EQ(m.status().code(), absl::StatusCode::kUnavailable) << m.status();
  EXPECT_THAT(m.status().message(), HasSubstr("HTTP 503: <html>upstream overloaded</html>"));

  const std::string dir = MakeTempDir();
  const std::string path = dir + "/unavailable";
  Descriptor d{"application/octet-stream", Sha256Digest("x"), 1, {}};
  absl::Status s = client.FetchBlob(Ref(server.port(), "r:v1"), d, path);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
  std::filesystem::remove_all(dir);
}

TEST(RegistryClientHttpTest, ContentTypeFallsBackToTheDocumentsMediaType) {
  const std::string index =
      absl::StrCat(R"({"schemaVersion":2,"mediaType":")", kOciIndex, R"(","manifests":[]})");
  ScriptedServer server(
      [&](const Request&) { return Http(200, {"Content-Type: application/json"}, index); });
  RegistryClient client(HttpOptions());
  auto m = client.FetchManifest(Ref(server.port(), "r:v1"));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->media_type, kOciIndex);
  EXPECT_EQ(m->digest, Sha256Digest(index));
  // An index with nothing for this machine.
  auto resolved = client.ResolveManifest(Ref(server.port(), "r:v1"));
  EXPECT_EQ(resolved.status().code(), absl::StatusCode::kNotFound) << resolved.status();
}

}  // namespace
}  // namespace paceline::image
