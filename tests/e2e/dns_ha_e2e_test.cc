// Every master of an HA set answers DNS (docs/services.md, "Several masters"): two masters on one
// PostgreSQL, both with --dns-listen, and one agent running a 2-instance service. The standby
// answers the same A and SRV records as the leader, from the state it follows, and follows a
// change within its lag; when the leader is killed (SIGKILL) the standby takes over and its
// answers never stop for longer than the failover; a scale-down made on the new leader shows in
// its answers and in those of the old master, started again as a standby.

#include <signal.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/cluster_fixture.h"
#include "tests/e2e/dns_ask.h"
#include "tests/e2e/postgres_util.h"

namespace paceline::e2e {
namespace {

using Json = nlohmann::json;

constexpr char kSrv[] = "_http._tcp.web.e2e.paceline.";
constexpr char kName[] = "web.e2e.paceline.";

std::string Web(int instances) {
  return absl::StrCat(R"(name: web
type: service
instances: )",
                      instances, R"(
task:
  command: "exec sleep 3600"
  ports: [http]
  resources: {cpu: 0.05, memory: 16Mi}
)");
}

// Master i's DNS port, from the endpoints it wrote (0 when it wrote none).
uint16_t DnsPort(TestCluster& c, int i) {
  const std::string path =
      c.dir() + (i == 0 ? "/master" : absl::StrCat("/master", i)) + "/master.json";
  std::ifstream in(path);
  Json j = Json::parse(std::string(std::istreambuf_iterator<char>(in), {}), nullptr, false);
  if (j.is_discarded()) return 0;
  std::vector<std::string> parts = absl::StrSplit(j.value("dns", ""), ':');
  uint32_t port = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[1], &port)) return 0;
  return static_cast<uint16_t>(port);
}

// The SRV records a resolver should get for `job`: one per RUNNING instance, at its http port
// (empty while one is not RUNNING yet).
std::set<std::string> ExpectedSrv(TestCluster& c, uint64_t job) {
  std::set<std::string> srv;
  Json tasks = c.CliJson({"task", "list", std::to_string(job)})["tasks"];
  for (const Json& t : tasks) {
    if (t["state"] != "RUNNING" || !t.contains("ports")) return {};
    srv.insert(absl::StrCat("SRV ", t["ports"]["http"].get<int>(), " ", t["instance"].get<int>(),
                            ".web.e2e.paceline."));
  }
  return srv;
}

std::set<std::string> Records(uint16_t port, const std::string& name, ldns_rr_type type) {
  std::optional<Answer> a = Ask(port, name, type, false);
  return a.has_value() ? a->records : std::set<std::string>{};
}

bool AnswersWithin(uint16_t port, const std::set<std::string>& want, absl::Duration timeout) {
  return WaitFor([&] { return Records(port, kSrv, LDNS_RR_TYPE_SRV) == want; }, timeout);
}

TEST(DnsHaE2E, TheStandbyAnswersLikeTheLeaderAndKeepsAnsweringThroughAFailover) {
  auto pg = StartPostgres();
  ASSERT_NE(pg, nullptr);
  TestCluster c({.agents = 1,
                 .store = pg->url(),
                 .master_args = {"--dns-listen", "127.0.0.1:0"},
                 .masters = 2,
                 .lease = "3s"});
  const int leader = c.FindLeader(absl::Seconds(30));
  ASSERT_GE(leader, 0);
  const int standby = 1 - leader;
  const uint16_t leader_port = DnsPort(c, leader), standby_port = DnsPort(c, standby);
  ASSERT_NE(leader_port, 0);
  ASSERT_NE(standby_port, 0);
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPgPool)}).exit_code,
            0);
  ASSERT_TRUE(c.WaitForHosts(1));
  const uint64_t job = c.CreateJob("/e2e", Web(2));
  ASSERT_GT(job, 0u);
  std::set<std::string> srv;
  ASSERT_TRUE(WaitFor(
      [&] {
        srv = ExpectedSrv(c, job);
        return srv.size() == 2;
      },
      absl::Seconds(60)));

  // Both masters answer the same: the agent's address once, every instance at its port.
  ASSERT_TRUE(AnswersWithin(leader_port, srv, absl::Seconds(10)));
  ASSERT_TRUE(AnswersWithin(standby_port, srv, absl::Seconds(10)))
      << Records(standby_port, kSrv, LDNS_RR_TYPE_SRV).size();
  const std::set<std::string> a = {"A " + c.host_address(0)};
  EXPECT_EQ(Records(leader_port, kName, LDNS_RR_TYPE_A), a);
  EXPECT_EQ(Records(standby_port, kName, LDNS_RR_TYPE_A), a);
  EXPECT_EQ(Records(standby_port, "1.web.e2e.paceline.", LDNS_RR_TYPE_A), a);

  // A change: instance 1 restarts. It leaves the leader's answer at once, and the standby's
  // within its lag (the follow interval, 500 ms, plus the read and a DNS pass of 250 ms).
  ASSERT_EQ(c.Cli({"task", "restart", absl::StrCat(job, "/1")}).exit_code, 0);
  absl::Time left_leader = absl::InfiniteFuture(), left_standby = absl::InfiniteFuture();
  ASSERT_TRUE(WaitFor(
      [&] {
        const absl::Time now = absl::Now();
        if (left_leader == absl::InfiniteFuture() &&
            Records(leader_port, kSrv, LDNS_RR_TYPE_SRV).size() < 2) {
          left_leader = now;
        }
        if (left_standby == absl::InfiniteFuture() &&
            Records(standby_port, kSrv, LDNS_RR_TYPE_SRV).size() < 2) {
          left_standby = now;
        }
        return left_leader != absl::InfiniteFuture() && left_standby != absl::InfiniteFuture();
      },
      absl::Seconds(30)));
  const absl::Duration lag = left_standby - left_leader;
  std::cout << "standby lag: the restarted instance left the standby's answer "
            << absl::FormatDuration(lag) << " after the leader's" << std::endl;
  EXPECT_LT(lag, absl::Seconds(2));
  ASSERT_TRUE(WaitFor(
      [&] {
        srv = ExpectedSrv(c, job);
        return srv.size() == 2;
      },
      absl::Seconds(60)));
  ASSERT_TRUE(AnswersWithin(leader_port, srv, absl::Seconds(10)));
  ASSERT_TRUE(AnswersWithin(standby_port, srv, absl::Seconds(10)));

  // The leader is killed while a client resolves at the standby every 20 ms: the longest time
  // without the full answer, through the take-over and the agent's return, stays under the
  // failover bound of the HA tests.
  std::atomic<bool> stop{false};
  absl::Duration longest_gap;
  int asked = 0, answered = 0;
  std::thread resolver([&] {
    absl::Time last_good = absl::Now();
    while (!stop.load()) {
      ++asked;
      const absl::Time now = absl::Now();
      if (Records(standby_port, kSrv, LDNS_RR_TYPE_SRV) == srv) {
        ++answered;
        longest_gap = std::max(longest_gap, now - last_good);
        last_good = now;
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
    longest_gap = std::max(longest_gap, absl::Now() - last_good);
  });
  c.master(leader).Signal(SIGKILL);
  const absl::Time killed = absl::Now();
  ASSERT_TRUE(c.master(leader).WaitExit(absl::Seconds(10)).has_value());
  const int now_leads = c.FindLeader(absl::Seconds(30));
  const absl::Duration failover = absl::Now() - killed;
  EXPECT_EQ(now_leads, standby);
  // Its agent is back (its runs adopted, their ports known again).
  EXPECT_TRUE(WaitFor(
      [&] {
        Json hosts = c.CliJson({"host", "list"});
        return hosts["hosts"].size() == 1u && hosts["hosts"][0]["state"] == "UP";
      },
      absl::Seconds(30)));
  absl::SleepFor(absl::Seconds(2));  // answers from the new leader's own state
  stop = true;
  resolver.join();
  std::cout << "failover: master " << now_leads << " leads " << absl::FormatDuration(failover)
            << " after the leader was killed; its DNS answered " << answered << " of " << asked
            << " queries in full, the longest time without: " << absl::FormatDuration(longest_gap)
            << std::endl;
  EXPECT_LT(failover, absl::Seconds(10));
  EXPECT_LT(longest_gap, absl::Seconds(10));
  EXPECT_LE(longest_gap, failover);
  EXPECT_EQ(Records(standby_port, kName, LDNS_RR_TYPE_A), a);

  // A scale-down on the new leader shows in its answers, and in those of the old master started
  // again as a standby.
  c.StartMaster(leader);
  const uint16_t again_port = DnsPort(c, leader);
  ASSERT_NE(again_port, 0);
  RunResult scale =
      c.Cli({"job", "update", std::to_string(job), "-f", c.WriteFile("one.yaml", Web(1))});
  ASSERT_EQ(scale.exit_code, 0) << scale.err;
  std::set<std::string> one;
  for (const std::string& r : srv) {
    if (r.ends_with(" 0.web.e2e.paceline.")) one.insert(r);
  }
  ASSERT_EQ(one.size(), 1u);
  EXPECT_TRUE(AnswersWithin(standby_port, one, absl::Seconds(30)))
      << Records(standby_port, kSrv, LDNS_RR_TYPE_SRV).size();
  EXPECT_TRUE(AnswersWithin(again_port, one, absl::Seconds(30)))
      << Records(again_port, kSrv, LDNS_RR_TYPE_SRV).size();
  EXPECT_TRUE(Records(again_port, "1.web.e2e.paceline.", LDNS_RR_TYPE_A).empty());
}

}  // namespace
}  // namespace paceline::e2e
