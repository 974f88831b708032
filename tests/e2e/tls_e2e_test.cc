// End to end with TLS: `paceline up` serves TLS by default and the README's tour works from its
// directory unchanged (the CLI finds the CA under ./data); agents speak mutual TLS and the
// master checks each certificate's host; a client without the CA, or with another cluster's,
// fails saying so; the HTTP side is HTTPS; plain text is refused on anything but loopback.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kPool[] = "resources:\n  cpu: {reservation: 1, limit: 2}\n";
constexpr char kJob[] =
    "name: t\ninstances: 3\ntask:\n  command: \"echo hi\"\n"
    "  resources: {cpu: 0.1, memory: 16Mi}\n";

std::string Write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

TEST(TlsE2E, PacelineUpServesTlsAndTheTourWorksFromItsDirectory) {
  const std::string dir = MakeTempDir("pl-tls-up");
  std::filesystem::permissions(dir, std::filesystem::perms::all);  // tasks run as nobody
  // Its own agent name: agents of one name on a host share their cgroups (docs/agent.md).
  const std::string host = absl::StrCat("tls-up-", ::getpid());
  Process up =
      Process::Start({"up", "--data-dir", dir + "/data", "--listen", "127.0.0.1:0", "--http-listen",
                      "127.0.0.1:0", "--cpu", "2", "--memory", "2Gi", "--name", host},
                     {.cwd = dir});
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(dir + "/data/master.json"); },
                      absl::Seconds(60)))
      << up.Output();
  Json endpoints = Json::parse(ReadFile(dir + "/data/master.json"));
  EXPECT_EQ(endpoints["ca_file"], dir + "/data/tls/ca.pem");
  // The tour, with no flags: address, token and CA all come from ./data.
  ASSERT_TRUE(WaitFor(
      [&] {
        RunResult hosts = RunPaceline({"host", "list", "-o", "json"}, dir);
        return hosts.exit_code == 0 && hosts.out.find("\"connected\": true") != std::string::npos;
      },
      absl::Seconds(60)))
      << up.Output();
  RunResult pool =
      RunPaceline({"pool", "create", "/batch", "-f", Write(dir + "/pool.yaml", kPool)}, dir);
  ASSERT_EQ(pool.exit_code, 0) << pool.err;
  RunResult created =
      RunPaceline({"job", "create", "-f", Write(dir + "/job.yaml", kJob), "--pool", "/batch"}, dir);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  RunResult waited = RunPaceline({"job", "wait", "1", "--timeout", "60s"}, dir, absl::Seconds(90));
  EXPECT_EQ(waited.exit_code, 0) << waited.out << waited.err << up.Output();
  RunResult who = RunPaceline({"whoami"}, dir);
  EXPECT_THAT(who.out, HasSubstr("admin: admin")) << who.err;
  // The HTTP side serves HTTPS with the same certificate: /healthz, and /metrics with the
  // token, verified against the cluster's CA; plain HTTP on that port gets no answer.
  const std::string http = endpoints["http"];
  httplib::Client https("https://" + http);
  https.set_ca_cert_path((dir + "/data/tls/ca.pem").c_str());
  auto health = https.Get("/healthz");
  ASSERT_TRUE(health) << httplib::to_string(health.error());
  EXPECT_EQ(health->status, 200);
  std::string token = ReadFile(dir + "/data/token");
  token.erase(token.find_last_not_of("\n") + 1);
  auto metrics = https.Get("/metrics", {{"Authorization", "Bearer " + token}});
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  // What deploy/prometheus/ alerts on: the end of the master's certificate (made for five
  // years) and of the CA's, and the agent of `paceline up` connected.
  const std::string expiry = absl::StrCat(
      "paceline_tls_certificate_not_after_timestamp_seconds{certificate=\"master\",file=\"", dir,
      "/data/tls/master.pem\"} ");
  const size_t at = metrics->body.find(expiry);
  ASSERT_NE(at, std::string::npos) << metrics->body;
  const int64_t not_after = std::stoll(metrics->body.substr(at + expiry.size()));
  EXPECT_NEAR(not_after, absl::ToUnixSeconds(absl::Now() + absl::Hours(24 * 1825)), 86400);
  EXPECT_THAT(metrics->body,
              HasSubstr(absl::StrCat("paceline_tls_certificate_not_after_timestamp_seconds{"
                                     "certificate=\"ca\",file=\"",
                                     dir, "/data/tls/ca.pem\"} ")));
  EXPECT_THAT(metrics->body, HasSubstr(absl::StrCat("paceline_host_connected{host=\"", host,
                                                    "\",maintenance=\"UP\"} 1\n")));
  // Connections that never start their handshake do not stop the others.
  std::vector<int> stalled;
  for (int i = 0; i < 200; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(std::stoi(http.substr(http.rfind(':') + 1))));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) stalled.push_back(fd);
  }
  EXPECT_EQ(stalled.size(), 200u);
  auto during = https.Get("/healthz");
  ASSERT_TRUE(during) << httplib::to_string(during.error());
  EXPECT_EQ(during->status, 200);
  for (int fd : stalled) ::close(fd);
  httplib::Client plain_http("http://" + http);
  plain_http.set_read_timeout(5, 0);
  auto plain_answer = plain_http.Get("/healthz");
  EXPECT_TRUE(!plain_answer || plain_answer->status != 200);
  httplib::Client other_ca("https://" + http);
  other_ca.set_ca_cert_path("/nonexistent.pem");
  EXPECT_FALSE(other_ca.Get("/healthz")) << "a client that does not trust the CA is not served";
  // Plain text to a TLS master fails, and says what to do.
  RunResult plain = RunPaceline(
      {"--addr", endpoints["grpc"], "--token", "x", "--timeout", "3s", "pool", "list"}, "/");
  EXPECT_NE(plain.exit_code, 0);
  EXPECT_THAT(plain.err, HasSubstr("give the cluster's CA"));
  up.Signal(SIGTERM);
  EXPECT_EQ(up.WaitExit(absl::Seconds(60)), 0) << up.Output();
  std::filesystem::remove_all(dir);
}

class TlsClusterE2E : public ::testing::Test {
 protected:
  TestCluster c_{ClusterOptions{.agents = 1, .tls = true}};
};

TEST_F(TlsClusterE2E, AgentsSpeakMutualTlsAndTheMasterChecksTheirHost) {
  ASSERT_TRUE(c_.WaitForHosts(1));
  const std::string tls = c_.dir() + "/master/tls";
  const std::string mine = c_.agent_name(0);
  // An agent presenting agent0's certificate as another host is refused.
  auto agent_as = [&](const std::string& name, const std::string& cert_of) {
    return Process::Start(
        {"agent", "--master", c_.master_address(0), "--token-file",
         c_.dir() + "/master/agent-token", "--name", name, "--work-dir", c_.dir() + "/" + name,
         "--ports", "33500-33599", "--ca", tls + "/ca.pem", "--cert",
         tls + "/agents/" + cert_of + ".pem", "--key", tls + "/agents/" + cert_of + ".key"},
        {.cwd = c_.dir()});
  };
  Process impostor = agent_as("impostor", mine);
  EXPECT_TRUE(WaitFor(
      [&] {
        return impostor.Output().find("the agent's certificate is for host " + mine +
                                      ", and it registers as host impostor") != std::string::npos;
      },
      absl::Seconds(20)))
      << impostor.Output();
  impostor.Signal(SIGKILL);
  Json hosts = c_.CliJson({"host", "list"})["hosts"];
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0]["name"], mine);
  // The refusal is in the audit log.
  Json audit = c_.CliJson({"audit", "list"})["entries"];
  bool seen = false;
  for (const Json& e : audit) {
    seen = seen || (e["action"] == "AgentService.Connect" && e["outcome"] == "PERMISSION_DENIED");
  }
  EXPECT_TRUE(seen) << audit.dump(1);
}

TEST_F(TlsClusterE2E, ClientsWithoutTheCaOrWithAnotherClustersFailSayingSo) {
  const std::string other = MakeTempDir("pl-other-ca");
  // Another cluster's CA: a master started once in another directory makes one.
  RunResult made = RunPaceline({"cert", "agent", "x", "--tls-dir", other + "/tls"});
  EXPECT_NE(made.exit_code, 0);  // no CA there yet: says so
  EXPECT_THAT(made.err, HasSubstr("ca.pem does not exist"));
  {
    TestCluster second({.agents = 0, .tls = true});
    std::filesystem::copy(second.ca_file(), other + "/ca.pem");
  }
  RunResult wrong = RunPaceline({"--addr", c_.master_address(0), "--token", c_.token(), "--ca",
                                 other + "/ca.pem", "--timeout", "3s", "pool", "list"},
                                "/");
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_THAT(wrong.err, HasSubstr("is it this cluster's?"));
  RunResult none = RunPaceline(
      {"--addr", c_.master_address(0), "--token", c_.token(), "--timeout", "3s", "pool", "list"},
      "/");
  EXPECT_NE(none.exit_code, 0);
  EXPECT_THAT(none.err, HasSubstr("give the cluster's CA"));
  RunResult bad_file = RunPaceline({"--addr", c_.master_address(0), "--ca", other, "pool", "list"});
  EXPECT_THAT(bad_file.err, HasSubstr("is not a readable PEM certificate"));
  // With the right CA it works.
  EXPECT_EQ(c_.Cli({"pool", "list"}).exit_code, 0);
  std::filesystem::remove_all(other);
}

TEST(TlsStartE2E, PlainTextOffLoopbackIsRefusedAtStart) {
  const std::string dir = MakeTempDir("pl-tls-start");
  RunResult plain = RunPaceline({"master", "--data-dir", dir + "/a", "--insecure-loopback",
                                 "--listen", "0.0.0.0:0", "--http-listen", "127.0.0.1:0"});
  EXPECT_NE(plain.exit_code, 0);
  EXPECT_THAT(plain.err, HasSubstr("--insecure-loopback: plain text is served on a loopback "
                                   "address only"));
  EXPECT_THAT(plain.err, HasSubstr("drop --insecure-loopback to serve TLS"));
  RunResult http = RunPaceline({"master", "--data-dir", dir + "/b", "--insecure-loopback",
                                "--listen", "127.0.0.1:0", "--http-listen", "0.0.0.0:0"});
  EXPECT_NE(http.exit_code, 0);
  EXPECT_THAT(http.err, HasSubstr("--http-listen 0.0.0.0:0"));
  RunResult metrics =
      RunPaceline({"master", "--data-dir", dir + "/c", "--insecure-loopback", "--listen",
                   "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--metrics-listen", "0.0.0.0:0"});
  EXPECT_NE(metrics.exit_code, 0);
  EXPECT_THAT(metrics.err, HasSubstr("--metrics-listen 0.0.0.0:0"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace paceline::e2e
