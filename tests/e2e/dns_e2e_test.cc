// The master's DNS for services with the real binary: a service job's ready instances answer
// its name (A) and its named port (SRV) at the ports the tasks hold, an instance stops being
// answered once it is not running, a job without a DNS name is kept out, and names outside the
// domain are refused. Queries are sent over UDP and TCP from the test with ldns.

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/cluster_fixture.h"
#include "tests/e2e/dns_ask.h"

namespace paceline::e2e {
namespace {

using Json = nlohmann::json;

constexpr char kPool[] = R"(description: prod
resources:
  cpu: {reservation: 1, limit: 2}
  memory: {reservation: 1Gi}
)";

constexpr char kWeb[] = R"(name: web
type: service
instances: 2
task:
  command: "exec sleep 3600"
  ports: [http]
  resources: {cpu: 0.1, memory: 32Mi}
)";

class DnsE2E : public ::testing::Test {
 protected:
  DnsE2E() : c_({.agents = 1, .master_args = {"--dns-listen", "127.0.0.1:0"}}) {}
  void SetUp() override {
    auto j = Json::parse(ReadFileOrEmpty(c_.dir() + "/master/master.json"));
    const std::string dns = j.value("dns", "");
    std::vector<std::string> parts = absl::StrSplit(dns, ':');
    ASSERT_EQ(parts.size(), 2u) << dns;
    uint32_t port = 0;
    ASSERT_TRUE(absl::SimpleAtoi(parts[1], &port)) << dns;
    port_ = static_cast<uint16_t>(port);
    ASSERT_EQ(c_.Cli({"pool", "create", "/prod", "-f", c_.WriteFile("pool.yaml", kPool)}).exit_code,
              0);
    ASSERT_TRUE(c_.WaitForHosts(1));
  }
  static std::string ReadFileOrEmpty(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // The answer once `pred` holds of it (the master publishes its zone a few times a second).
  Answer AskUntil(const std::string& name, ldns_rr_type type,
                  const std::function<bool(const Answer&)>& pred, bool tcp = false) {
    Answer last;
    WaitFor(
        [&] {
          std::optional<Answer> a = Ask(port_, name, type, tcp);
          if (a.has_value()) last = *a;
          return a.has_value() && pred(*a);
        },
        absl::Seconds(30));
    return last;
  }

  TestCluster c_;
  uint16_t port_ = 0;
};

TEST_F(DnsE2E, AServiceIsFoundByNameAndPortAndLeavesWhenItStops) {
  const uint64_t job = c_.CreateJob("/prod", kWeb);
  ASSERT_GT(job, 0u);
  std::set<std::string> srv;
  ASSERT_TRUE(WaitFor(
      [&] {
        Json tasks = c_.CliJson({"task", "list", std::to_string(job)})["tasks"];
        srv.clear();
        for (const Json& t : tasks) {
          if (t["state"] != "RUNNING" || !t.contains("ports")) return false;
          srv.insert(absl::StrCat("SRV ", t["ports"]["http"].get<int>(), " ",
                                  t["instance"].get<int>(), ".web.prod.paceline."));
        }
        return srv.size() == 2;
      },
      absl::Seconds(60)));

  // The name answers the host's address once; SRV names every instance's port, over UDP and TCP.
  Answer a = AskUntil("web.prod.paceline.", LDNS_RR_TYPE_A,
                      [](const Answer& x) { return !x.records.empty(); });
  EXPECT_EQ(a.rcode, LDNS_RCODE_NOERROR);
  EXPECT_EQ(a.records, std::set<std::string>{"A 127.0.0.1"});
  for (bool tcp : {false, true}) {
    Answer s = AskUntil(
        "_http._tcp.web.prod.paceline.", LDNS_RR_TYPE_SRV,
        [&](const Answer& x) { return x.records == srv; }, tcp);
    EXPECT_EQ(s.records, srv) << (tcp ? "tcp" : "udp");
  }
  EXPECT_EQ(AskUntil("1.web.prod.paceline.", LDNS_RR_TYPE_A,
                     [](const Answer& x) { return !x.records.empty(); })
                .records,
            std::set<std::string>{"A 127.0.0.1"});

  // Other names: unknown in the domain, and outside it.
  EXPECT_EQ(Ask(port_, "nope.prod.paceline.", LDNS_RR_TYPE_A, false)->rcode, LDNS_RCODE_NXDOMAIN);
  EXPECT_EQ(Ask(port_, "example.com.", LDNS_RR_TYPE_A, false)->rcode, LDNS_RCODE_REFUSED);

  // Instance 1 killed: it leaves the SRV answer; the job killed: the name has nothing left.
  ASSERT_EQ(c_.Cli({"task", "kill", absl::StrCat(job, "/1")}).exit_code, 0);
  Answer one = AskUntil("_http._tcp.web.prod.paceline.", LDNS_RR_TYPE_SRV,
                        [](const Answer& x) { return x.records.size() == 1; });
  EXPECT_EQ(one.records.size(), 1u);
  ASSERT_EQ(c_.Cli({"job", "kill", std::to_string(job)}).exit_code, 0);
  Answer none = AskUntil("web.prod.paceline.", LDNS_RR_TYPE_A,
                         [](const Answer& x) { return x.records.empty(); });
  EXPECT_TRUE(none.records.empty());
  // A service with no ready instance: the name exists, with nothing in it (NODATA, not NXDOMAIN).
  EXPECT_EQ(none.rcode, LDNS_RCODE_NOERROR);
  EXPECT_EQ(Ask(port_, "_http._tcp.web.prod.paceline.", LDNS_RR_TYPE_SRV, false)->rcode,
            LDNS_RCODE_NOERROR);
}

TEST_F(DnsE2E, AJobWhoseNameIsNotALabelHasNoName) {
  std::string spec = kWeb;
  spec.replace(spec.find("name: web"), 9, "name: my_web");
  const uint64_t job = c_.CreateJob("/prod", spec);
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(c_.WaitForJob(
      job, [](const Json& j) { return j["state"] == "RUNNING"; }, absl::Seconds(60)));
  absl::SleepFor(absl::Seconds(1));  // several passes of the master's zone
  std::optional<Answer> a = Ask(port_, "my_web.prod.paceline.", LDNS_RR_TYPE_A, false);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->rcode, LDNS_RCODE_NXDOMAIN);
}

TEST(DnsFlagsE2E, ABadDomainIsRefusedNamingTheFlag) {
  const std::string dir = ::testing::TempDir() + "/dns-flags";
  std::filesystem::create_directories(dir);
  RunResult r = RunPaceline({"master", "--data-dir", dir, "--listen", "127.0.0.1:0",
                             "--http-listen", "127.0.0.1:0", "--insecure-loopback", "--dns-listen",
                             "127.0.0.1:0", "--dns-domain", "a_b.example"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--dns-domain"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'a_b' is not a DNS label"), std::string::npos) << r.err;
  r = RunPaceline({"master", "--data-dir", dir, "--listen", "127.0.0.1:0", "--http-listen",
                   "127.0.0.1:0", "--insecure-loopback", "--dns-listen", "127.0.0.1:0",
                   "--dns-rate-limit", "-5"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--dns-rate-limit: Value -5 not in range"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/master.json"));
}

}  // namespace
}  // namespace paceline::e2e
