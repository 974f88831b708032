#pragma once
// A real cluster for end-to-end tests: one `paceline master` and N `paceline agent` processes
// on loopback, each agent with its own name, work dir and port range, all under one temp dir.
// Client commands run the real CLI with --addr and --token. Everything started is stopped by
// PID when the fixture is destroyed. With `netns`, the agents run as hosts of their own, each in
// a network namespace with its own address (see ClusterOptions::netns).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/e2e/process.h"

namespace paceline::e2e {

// Built with AddressSanitizer (several times slower): the long scenarios run at a smaller size.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

struct ClusterOptions {
  int agents = 3;
  std::string agent_cpu = "2";
  std::string agent_memory = "4Gi";
  // Long enough that a live agent on a loaded (sanitizer, 2-core) machine is never taken for
  // dead; tests that lose a host on purpose set a short one.
  std::string host_timeout = "10s";
  std::string usage_interval = "1s";  // how often agents report what tasks use
  // More host labels KEY=VALUE of agent i (every agent has index=i and hostname=its name).
  std::map<int, std::vector<std::string>> agent_labels;
  // NAME=VALUE entries for the agents' environment (e.g. a PATH with a stand-in nvidia-smi).
  std::vector<std::string> agent_env;
  std::vector<std::string> agent_args;  // more flags for every agent
  std::string store;                    // the master's --store; empty: SQLite in its data dir
  // Master i's own --store instead, where given (the same database by another address).
  std::map<int, std::string> master_store;
  std::vector<std::string> master_args;  // more flags for every master
  // Several masters on one PostgreSQL `store`, each with its own data dir, one token; agents
  // get every address. The CLI talks to the one that answered last (see FindLeader).
  int masters = 1;
  std::string lease = "3s";  // "": the master's default
  // TLS: the masters share DATA/tls (the first makes the CA), agents present certificates
  // made with `paceline cert agent`, the CLI verifies the master (--ca). Otherwise plain text
  // (--insecure-loopback).
  bool tls = false;
  // Several hosts on one machine (needs root; see scripts/netns-cluster.sh): a bridge made for
  // the cluster and one network namespace per agent. Agent i runs in its namespace as host
  // "host-<i>", with its own address host_address(i) in 198.18.0.0/15 (given to its tasks as
  // PACELINE_HOST_ADDRESS and seen by the master, so peers.json carries it) and its cgroups
  // under the cluster's own parent; the master listens on the bridge's address, with TLS
  // (`tls` is implied), and the CLI reaches it there. The fixture's destructor takes it all
  // down (`netns-cluster.sh down`: processes by PID and by namespace, namespaces, veths,
  // bridge); after a test that died, the next cluster's setup does (its owner is gone).
  bool netns = false;
};

// A 64-bit integer of a JSON answer: proto3's JSON mapping writes int64/uint64 fields as
// strings, other integers as numbers; either is read, and a field left out (null) is 0, as
// proto3 leaves out zeros. Anything else fails the test (and is 0).
int64_t JsonInt(const nlohmann::json& v);

// Run markers: every run of an instance appends "start RUN NANOS" and "stop RUN NANOS" to
// MARKERS/<instance>, so that a test can check afterwards that no instance ever had two runs
// alive at once. MakeMarkersDir creates MARKERS under `dir` (writable by the task user);
// MarkedCommand wraps a command between the two lines (the job needs env MARKERS: <dir>).
std::string MakeMarkersDir(const std::string& dir);
std::string MarkedCommand(const std::string& command);
// Instance `instance`'s runs, from its markers: run -> {start, stop} in nanoseconds (stop 0 for a
// run killed before it wrote its stop line).
std::map<std::string, std::pair<int64_t, int64_t>> MarkedRuns(const std::string& markers,
                                                              int instance);
// Expects every instance in [0, instances) to have run, and no two runs of one instance to
// overlap in time.
void ExpectRunsNeverOverlap(const std::string& markers, int instances);

class TestCluster {
 public:
  explicit TestCluster(ClusterOptions options = {});
  ~TestCluster();

  // Starts the current master (again, after a crash) on the same store and address; waits
  // until it wrote its endpoints. With several masters, StartMaster(i) starts master i;
  // `binary`: as StartAgent's.
  void StartMaster() { StartMaster(current_); }
  void StartMaster(int i, const std::string& binary = "");
  // Several masters: polls each running master until one serves (a gated call succeeds), makes
  // it the current one and returns its index; -1 after `timeout`.
  int FindLeader(absl::Duration timeout);
  // Starts agent i, given `masters` (HOST:PORT,...; empty: every master's address), running
  // `binary` (empty: the binary under test; another path: an upgrade onto another build).
  void StartAgent(int i, const std::string& masters = "", const std::string& binary = "");
  // Starts one more agent (a host joining); returns its index.
  int AddAgent(const std::string& masters = "");
  Process& master() { return *masters_[current_]; }
  Process& master(int i) { return *masters_[i]; }
  int current_master() const { return current_; }
  const std::string& master_address(int i) const { return master_addrs_[i]; }
  Process& agent(int i) { return *agents_[i]; }
  const std::string& dir() const { return dir_; }
  // Unique per cluster: agents of clusters that run at the same time (ctest -j) must not share
  // names, since an agent owns the cgroups named after it.
  // With netns, "host-<i>" (the cgroups are under the cluster's own parent).
  std::string agent_name(int i) const;
  // Agent i's address as its peers and the master see it: with netns its namespace's address
  // (198.18.K.<10+i>), otherwise 127.0.0.1.
  std::string host_address(int i) const;
  // With netns: agent i's network namespace (`ip netns exec NAME ...`), the run's name in
  // netns-cluster.sh (`netns-cluster.sh --run NAME status`) and the bridge's address; "" else.
  std::string netns_name(int i) const;
  const std::string& netns_run() const { return netns_run_; }
  const std::string& bridge_address() const { return bridge_address_; }
  // Runs `program args...` on agent i's host (in its namespace with netns), as root, to
  // completion; e.g. RunOnHost(1, {"python3", "-c", "..."}).
  RunResult RunOnHost(int i, const std::vector<std::string>& argv,
                      absl::Duration timeout = absl::Seconds(60));

  // The master's HTTP side (HTTPS verified against the CA with `tls`); `master` is an index
  // (several masters), -1 the current one.
  // GET `path`: the body, or "" when it failed.
  std::string HttpGet(const std::string& path, int master = -1);
  struct HttpResult {
    int status = 0;  // 0 when the request failed
    std::string body;
    std::map<std::string, std::string> headers;  // by name as sent
  };
  // GET or POST `path`, with the bearer token unless `with_token` is false, and `headers`.
  HttpResult Http(const std::string& method, const std::string& path, const std::string& body = "",
                  bool with_token = true, int master = -1,
                  const std::map<std::string, std::string>& headers = {});
  // "host:port" of the HTTP side.
  std::string HttpAddress(int master = -1);
  const std::string& token() const { return token_; }                  // the bootstrap admin's
  const std::string& agent_token() const { return agent_token_; }      // the agents'
  std::string ca_file() const { return dir_ + "/master/tls/ca.pem"; }  // with `tls`
  // Runs `paceline --addr A --token T [--ca CA] args...`.
  RunResult Cli(const std::vector<std::string>& args);
  // Starts `paceline --addr A --token T args...` in the background.
  Process StartCli(const std::vector<std::string>& args);
  // Runs a client command with -o json and parses stdout (fails the test on error).
  nlohmann::json CliJson(const std::vector<std::string>& args);
  // Writes `text` to a file in the cluster dir and returns its path.
  std::string WriteFile(const std::string& name, const std::string& text);
  // Waits until `paceline host list` shows `n` connected hosts.
  bool WaitForHosts(int n, absl::Duration timeout = absl::Seconds(30));
  // Polls `job get` until `pred(job_json)` holds.
  bool WaitForJob(uint64_t job, const std::function<bool(const nlohmann::json&)>& pred,
                  absl::Duration timeout);
  uint64_t CreateJob(const std::string& pool, const std::string& spec_yaml);

 private:
  // On a failed test: the last lines each master and agent printed, to stderr.
  void PrintTails() const;
  // netns (netns_fixture.cc): makes the network with netns-cluster.sh net-up, records a
  // process it started in the run (so that down and gc stop it), takes the run down.
  void SetUpNetns();
  void TrackInNetns(pid_t pid, const std::string& name);
  void TearDownNetns();
  ClusterOptions options_;
  std::string dir_;
  std::string suffix_;
  std::string addr_;  // the current master's gRPC address
  std::string token_;
  std::string agent_token_;
  std::vector<std::unique_ptr<Process>> masters_;
  std::vector<std::string> master_addrs_;  // "" until started once
  int current_ = 0;
  std::vector<std::unique_ptr<Process>> agents_;
  std::string netns_run_;                   // netns: the script's run, "" until set up
  std::string bridge_address_;              // netns: the master's host
  std::string cgroup_parent_;               // netns: the agents' --cgroup-parent
  std::vector<std::string> netns_names_;    // netns: agent i's namespace
  std::vector<std::string> netns_address_;  // netns: agent i's address
};

}  // namespace paceline::e2e
