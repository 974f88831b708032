// A real load balancer in front of a Paceline service while Paceline moves its instances: no
// request fails. On the multi-host bed (3 hosts, each in its network namespace), Debian's HAProxy
// runs examples/haproxy/haproxy.cfg as it ships (only its addresses and ports changed, and its
// retries turned off so that it forgives nothing) in front of the six instances of
// examples/service/web.yaml (web.py, on a dynamic port, in DNS only once its readiness check
// passes, out of DNS for its deregistration delay before its SIGTERM). HAProxy finds the
// instances through the master's DNS (SRV records, re-resolved every second) and `wrk` sends it
// a steady load while the job is
//   (a) updated, two instances at a time, to a new version: the responses switch to it;
//   (b) moved off a drained host, one instance at a time;
//   (c) scaled from 6 instances to 3.
// Every request of every step must succeed (2xx, no socket error, no timeout); after each step
// `dig` against the master's DNS finds one SRV record per ready instance, at the ports and on the
// hosts `task list` gives, and the A records of their hosts. The counts go to stderr as one line
// per step (bench/results/haproxy-zero-failure-*.md).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using Json = nlohmann::json;

constexpr char kExamples[] = PACELINE_SOURCE_DIR "/examples";
constexpr char kSrvName[] = "_http._tcp.web.prod.paceline";
constexpr char kName[] = "web.prod.paceline";

constexpr char kPool[] = R"(
description: prod
resources:
  cpu:    {reservation: 2, limit: 4}
  memory: {reservation: 2Gi}
)";

// Counts each response by the version its body names ("v1", "v2"), or by its status when it is
// not 2xx ("status503"); done() prints one RESULT line with wrk's own counts and these.
constexpr char kWrkScript[] = R"lua(
counts = {}
local threads = {}
function setup(thread) table.insert(threads, thread) end
function response(status, headers, body)
  local key
  if status >= 200 and status < 300 then
    key = string.match(body, "version=(%w+)") or "other"
  else
    key = "status" .. status
  end
  counts[key] = (counts[key] or 0) + 1
end
function done(summary, latency, requests)
  local total = {}
  for _, t in ipairs(threads) do
    for k, v in pairs(t:get("counts")) do total[k] = (total[k] or 0) + v end
  end
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d connect=%d read=%d write=%d status=%d timeout=%d p99_us=%d",
    summary.requests, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(99)))
  for k, v in pairs(total) do io.write(string.format(" %s=%d", k, v)) end
  io.write("\n")
end
)lua";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// `text` with `from` replaced by `to`; fails the test when `from` is not in it (the example
// changed under the test).
std::string Replace(const std::string& text, const std::string& from, const std::string& to) {
  EXPECT_TRUE(absl::StrContains(text, from)) << "expected '" << from << "' in:\n" << text;
  return absl::StrReplaceAll(text, {{from, to}});
}

// A TCP port of 127.0.0.1 free right now.
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  close(fd);
  return port;
}

// What one run of wrk counted.
struct LoadResult {
  int64_t requests = 0;  // responses received
  int64_t socket_errors = 0;
  int64_t timeouts = 0;
  int64_t p99_us = 0;
  std::map<std::string, int64_t> by_key;  // "v1", "v2", "status503", "other"
  std::string raw;

  int64_t non_2xx() const {
    int64_t n = 0;
    for (const auto& [k, v] : by_key) {
      if (absl::StartsWith(k, "status")) n += v;
    }
    return n;
  }
  int64_t failed() const { return socket_errors + timeouts + non_2xx(); }
  std::string Summary() const {
    std::vector<std::string> keys;
    for (const auto& [k, v] : by_key) keys.push_back(absl::StrCat(k, "=", v));
    return absl::StrCat("requests=", requests, " failed=", failed(), " (socket errors ",
                        socket_errors, ", timeouts ", timeouts, ", non-2xx ", non_2xx(),
                        ") p99=", p99_us / 1000, "ms ", absl::StrJoin(keys, " "));
  }
};

std::optional<LoadResult> ParseWrk(const std::string& out) {
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    if (!absl::ConsumePrefix(&line, "RESULT ")) continue;
    LoadResult r{.raw = out};
    for (absl::string_view kv : absl::StrSplit(line, ' ', absl::SkipEmpty())) {
      std::pair<std::string, std::string> p = absl::StrSplit(kv, absl::MaxSplits('=', 1));
      int64_t v = 0;
      if (!absl::SimpleAtoi(p.second, &v)) return std::nullopt;
      if (p.first == "requests") {
        r.requests = v;
      } else if (p.first == "connect" || p.first == "read" || p.first == "write") {
        r.socket_errors += v;
      } else if (p.first == "timeout") {
        r.timeouts = v;
      } else if (p.first == "p99_us") {
        r.p99_us = v;
      } else if (p.first != "status") {  // wrk's status count is >= 400; ours is every non-2xx
        r.by_key[p.first] = v;
      }
    }
    return r;
  }
  return std::nullopt;
}

class HaproxyE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    c_ = std::make_unique<TestCluster>(
        ClusterOptions{.agents = 3, .master_args = {"--dns-listen", "127.0.0.1:0"}, .netns = true});
    ASSERT_FALSE(c_->netns_run().empty());
    Json master = Json::parse(ReadAll(c_->dir() + "/master/master.json"), nullptr, false);
    ASSERT_FALSE(master.is_discarded());
    dns_ = master.value("dns", "");
    std::pair<std::string, std::string> hp = absl::StrSplit(dns_, ':');
    dns_host_ = hp.first;
    dns_port_ = hp.second;
    ASSERT_FALSE(dns_port_.empty()) << master.dump();
    ASSERT_TRUE(c_->WaitForHosts(3));
    RunResult pool = c_->Cli({"pool", "create", "/prod", "-f", c_->WriteFile("pool.yaml", kPool)});
    ASSERT_EQ(pool.exit_code, 0) << pool.err;
    // web.py where tasks (run as nobody) can read it.
    shared_ = c_->dir() + "/shared";
    std::filesystem::create_directories(shared_);
    std::filesystem::permissions(shared_, std::filesystem::perms::all);
    std::filesystem::copy_file(std::string(kExamples) + "/service/web.py", shared_ + "/web.py");
    std::filesystem::permissions(shared_ + "/web.py", std::filesystem::perms::all);
    wrk_script_ = c_->WriteFile("load.lua", kWrkScript);
  }

  void TearDown() override {
    if (wrk_.has_value()) StopLoad();
    if (haproxy_.has_value()) {
      if (HasFailure()) std::cerr << "haproxy:\n" << haproxy_->Output() << std::endl;
      haproxy_->Signal(SIGTERM);  // HAProxy's hard stop
      if (!haproxy_->WaitExit(absl::Seconds(10)).has_value()) haproxy_->Signal(SIGKILL);
      haproxy_.reset();
    }
    c_.reset();
  }

  // examples/service/web.yaml with this test's interpreter, script and version.
  std::string WebSpec(const std::string& version) {
    std::string spec = ReadAll(std::string(kExamples) + "/service/web.yaml");
    spec = Replace(spec, "python3 /opt/paceline/examples/service/web.py",
                   "/usr/bin/python3 " + shared_ + "/web.py");
    spec = Replace(spec, "VERSION: v1", "VERSION: " + version);
    spec = Replace(spec, "deregistration_delay: 3s", "deregistration_delay: 2s");
    return spec;
  }

  // examples/haproxy/haproxy.cfg with the master's DNS, free ports on loopback, and no retry
  // (a failed connection is a failed request).
  std::string HaproxyConfig() {
    std::string cfg = ReadAll(std::string(kExamples) + "/haproxy/haproxy.cfg");
    cfg = Replace(cfg, "nameserver master 127.0.0.1:5353", "nameserver master " + dns_);
    cfg = Replace(cfg, "bind :8080", absl::StrCat("bind 127.0.0.1:", front_port_));
    cfg = Replace(cfg, "bind 127.0.0.1:8404", absl::StrCat("bind 127.0.0.1:", stats_port_));
    cfg = Replace(cfg, "retries 1", "retries 0");
    cfg = Replace(cfg, "    option redispatch 1\n", "");
    EXPECT_TRUE(absl::StrContains(cfg, std::string("server-template web 10 ") + kSrvName));
    return cfg;
  }

  void StartHaproxy() {
    front_port_ = FreePort();
    stats_port_ = FreePort();
    ASSERT_GT(front_port_, 0);
    ASSERT_GT(stats_port_, 0);
    const std::string cfg = c_->WriteFile("haproxy.cfg", HaproxyConfig());
    RunResult check = RunProgram({"-c", "-f", cfg}, {.program = "haproxy"});
    ASSERT_EQ(check.exit_code, 0) << check.out << check.err;
    // -db: in the foreground, so that the test owns the one process and stops it by PID.
    haproxy_.emplace(Process::Start({"-db", "-f", cfg}, {.cwd = c_->dir(), .program = "haproxy"}));
  }

  // The servers of backend `web` that HAProxy has UP, as "ADDRESS:PORT".
  std::set<std::string> HaproxyServersUp() {
    RunResult r = RunProgram(
        {"-s", "--max-time", "2", absl::StrCat("http://127.0.0.1:", stats_port_, "/stats;csv")},
        {.program = "curl"});
    std::set<std::string> up;
    std::vector<std::string> header;
    for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
      std::vector<std::string> f = absl::StrSplit(line, ',');
      if (absl::StartsWith(line, "# ")) {
        header = f;
        continue;
      }
      if (f.size() < 2 || f[0] != "web" || f[1] == "BACKEND" || f[1] == "FRONTEND") continue;
      std::string status, addr;
      for (size_t i = 0; i < header.size() && i < f.size(); ++i) {
        if (header[i] == "status") status = f[i];
        if (header[i] == "addr") addr = f[i];
      }
      if (status == "UP" && !addr.empty()) up.insert(addr);
    }
    return up;
  }

  void StartLoad() {
    ASSERT_FALSE(wrk_.has_value());
    // Bounded: at most 240 s even if the test never stops it.
    wrk_.emplace(Process::Start({"-t1", "-c4", "-d240s", "--timeout", "5s", "-s", wrk_script_,
                                 absl::StrCat("http://127.0.0.1:", front_port_, "/")},
                                {.cwd = c_->dir(), .program = "wrk"}));
  }

  // Stops wrk (SIGINT: it ends its threads and reports) and returns what it counted.
  LoadResult StopLoad() {
    LoadResult none;
    if (!wrk_.has_value()) return none;
    wrk_->Signal(SIGINT);
    std::optional<int> code = wrk_->WaitExit(absl::Seconds(30));
    std::string out = wrk_->Output();
    wrk_.reset();
    EXPECT_EQ(code, 0) << out;
    std::optional<LoadResult> r = ParseWrk(out);
    EXPECT_TRUE(r.has_value()) << "no RESULT line from wrk:\n" << out;
    return r.value_or(none);
  }

  // RUNNING instances of `job`: instance -> "HOST_ADDRESS:PORT".
  std::map<int, std::string> Running(uint64_t job) {
    std::map<int, std::string> out;
    Json tasks = c_->CliJson({"task", "list", std::to_string(job)})["tasks"];
    for (const Json& t : tasks) {
      if (t["state"] != "RUNNING" || !t.contains("ports") || !t.contains("host")) continue;
      const std::string host = t["host"];
      int i = -1;
      if (!absl::SimpleAtoi(absl::StripPrefix(host, "host-"), &i)) continue;
      out[t["instance"].get<int>()] =
          absl::StrCat(c_->host_address(i), ":", t["ports"]["http"].get<int>());
    }
    return out;
  }

  std::vector<std::string> Dig(const std::string& name, const std::string& type) {
    RunResult r =
        RunProgram({"@" + dns_host_, "-p", dns_port_, "+short", "+tries=1", "+time=2", name, type},
                   {.program = "dig"});
    std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
    return lines;
  }

  // Waits until dig finds, for each RUNNING instance of `job` (`want` of them), one SRV record
  // with its port and its name as target, and the A records of their hosts; then that HAProxy
  // has exactly those servers UP.
  void ExpectDnsAndHaproxyFollow(uint64_t job, size_t want, const std::string& step) {
    std::map<int, std::string> running;
    std::set<std::string> want_srv, got_srv, want_a, got_a, endpoints;
    const bool dns_ok = WaitFor(
        [&] {
          running = Running(job);
          want_srv.clear();
          want_a.clear();
          endpoints.clear();
          for (const auto& [i, ep] : running) {
            std::pair<std::string, std::string> hp = absl::StrSplit(ep, ':');
            want_srv.insert(absl::StrCat("0 1 ", hp.second, " ", i, ".", kName, "."));
            want_a.insert(hp.first);
            endpoints.insert(ep);
          }
          std::vector<std::string> srv = Dig(kSrvName, "SRV");
          std::vector<std::string> a = Dig(kName, "A");
          got_srv = std::set<std::string>(srv.begin(), srv.end());
          got_a = std::set<std::string>(a.begin(), a.end());
          return running.size() == want && srv.size() == want && got_srv == want_srv &&
                 a.size() == got_a.size() && got_a == want_a;
        },
        absl::Seconds(30));
    EXPECT_TRUE(dns_ok) << step << ": running " << absl::StrJoin(endpoints, " ") << "\nSRV want "
                        << absl::StrJoin(want_srv, " | ") << "\nSRV got "
                        << absl::StrJoin(got_srv, " | ") << "\nA want "
                        << absl::StrJoin(want_a, " ") << "\nA got " << absl::StrJoin(got_a, " ");
    std::set<std::string> up;
    EXPECT_TRUE(WaitFor(
        [&] {
          up = HaproxyServersUp();
          return up == endpoints;
        },
        absl::Seconds(15)))
        << step << ": HAProxy has UP " << absl::StrJoin(up, " ") << "; instances "
        << absl::StrJoin(endpoints, " ");
  }

  // Waits for the job's current update to end; its state.
  std::string WaitUpdate(uint64_t job) {
    std::string state;
    WaitFor(
        [&] {
          Json u = c_->CliJson({"update", "get", std::to_string(job)})["update"];
          state = u.is_object() ? u.value("state", "") : "";
          return state == "SUCCEEDED" || state == "FAILED" || state == "ROLLED_BACK" ||
                 state == "ABORTED";
        },
        absl::Seconds(120));
    return state;
  }

  void Report(const std::string& step, const LoadResult& r) {
    std::cerr << "haproxy_e2e " << step << ": " << r.Summary() << std::endl;
    EXPECT_EQ(r.failed(), 0) << step << ": " << r.Summary() << "\n" << r.raw;
    EXPECT_GE(r.requests, 1000) << step << ": too few requests to mean anything\n" << r.raw;
  }

  std::unique_ptr<TestCluster> c_;
  std::string dns_, dns_host_, dns_port_, shared_, wrk_script_;
  int front_port_ = 0, stats_port_ = 0;
  std::optional<Process> haproxy_, wrk_;
};

TEST_F(HaproxyE2E, NoRequestFailsThroughAnUpdateADrainAndAScaleDown) {
  const uint64_t job = c_->CreateJob("/prod", WebSpec("v1"));
  ASSERT_GT(job, 0u);
  ASSERT_NO_FATAL_FAILURE(StartHaproxy());
  ExpectDnsAndHaproxyFollow(job, 6, "start");
  ASSERT_FALSE(HasFailure());
  LoadResult total;

  // (a) A rolling update to v2, two instances at a time.
  StartLoad();
  absl::SleepFor(absl::Seconds(2));  // the load runs before the first instance moves
  RunResult update = c_->Cli(
      {"job", "update", std::to_string(job), "-f", c_->WriteFile("v2.yaml", WebSpec("v2"))});
  ASSERT_EQ(update.exit_code, 0) << update.err;
  EXPECT_EQ(WaitUpdate(job), "SUCCEEDED");
  absl::SleepFor(absl::Seconds(2));
  LoadResult a = StopLoad();
  Report("update", a);
  EXPECT_GT(a.by_key["v1"], 0) << "v1 served before the update";
  EXPECT_GT(a.by_key["v2"], 0) << "v2 served after the update";
  ExpectDnsAndHaproxyFollow(job, 6, "after the update");

  // (b) A host drained: its instances move off one at a time.
  std::map<std::string, int> per_host;
  for (const auto& [i, ep] : Running(job)) ++per_host[ep.substr(0, ep.find(':'))];
  int drained = -1;
  for (int h = 0; h < 3; ++h) {
    if (per_host[c_->host_address(h)] > 0) drained = h;
  }
  ASSERT_GE(drained, 0);
  StartLoad();
  absl::SleepFor(absl::Seconds(1));
  RunResult drain = c_->Cli({"host", "drain", c_->agent_name(drained)});
  ASSERT_EQ(drain.exit_code, 0) << drain.err;
  Json host = Json::object();
  EXPECT_TRUE(WaitFor(
      [&] {
        const Json hosts = c_->CliJson({"host", "list"})["hosts"];
        for (const Json& h : hosts) {
          if (h["name"] == c_->agent_name(drained)) host = h;
        }
        return host.value("state", "") == "DRAINED";
      },
      absl::Seconds(90)))
      << c_->agent_name(drained) << ": " << host.dump() << "\n"
      << c_->Cli({"task", "list", std::to_string(job)}).out;
  ExpectDnsAndHaproxyFollow(job, 6, "after the drain");
  LoadResult b = StopLoad();
  Report("drain", b);
  EXPECT_EQ(b.by_key["v1"], 0) << "only v2 once the update is done";
  for (const auto& [i, ep] : Running(job)) {
    EXPECT_FALSE(absl::StartsWith(ep, c_->host_address(drained) + ":")) << i << " " << ep;
  }

  // (c) Scaled from 6 instances to 3.
  StartLoad();
  absl::SleepFor(absl::Seconds(1));
  RunResult scale = c_->Cli({"job", "update", std::to_string(job), "--instances", "3"});
  ASSERT_EQ(scale.exit_code, 0) << scale.err;
  EXPECT_EQ(WaitUpdate(job), "SUCCEEDED");
  ExpectDnsAndHaproxyFollow(job, 3, "after the scale-down");
  absl::SleepFor(absl::Seconds(1));
  LoadResult s = StopLoad();
  Report("scale-down", s);

  const int64_t requests = a.requests + b.requests + s.requests;
  const int64_t failed = a.failed() + b.failed() + s.failed();
  std::cerr << "haproxy_e2e total: requests=" << requests << " failed=" << failed << std::endl;
  EXPECT_EQ(failed, 0);
  EXPECT_GE(requests, 5000);
}

}  // namespace
}  // namespace paceline::e2e
