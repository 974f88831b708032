// An instance whose check flaps, with the real binaries: its readiness check (and, as a second
// case, its health check: the same probes and the same effect on DNS) is a command on a file the
// test creates and removes every 500 ms, probed every 100 ms, so it passes and fails quickly.
// The master's DNS follows it: every query is answered NOERROR, the instance's SRV record and
// its own name come and go, the zone's SOA serial grows. The other instances are in every
// answer, and no instance is ever restarted (their run numbers stay 1).

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
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

constexpr int kFlips = 20;
constexpr absl::Duration kFlipEvery = absl::Milliseconds(500);

// Three instances of `web`; an instance passes `check` (health or readiness) while FLAGS/down-<i>
// does not exist.
std::string WebSpec(const std::string& check, const std::string& flags) {
  return absl::StrCat(
      R"(name: web
type: service
instances: 3
task:
  command: "exec sleep 3600"
  ports: [http]
  resources: {cpu: 0.1, memory: 32Mi}
  )",
      check, ": {command: \"test ! -e ", flags,
      "/down-$PACELINE_INSTANCE_ID\", interval: 100ms, timeout: 5s, failures: 1}\n");
}

// The serial of the zone's SOA (asked for the domain itself); nullopt when nothing came back.
std::optional<uint32_t> SoaSerial(uint16_t port) {
  const std::vector<uint8_t> wire = dns::testing::QueryWire("paceline.", LDNS_RR_TYPE_SOA, 77);
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sendto(fd, wire.data(), wire.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to));
  std::vector<uint8_t> reply(4096);
  pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
  ssize_t n = poll(&p, 1, 3000) == 1 ? recv(fd, reply.data(), reply.size(), 0) : -1;
  close(fd);
  if (n <= 0) return std::nullopt;
  dns::testing::Pkt parsed = dns::testing::Parse(reply.data(), static_cast<size_t>(n));
  if (parsed == nullptr || ldns_rr_list_rr_count(ldns_pkt_answer(parsed.get())) != 1) {
    return std::nullopt;
  }
  const ldns_rr* soa = ldns_rr_list_rr(ldns_pkt_answer(parsed.get()), 0);
  if (ldns_rr_get_type(soa) != LDNS_RR_TYPE_SOA) return std::nullopt;
  return ldns_rdf2native_int32(ldns_rr_rdf(soa, 2));
}

class DnsFlapE2E : public ::testing::TestWithParam<std::string> {
 protected:
  DnsFlapE2E() : c_({.agents = 1, .master_args = {"--dns-listen", "127.0.0.1:0"}}) {}
  void SetUp() override {
    std::ifstream in(c_.dir() + "/master/master.json");
    Json j = Json::parse(std::string(std::istreambuf_iterator<char>(in), {}));
    std::vector<std::string> parts = absl::StrSplit(j.value("dns", ""), ':');
    ASSERT_EQ(parts.size(), 2u);
    uint32_t port = 0;
    ASSERT_TRUE(absl::SimpleAtoi(parts[1], &port));
    port_ = static_cast<uint16_t>(port);
    ASSERT_EQ(c_.Cli({"pool", "create", "/prod", "-f", c_.WriteFile("pool.yaml", kPool)}).exit_code,
              0);
    ASSERT_TRUE(c_.WaitForHosts(1));
    flags_ = MakeMarkersDir(c_.dir());
  }
  // instance -> run of the job's tasks that are RUNNING.
  std::map<int, int> RunningRuns(uint64_t job) {
    std::map<int, int> runs;
    const Json list = c_.CliJson({"task", "list", std::to_string(job)});
    for (const Json& t : list["tasks"]) {
      if (t["state"] == "RUNNING") runs[t["instance"].get<int>()] = t["run"].get<int>();
    }
    return runs;
  }
  // The SRV answer's targets, once `pred` holds of them (within 30 s); nullopt if it never did.
  std::optional<std::set<std::string>> TargetsUntil(
      const std::function<bool(const std::set<std::string>&)>& pred) {
    std::optional<std::set<std::string>> out;
    WaitFor(
        [&] {
          std::optional<Answer> a = Ask(port_, kSrvName, LDNS_RR_TYPE_SRV, false);
          if (!a.has_value()) return false;
          std::set<std::string> targets = Targets(*a);
          if (!pred(targets)) return false;
          out = targets;
          return true;
        },
        absl::Seconds(30));
    return out;
  }
  static std::set<std::string> Targets(const Answer& a) {
    std::set<std::string> targets;
    for (const std::string& r : a.records) {
      std::vector<std::string> f = absl::StrSplit(r, ' ');
      if (f.size() == 3 && f[0] == "SRV") targets.insert(f[2]);
    }
    return targets;
  }
  void SetDown(bool down) {
    const std::string path = flags_ + "/down-0";
    if (down) {
      std::ofstream(path).put('x');
    } else {
      std::filesystem::remove(path);
    }
  }

  static constexpr char kSrvName[] = "_http._tcp.web.prod.paceline.";
  TestCluster c_;
  uint16_t port_ = 0;
  std::string flags_;
};

TEST_P(DnsFlapE2E, DnsFollowsAFlappingInstanceWithoutRestartsOrHarmToOthers) {
  const std::string zero = "0.web.prod.paceline.", one = "1.web.prod.paceline.",
                    two = "2.web.prod.paceline.";
  const uint64_t job = c_.CreateJob("/prod", WebSpec(GetParam(), flags_));
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(TargetsUntil([&](const std::set<std::string>& t) { return t.size() == 3; }))
      << "the three instances never were all in the SRV answer";
  const std::map<int, int> runs = RunningRuns(job);
  ASSERT_EQ(runs, (std::map<int, int>{{0, 1}, {1, 1}, {2, 1}}));
  const std::optional<uint32_t> serial_before = SoaSerial(port_);
  ASSERT_TRUE(serial_before.has_value());

  // Flap instance 0 while asking, every few milliseconds, for the SRV name and the names of
  // instances 0 and 1.
  int queries = 0, unanswered = 0, errors = 0, others_missing = 0, one_missing = 0;
  int srv_changes = 0, name_changes = 0;
  std::optional<bool> srv_has_zero, name_has_zero;
  for (int flip = 0; flip < kFlips; ++flip) {
    SetDown(flip % 2 == 0);
    const absl::Time until = absl::Now() + kFlipEvery;
    while (absl::Now() < until) {
      std::optional<Answer> srv = Ask(port_, kSrvName, LDNS_RR_TYPE_SRV, false);
      std::optional<Answer> own = Ask(port_, zero, LDNS_RR_TYPE_A, false);
      std::optional<Answer> other = Ask(port_, one, LDNS_RR_TYPE_A, false);
      queries += 3;
      for (const std::optional<Answer>* a : {&srv, &own, &other}) {
        if (!a->has_value()) {
          ++unanswered;
        } else if ((*a)->rcode != LDNS_RCODE_NOERROR) {
          ++errors;
        }
      }
      if (srv.has_value()) {
        const std::set<std::string> targets = Targets(*srv);
        if (!targets.contains(one) || !targets.contains(two)) ++others_missing;
        const bool has = targets.contains(zero);
        if (srv_has_zero.has_value() && *srv_has_zero != has) ++srv_changes;
        srv_has_zero = has;
      }
      if (own.has_value()) {
        const bool has = !own->records.empty();
        if (name_has_zero.has_value() && *name_has_zero != has) ++name_changes;
        name_has_zero = has;
      }
      if (other.has_value() && other->records != std::set<std::string>{"A 127.0.0.1"}) {
        ++one_missing;
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
  }
  SetDown(false);

  std::cout << queries << " queries; instance 0 left and joined the SRV answer " << srv_changes
            << " times and its own name " << name_changes << " times, over " << kFlips << " flips"
            << std::endl;
  EXPECT_EQ(unanswered, 0) << "of " << queries << " queries";
  EXPECT_EQ(errors, 0) << "of " << queries << " queries (an rcode other than NOERROR)";
  EXPECT_EQ(others_missing, 0) << "SRV answers without instance 1 or 2";
  EXPECT_EQ(one_missing, 0) << "answers for instance 1's name without its address";
  // DNS followed the flapping (it may miss a short pass or failure on a loaded machine, not
  // most of them), and ends with the instance back once its check passes again.
  EXPECT_GE(srv_changes, kFlips / 4) << "the SRV answer changed " << srv_changes << " times";
  EXPECT_GE(name_changes, kFlips / 4) << "instance 0's name changed " << name_changes << " times";
  EXPECT_TRUE(TargetsUntil([&](const std::set<std::string>& t) { return t.size() == 3; }))
      << "instance 0 did not come back once its check passed";
  const std::optional<uint32_t> serial_after = SoaSerial(port_);
  ASSERT_TRUE(serial_after.has_value());
  EXPECT_GE(*serial_after - *serial_before, static_cast<uint32_t>(srv_changes))
      << "the zone's serial went from " << *serial_before << " to " << *serial_after;
  // No instance was restarted: still RUNNING, still their first run.
  EXPECT_EQ(RunningRuns(job), runs);
}

INSTANTIATE_TEST_SUITE_P(Checks, DnsFlapE2E, ::testing::Values("readiness", "health"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace paceline::e2e
