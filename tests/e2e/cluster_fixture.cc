#include "tests/e2e/cluster_fixture.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"

namespace paceline::e2e {
namespace {

// Kills (SIGKILL, by PID) every process whose working directory is `dir` or under it: what a
// test left running in its cluster (the task of an agent it stopped before the job was killed,
// or of a host it cut off, and its supervisor, which outlive their agent by design). Returns
// how many.
int KillProcessesUnder(const std::string& dir) {
  int killed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &pid) || pid == ::getpid()) continue;
    std::error_code link_ec;
    const std::string cwd = std::filesystem::read_symlink(entry.path() / "cwd", link_ec).string();
    if (link_ec || !(cwd == dir || absl::StartsWith(cwd, dir + "/"))) continue;
    if (::kill(pid, SIGKILL) == 0) ++killed;
  }
  return killed;
}

}  // namespace

TestCluster::TestCluster(ClusterOptions options) : options_(options) {
  dir_ = MakeTempDir("pl-cluster");
  suffix_ = dir_.substr(dir_.rfind('-') + 1);
  masters_.resize(options_.masters);
  master_addrs_.resize(options_.masters);
  if (options_.netns) {
    options_.tls = true;
    SetUpNetns();
    if (netns_run_.empty()) return;  // the failure is recorded
  }
  for (int i = 0; i < options_.masters; ++i) StartMaster(i);
  if (options_.masters > 1) {
    EXPECT_GE(FindLeader(absl::Seconds(30)), 0);
  }
  agents_.resize(options_.agents);
  for (int i = 0; i < options_.agents; ++i) StartAgent(i);
  EXPECT_TRUE(WaitForHosts(options_.agents)) << master().Output();
}

TestCluster::~TestCluster() {
  // Agents leave their tasks running when they stop: kill every live job first, so that no
  // test leaves processes behind.
  if (options_.masters > 1) FindLeader(absl::Seconds(15));
  if (masters_[current_] && masters_[current_]->Running()) {
    RunResult jobs = Cli({"job", "list", "--limit", "1000", "-o", "json"});
    auto j = nlohmann::json::parse(jobs.out, nullptr, false);
    if (!j.is_discarded() && j.contains("jobs")) {
      for (const auto& job : j["jobs"]) {
        std::string state = job.value("state", "");
        if (state == "PENDING" || state == "RUNNING") Cli({"job", "kill", job["id"]});
      }
    }
    WaitFor(
        [&] {
          RunResult r = Cli({"host", "list", "-o", "json"});
          auto h = nlohmann::json::parse(r.out, nullptr, false);
          if (h.is_discarded() || !h.contains("hosts")) return true;
          for (const auto& host : h["hosts"]) {
            if (host.value("connected", false) && host.value("tasks", 0) != 0) return false;
          }
          return true;
        },
        absl::Seconds(30));
  }
  // Then the agents, then the master.
  for (auto& a : agents_) {
    if (a && a->Running()) {
      a->Signal(SIGTERM);
      a->WaitExit(absl::Seconds(10));
    }
  }
  for (auto& m : masters_) {
    if (m && m->Running()) {
      m->Signal(SIGTERM);
      m->WaitExit(absl::Seconds(10));
    }
  }
  if (const int strays = KillProcessesUnder(dir_); strays > 0) {
    std::cerr << "--- killed " << strays << " process(es) the test left running in " << dir_
              << std::endl;
  }
  if (!netns_run_.empty()) TearDownNetns();
  if (::testing::Test::HasFailure()) {
    PrintTails();
  } else {
    std::filesystem::remove_all(dir_);
  }
}

void TestCluster::PrintTails() const {
  auto tail = [](const std::string& text) {
    constexpr size_t kMax = 6000;
    return text.size() <= kMax ? text : "..." + text.substr(text.size() - kMax);
  };
  for (size_t i = 0; i < masters_.size(); ++i) {
    if (masters_[i])
      std::cerr << "--- master " << i << " (last lines)\n" << tail(masters_[i]->Output());
  }
  for (size_t i = 0; i < agents_.size(); ++i) {
    if (agents_[i])
      std::cerr << "--- agent " << i << " (last lines)\n" << tail(agents_[i]->Output());
  }
  std::cerr << "--- kept for inspection: " << dir_ << std::endl;
}

void TestCluster::StartMaster(int i, const std::string& binary) {
  std::string data = dir_ + (i == 0 ? "/master" : absl::StrCat("/master", i));
  std::filesystem::remove(data + "/master.json");
  // A restarted master listens where it did before: the agents reconnect there.
  const std::string host = options_.netns ? bridge_address_ : "127.0.0.1";
  std::string listen = master_addrs_[i].empty() ? host + ":0" : master_addrs_[i];
  // Agents heartbeat six times per host timeout, as in production (2 s of 30 s is fifteen): a
  // heartbeat late by a second on a loaded machine must not make a live host LOST.
  absl::Duration timeout;
  ASSERT_TRUE(absl::ParseDuration(options_.host_timeout, &timeout)) << options_.host_timeout;
  std::string heartbeat = absl::FormatDuration(std::max(absl::Milliseconds(100), timeout / 6));
  std::vector<std::string> args = {"master",
                                   "--data-dir",
                                   data,
                                   "--listen",
                                   listen,
                                   "--http-listen",
                                   host + ":0",
                                   "--host-timeout",
                                   options_.host_timeout,
                                   "--heartbeat-interval",
                                   heartbeat,
                                   "--cycle",
                                   "20ms",
                                   "--history-period",
                                   "1s",
                                   "--token-file",
                                   dir_ + "/master/token",
                                   "--agent-token-file",
                                   dir_ + "/master/agent-token"};
  if (options_.tls) {
    args.insert(args.end(), {"--tls-dir", dir_ + "/master/tls"});
  } else {
    args.push_back("--insecure-loopback");
  }
  if (!options_.store.empty()) {
    auto own = options_.master_store.find(i);
    args.insert(args.end(),
                {"--store", own != options_.master_store.end() ? own->second : options_.store});
    if (!options_.lease.empty()) args.insert(args.end(), {"--lease", options_.lease});
  }
  args.insert(args.end(), options_.master_args.begin(), options_.master_args.end());
  std::filesystem::create_directories(dir_ + "/master");
  masters_[i] = std::make_unique<Process>(Process::Start(args, {.cwd = dir_, .program = binary}));
  if (options_.netns) TrackInNetns(masters_[i]->pid(), absl::StrCat("master", i));
  bool up =
      WaitFor([&] { return std::filesystem::exists(data + "/master.json"); }, absl::Seconds(30));
  ASSERT_TRUE(up) << masters_[i]->Output();
  auto j = nlohmann::json::parse(ReadFile(data + "/master.json"));
  master_addrs_[i] = j["grpc"];
  if (i == current_) addr_ = master_addrs_[i];
  token_ = std::string(absl::StripAsciiWhitespace(ReadFile(j["token_file"])));
  agent_token_ = std::string(absl::StripAsciiWhitespace(ReadFile(j["agent_token_file"])));
}

int TestCluster::FindLeader(absl::Duration timeout) {
  int found = -1;
  WaitFor(
      [&] {
        for (int i = 0; i < static_cast<int>(masters_.size()); ++i) {
          if (!masters_[i] || !masters_[i]->Running()) continue;
          std::vector<std::string> args = {
              "--addr", master_addrs_[i], "--token", token_, "--timeout", "2s", "pool", "list"};
          if (options_.tls) args.insert(args.begin(), {"--ca", ca_file()});
          RunResult r = RunPaceline(args);
          if (r.exit_code == 0) {
            found = i;
            return true;
          }
        }
        return false;
      },
      timeout);
  if (found >= 0) {
    current_ = found;
    addr_ = master_addrs_[found];
  }
  return found;
}

void TestCluster::StartAgent(int i, const std::string& masters, const std::string& binary) {
  std::string ports = absl::StrCat(32000 + i * 200, "-", 32000 + i * 200 + 199);
  std::vector<std::string> args = {"agent",
                                   "--master",
                                   masters.empty() ? absl::StrJoin(master_addrs_, ",") : masters,
                                   "--token-file",
                                   dir_ + "/master/agent-token",
                                   "--name",
                                   agent_name(i),
                                   "--work-dir",
                                   absl::StrCat(dir_, "/", agent_name(i)),
                                   "--cpu",
                                   options_.agent_cpu,
                                   "--memory",
                                   options_.agent_memory,
                                   "--ports",
                                   ports,
                                   "--label",
                                   absl::StrCat("index=", i),
                                   "--usage-interval",
                                   options_.usage_interval};
  args.insert(args.end(), options_.agent_args.begin(), options_.agent_args.end());
  if (auto it = options_.agent_labels.find(i); it != options_.agent_labels.end()) {
    for (const std::string& label : it->second) args.insert(args.end(), {"--label", label});
  }
  if (options_.tls) {
    const std::string tls = dir_ + "/master/tls";
    RunResult cert = RunPaceline({"cert", "agent", agent_name(i), "--tls-dir", tls}, dir_);
    ASSERT_EQ(cert.exit_code, 0) << cert.err;
    args.insert(args.end(),
                {"--ca", tls + "/ca.pem", "--cert", tls + "/agents/" + agent_name(i) + ".pem",
                 "--key", tls + "/agents/" + agent_name(i) + ".key"});
  }
  Process::Options run = {.cwd = dir_, .env = options_.agent_env, .program = binary};
  if (options_.netns) {
    ASSERT_LT(i, static_cast<int>(netns_names_.size())) << "no network namespace for agent " << i;
    args.insert(args.end(),
                {"--address", netns_address_[i], "--cgroup-parent", cgroup_parent_, "--label",
                 "netns=" + netns_names_[i], "--label", "address=" + netns_address_[i]});
    run.netns = netns_names_[i];
  }
  agents_[i] = std::make_unique<Process>(Process::Start(args, run));
  if (options_.netns) TrackInNetns(agents_[i]->pid(), agent_name(i));
}

int TestCluster::AddAgent(const std::string& masters) {
  agents_.emplace_back();
  int i = static_cast<int>(agents_.size()) - 1;
  StartAgent(i, masters);
  return i;
}

std::string TestCluster::HttpAddress(int master) {
  if (master < 0) master = current_;
  std::string data = dir_ + (master == 0 ? "/master" : absl::StrCat("/master", master));
  auto j = nlohmann::json::parse(ReadFile(data + "/master.json"), nullptr, false);
  return j.is_discarded() ? "" : j.value("http", "");
}

TestCluster::HttpResult TestCluster::Http(const std::string& method, const std::string& path,
                                          const std::string& body, bool with_token, int master,
                                          const std::map<std::string, std::string>& more) {
  std::string http = HttpAddress(master);
  auto colon = http.rfind(':');
  if (colon == std::string::npos) return {};
  // A TLS cluster's HTTP side is HTTPS, verified against the cluster's CA.
  httplib::Client client(absl::StrCat(options_.tls ? "https://" : "http://", http));
  if (options_.tls) client.set_ca_cert_path(ca_file().c_str());
  httplib::Headers headers;
  if (with_token) headers.emplace("Authorization", "Bearer " + token_);
  headers.insert(more.begin(), more.end());
  auto res = method == "POST" ? client.Post(path.c_str(), headers, body, "application/json")
                              : client.Get(path.c_str(), headers);
  if (!res) return {};
  return {res->status, res->body, {res->headers.begin(), res->headers.end()}};
}

std::string TestCluster::HttpGet(const std::string& path, int master) {
  HttpResult r = Http("GET", path, "", true, master);
  return r.status == 200 ? r.body : "";
}

RunResult TestCluster::Cli(const std::vector<std::string>& args) {
  std::vector<std::string> full = {"--addr", addr_, "--token", token_};
  if (options_.tls) full.insert(full.end(), {"--ca", ca_file()});
  full.insert(full.end(), args.begin(), args.end());
  // A command that waits (`job wait --timeout 240s`) is given its own timeout and some more.
  absl::Duration limit = absl::Seconds(60);
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    absl::Duration d;
    if (args[i] == "--timeout" && absl::ParseDuration(args[i + 1], &d)) {
      limit = std::max(limit, d + absl::Seconds(30));
    }
  }
  return RunPaceline(full, dir_, limit);
}

Process TestCluster::StartCli(const std::vector<std::string>& args) {
  std::vector<std::string> full = {"--addr", addr_, "--token", token_};
  if (options_.tls) full.insert(full.end(), {"--ca", ca_file()});
  full.insert(full.end(), args.begin(), args.end());
  return Process::Start(full, {.cwd = dir_});
}

nlohmann::json TestCluster::CliJson(const std::vector<std::string>& args) {
  std::vector<std::string> full = args;
  full.push_back("-o");
  full.push_back("json");
  RunResult r = Cli(full);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

std::string TestCluster::WriteFile(const std::string& name, const std::string& text) {
  std::string path = dir_ + "/" + name;
  std::ofstream(path) << text;
  return path;
}

bool TestCluster::WaitForHosts(int n, absl::Duration timeout) {
  return WaitFor(
      [&] {
        RunResult r = Cli({"host", "list", "-o", "json"});
        if (r.exit_code != 0) return false;
        auto j = nlohmann::json::parse(r.out, nullptr, false);
        if (j.is_discarded() || !j.contains("hosts")) return false;
        int connected = 0;
        for (const auto& h : j["hosts"]) connected += h.value("connected", false) ? 1 : 0;
        return connected == n;
      },
      timeout);
}

bool TestCluster::WaitForJob(uint64_t job, const std::function<bool(const nlohmann::json&)>& pred,
                             absl::Duration timeout) {
  return WaitFor(
      [&] {
        RunResult r = Cli({"job", "get", std::to_string(job), "-o", "json"});
        if (r.exit_code != 0) return false;
        auto j = nlohmann::json::parse(r.out, nullptr, false);
        return !j.is_discarded() && pred(j["job"]);
      },
      timeout);
}

uint64_t TestCluster::CreateJob(const std::string& pool, const std::string& spec_yaml) {
  static int n = 0;
  std::string path = WriteFile(absl::StrCat("job-", n++, ".yaml"), spec_yaml);
  nlohmann::json j = CliJson({"job", "create", "-f", path, "--pool", pool});
  return std::stoull(j.value("job_id", "0"));
}

int64_t JsonInt(const nlohmann::json& v) {
  if (v.is_null()) return 0;  // proto3 leaves out fields that hold 0
  if (v.is_number_integer()) return v.get<int64_t>();
  int64_t out = 0;
  EXPECT_TRUE(v.is_string() && absl::SimpleAtoi(v.get<std::string>(), &out))
      << "not an integer: " << v.dump();
  return out;
}

std::string MakeMarkersDir(const std::string& dir) {
  std::string markers = dir + "/markers";
  std::filesystem::create_directories(markers);
  std::filesystem::permissions(markers, std::filesystem::perms::all);  // tasks run as nobody
  return markers;
}

std::string MarkedCommand(const std::string& command) {
  return absl::StrCat(
      R"sh(f=$MARKERS/$PACELINE_INSTANCE_ID; echo "start $PACELINE_RUN_ID $(date +%s%N)" >> $f; )sh",
      command, R"sh(; echo "stop $PACELINE_RUN_ID $(date +%s%N)" >> $f)sh");
}

std::map<std::string, std::pair<int64_t, int64_t>> MarkedRuns(const std::string& markers,
                                                              int instance) {
  std::ifstream in(absl::StrCat(markers, "/", instance));
  std::map<std::string, std::pair<int64_t, int64_t>> runs;
  std::string what, run;
  int64_t at = 0;
  while (in >> what >> run >> at) {
    auto& r = runs[run];
    (what == "start" ? r.first : r.second) = at;
  }
  return runs;
}

void ExpectRunsNeverOverlap(const std::string& markers, int instances) {
  int checked = 0;
  for (int i = 0; i < instances; ++i) {
    std::map<std::string, std::pair<int64_t, int64_t>> runs = MarkedRuns(markers, i);
    EXPECT_FALSE(runs.empty()) << "instance " << i << " never ran";
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (auto& [id, span] : runs) {
      if (span.second == 0) span.second = INT64_MAX;  // a run killed before it wrote "stop"
      spans.push_back(span);
    }
    std::sort(spans.begin(), spans.end());
    for (size_t k = 1; k < spans.size(); ++k) {
      EXPECT_LE(spans[k - 1].second, spans[k].first) << "instance " << i << " ran twice at once";
    }
    ++checked;
  }
  EXPECT_EQ(checked, instances);
}

}  // namespace paceline::e2e
