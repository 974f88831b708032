// End to end on several hosts of one machine (scripts/netns-cluster.sh): agents in network
// namespaces of their own register from their own addresses (`host list` shows them, as it
// shows an agent's --address, or where it connects from, off the bed); a gang's members bind on
// their host's address and reach each other across namespaces at the addresses and ports of
// peers.json; an agent killed in its namespace is declared lost and its task runs on another
// host; and nothing of the bed (namespaces, veths, bridge, processes) outlives it. Also the
// script by the book of docs/operations.md: up, the CLI, status, down; and its clean-up of a
// run whose owner died.

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using Json = nlohmann::json;

constexpr char kPool[] = R"(
resources:
  cpu:    {reservation: 2, limit: 8}
  memory: {reservation: 1Gi}
)";

void CreatePool(TestCluster& c) {
  RunResult r = c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPool)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

// A directory every task may write to (tasks run as nobody).
std::string OutDir(TestCluster& c) {
  std::string out = c.dir() + "/out";
  std::filesystem::create_directories(out);
  std::filesystem::permissions(out, std::filesystem::perms::all);
  return out;
}

RunResult Script(const std::vector<std::string>& args) {
  std::vector<std::string> full = {PACELINE_NETNS_SCRIPT};
  full.insert(full.end(), args.begin(), args.end());
  return RunProgram(full, {.env = {"PACELINE=" + PacelineBinary()}, .program = "bash"},
                    absl::Seconds(90));
}

std::string Shell(const std::string& command) {
  RunResult r = RunProgram({"-c", command}, {.program = "sh"});
  return r.out;
}

// What of run `run` is left on the machine: namespaces, links, its state dir.
std::string Leftovers(const std::string& run) {
  std::string left;
  for (absl::string_view line : absl::StrSplit(Shell("ip netns list; ip -o link show"), '\n')) {
    if (absl::StrContains(line, run + "-")) absl::StrAppend(&left, line, "\n");
  }
  if (std::filesystem::exists("/run/paceline-netns/" + run)) {
    absl::StrAppend(&left, "/run/paceline-netns/", run, "\n");
  }
  return left;
}

// Whether `pid` runs (a zombie, which its new parent has yet to reap, does not).
bool Alive(pid_t pid) {
  std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  size_t paren = stat.rfind(") ");
  return paren != std::string::npos && stat.substr(paren + 2, 1) != "Z";
}

// Each member: a server on its host's address and its port `p`, a client of every other
// member at the address and port peers.json gives; it writes what it saw to $OUT/<instance>.
constexpr char kMember[] = R"py(
import json, os, socket, sys, threading, time
me = os.environ["PACELINE_INSTANCE_ID"]
address = os.environ["PACELINE_HOST_ADDRESS"]
peers = json.load(open(os.environ["PACELINE_PEERS_FILE"]))
others = {i: p for i, p in peers.items() if i != me}
server = socket.socket()
server.bind((address, int(os.environ["PACELINE_PORT_P"])))
server.listen(16)
clients = []
def serve():
    for _ in others:
        conn, (peer_address, _) = server.accept()
        who = conn.recv(64).decode()
        conn.sendall(json.dumps({"instance": me, "address": address}).encode())
        clients.append({"instance": who, "address": peer_address})
        conn.close()
serving = threading.Thread(target=serve, daemon=True)
serving.start()
reached = {}
deadline = time.time() + 60
for i, p in sorted(others.items()):
    while True:
        try:
            s = socket.create_connection((p["address"], p["ports"]["p"]), timeout=5)
            break
        except OSError as e:
            if time.time() > deadline:
                sys.exit(f"member {me} cannot reach member {i} at {p}: {e}")
            time.sleep(0.02)
    s.sendall(me.encode())
    s.shutdown(socket.SHUT_WR)
    reached[i] = json.loads(s.recv(4096).decode())
    s.close()
serving.join(60)
with open(os.path.join(os.environ["OUT"], me), "w") as f:
    json.dump({"address": address, "peers": peers, "reached": reached, "clients": clients}, f)
)py";

TEST(NetnsE2E, FourHostsOfTheirOwnAndAGangThatTalksAcrossThem) {
  absl::Time start = absl::Now();
  TestCluster c({.agents = 4, .netns = true});
  ASSERT_FALSE(c.netns_run().empty());
  std::cerr << "bed of 4 hosts up (network, master, agents connected) in "
            << absl::FormatDuration(absl::Now() - start) << std::endl;
  // Four hosts, each in its namespace with its own address in 198.18.0.0/15.
  Json hosts = c.CliJson({"host", "list"})["hosts"];
  ASSERT_EQ(hosts.size(), 4u) << hosts.dump(1);
  std::set<std::string> addresses, namespaces;
  for (int i = 0; i < 4; ++i) {
    const std::string address = c.host_address(i);
    EXPECT_TRUE(absl::StartsWith(address, "198.18.") || absl::StartsWith(address, "198.19."))
        << address;
    addresses.insert(address);
    namespaces.insert(c.netns_name(i));
    RunResult ip = c.RunOnHost(i, {"ip", "-4", "-o", "addr", "show", "eth0"});
    EXPECT_THAT(ip.out, HasSubstr(" " + address + "/24")) << ip.err;
  }
  EXPECT_EQ(addresses.size(), 4u);
  for (const Json& h : hosts) {
    EXPECT_TRUE(h["connected"].get<bool>()) << h.dump();
    const std::string name = h["name"];
    ASSERT_THAT(name, StartsWith("host-"));
    int i = std::stoi(name.substr(5));
    EXPECT_EQ(h["labels"]["hostname"], name);
    EXPECT_EQ(h["labels"]["netns"], c.netns_name(i)) << h.dump();
    EXPECT_EQ(h["labels"]["address"], c.host_address(i)) << h.dump();
    EXPECT_EQ(h["address"], c.host_address(i)) << "host list shows the agent's --address";
    namespaces.erase(h["labels"]["netns"].get<std::string>());
  }
  EXPECT_TRUE(namespaces.empty()) << "every namespace has its host";
  // The table has the address of each host in its ADDRESS column, on the host's row.
  const std::string table = c.Cli({"host", "list"}).out;
  EXPECT_THAT(table, HasSubstr("ADDRESS")) << table;
  for (int i = 0; i < 4; ++i) {
    EXPECT_THAT(table,
                ::testing::ContainsRegex(absl::StrCat("host-", i, " +", c.host_address(i), " ")))
        << table;
  }

  CreatePool(c);
  const std::string out = OutDir(c);
  const std::string member = c.WriteFile("member.py", kMember);
  uint64_t job = c.CreateJob("/e2e", absl::StrCat(R"(
name: across
instances: 4
sla: {min_running_instances: 4}
task:
  command: "python3 )",
                                                  member, R"("
  ports: [p]
  env: {OUT: )",
                                                  out, R"(}
  resources: {cpu: 0.5, memory: 64Mi}
  constraints: [{max_per_host: 1}]
)"));
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(c.WaitForJob(
      job, [](const Json& j) { return j["state"] == "SUCCEEDED" || j["state"] == "FAILED"; },
      absl::Seconds(120)));
  Json tasks = c.CliJson({"task", "list", std::to_string(job)})["tasks"];
  ASSERT_EQ(tasks.size(), 4u);
  std::map<std::string, std::string> host_of;  // instance -> host name
  for (const Json& t : tasks) {
    EXPECT_EQ(t["state"], "SUCCEEDED") << t.dump();
    host_of[std::to_string(t["instance"].get<uint32_t>())] = t["host"];
  }
  std::set<std::string> used;
  for (const auto& [instance, host] : host_of) used.insert(host);
  EXPECT_EQ(used.size(), 4u) << "one member per host";

  for (const auto& [instance, host] : host_of) {
    const std::string mine = c.host_address(std::stoi(host.substr(5)));
    Json seen = Json::parse(ReadFile(out + "/" + instance), nullptr, false);
    ASSERT_FALSE(seen.is_discarded()) << "member " << instance << " wrote nothing";
    // Its host's address, in its environment and in every member's peers.json (as the master
    // saw the agent connect).
    EXPECT_EQ(seen["address"], mine);
    ASSERT_EQ(seen["peers"].size(), 4u) << seen.dump();
    for (const auto& [other, other_host] : host_of) {
      EXPECT_EQ(seen["peers"][other]["host"], other_host);
      EXPECT_EQ(seen["peers"][other]["address"], c.host_address(std::stoi(other_host.substr(5))))
          << seen.dump();
    }
    // It reached the three others at their addresses, and the three others reached it, each
    // from its own host's address.
    ASSERT_EQ(seen["reached"].size(), 3u) << seen.dump();
    for (const auto& [other, answer] : seen["reached"].items()) {
      EXPECT_EQ(answer["instance"], other);
      EXPECT_EQ(answer["address"], seen["peers"][other]["address"]);
    }
    ASSERT_EQ(seen["clients"].size(), 3u) << seen.dump();
    for (const Json& client : seen["clients"]) {
      const std::string from = client["instance"];
      EXPECT_NE(from, instance);
      EXPECT_EQ(client["address"], seen["peers"][from]["address"]) << seen.dump();
      EXPECT_NE(client["address"], mine);
    }
  }
}

TEST(NetnsE2E, AnAgentKilledInItsNamespaceIsLostAndItsTaskRunsOnAnotherHost) {
  TestCluster c({.agents = 3, .host_timeout = "3s", .netns = true});
  ASSERT_FALSE(c.netns_run().empty());
  CreatePool(c);
  const std::string out = OutDir(c);
  uint64_t job = c.CreateJob("/e2e", absl::StrCat(R"(
name: movers
instances: 2
task:
  command: 'echo "$PACELINE_RUN_ID $PACELINE_HOST_ADDRESS" >> $OUT/$PACELINE_INSTANCE_ID; exec sleep 600'
  env: {OUT: )",
                                                  out, R"(}
  resources: {cpu: 0.5, memory: 16Mi}
  constraints: [{max_per_host: 1}]
)"));
  ASSERT_TRUE(c.WaitForJob(
      job, [](const Json& j) { return j["task_counts"].value("RUNNING", 0) == 2; },
      absl::Seconds(60)));
  Json before = c.CliJson({"task", "get", absl::StrCat(job, "/0")})["task"];
  const std::string victim = before["host"];
  const int v = std::stoi(victim.substr(5));
  // The agent dies inside its namespace; its task is left running there, as on a host cut off.
  c.agent(v).Signal(SIGKILL);
  ASSERT_TRUE(c.agent(v).WaitExit(absl::Seconds(10)).has_value());

  Json moved;
  ASSERT_TRUE(WaitFor(
      [&] {
        moved = c.CliJson({"task", "get", absl::StrCat(job, "/0")})["task"];
        return moved["state"] == "RUNNING" && moved["host"] != victim;
      },
      absl::Seconds(40)));
  const std::string moved_to = moved["host"];
  Json events = c.CliJson({"task", "events", absl::StrCat(job, "/0")})["events"];
  bool lost = false;
  for (const Json& e : events) lost |= e["state"] == "LOST" && e["host"] == victim;
  EXPECT_TRUE(lost) << events.dump(1);
  // The new run is on another host, in its namespace, at its address.
  const std::string moved_address = c.host_address(std::stoi(moved_to.substr(5)));
  EXPECT_EQ(moved["address"], moved_address) << "the master sees the new host's address";
  ASSERT_TRUE(
      WaitFor([&] { return absl::StrContains(ReadFile(out + "/0"), " " + moved_address + "\n"); },
              absl::Seconds(20)))
      << ReadFile(out + "/0");
  std::vector<std::string> runs = absl::StrSplit(ReadFile(out + "/0"), '\n', absl::SkipEmpty());
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_THAT(runs[0], HasSubstr(" " + c.host_address(v)));
  EXPECT_NE(moved_address, c.host_address(v));
}

TEST(NetnsE2E, NothingOfTheBedOutlivesIt) {
  std::string run;
  std::vector<pid_t> pids;
  {
    TestCluster c({.agents = 2, .host_timeout = "3s", .netns = true});
    ASSERT_FALSE(c.netns_run().empty());
    run = c.netns_run();
    CreatePool(c);
    uint64_t job = c.CreateJob("/e2e", R"(
name: stayers
instances: 2
task:
  command: "sleep 600"
  resources: {cpu: 0.5, memory: 16Mi}
  constraints: [{max_per_host: 1}]
)");
    ASSERT_TRUE(c.WaitForJob(
        job, [](const Json& j) { return j["task_counts"].value("RUNNING", 0) == 2; },
        absl::Seconds(60)));
    pids = {c.master().pid(), c.agent(0).pid(), c.agent(1).pid()};
    // Agent 1 dies and leaves its task behind in its namespace: down finds it there.
    c.agent(1).Signal(SIGKILL);
    ASSERT_TRUE(c.agent(1).WaitExit(absl::Seconds(10)).has_value());
    for (absl::string_view p :
         absl::StrSplit(Shell("ip netns pids " + c.netns_name(1)), '\n', absl::SkipEmpty())) {
      pids.push_back(std::stoi(std::string(p)));
    }
    ASSERT_GT(pids.size(), 3u) << "the task runs on in namespace " << c.netns_name(1);
    EXPECT_EQ(Leftovers(run).empty(), false);
  }
  EXPECT_EQ(Leftovers(run), "");
  for (pid_t pid : pids) EXPECT_FALSE(Alive(pid)) << "pid " << pid;
}

TEST(NetnsE2E, AnAgentRefusesAnAddressThatIsNotOne) {
  RunResult r = RunPaceline({"agent", "--master", "127.0.0.1:1", "--address", "198.18.0.300"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("--address: '198.18.0.300' is not an IPv4 or IPv6 address"));
}

// Off the bed too: a host's address is the one its agent was given (--address), else the one
// its agent connects from.
TEST(HostAddressE2E, TheAgentsAddressElseWhereItConnectsFrom) {
  {
    TestCluster c({.agents = 1, .agent_args = {"--address", "192.0.2.7"}});
    ASSERT_TRUE(c.WaitForHosts(1));
    Json hosts = c.CliJson({"host", "list"})["hosts"];
    ASSERT_EQ(hosts.size(), 1u);
    EXPECT_EQ(hosts[0]["address"], "192.0.2.7") << hosts.dump();
  }
  TestCluster c({.agents = 1});
  ASSERT_TRUE(c.WaitForHosts(1));
  Json hosts = c.CliJson({"host", "list"})["hosts"];
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0]["address"], "127.0.0.1") << hosts.dump();
}

TEST(NetnsScript, UpCliStatusDownByTheBook) {
  RunResult up = Script({"up", "2", "--host-timeout", "10"});
  ASSERT_EQ(up.exit_code, 0) << up.out << up.err;
  EXPECT_THAT(up.out, HasSubstr("2 hosts connected in "));
  std::cerr << up.out;
  std::string run = up.out.substr(4, up.out.find(':') - 4);  // "run plnK: ..."
  ASSERT_THAT(run, StartsWith("pln"));
  RunResult hosts = Script({"--run", run, "cli", "host", "list", "-o", "json"});
  ASSERT_EQ(hosts.exit_code, 0) << hosts.err;
  Json h = Json::parse(hosts.out)["hosts"];
  ASSERT_EQ(h.size(), 2u);
  for (const Json& host : h) EXPECT_TRUE(host["connected"].get<bool>()) << host.dump();
  RunResult ip = Script({"--run", run, "exec", "1", "ip", "-4", "-o", "addr", "show", "eth0"});
  EXPECT_THAT(ip.out, HasSubstr(".11/24")) << ip.err;
  RunResult status = Script({"status"});
  EXPECT_THAT(status.out, HasSubstr(run + ": bridge " + run + "-br"));
  EXPECT_THAT(status.out, HasSubstr("host-1  pid"));
  RunResult down = Script({"--run", run, "down"});
  EXPECT_EQ(down.exit_code, 0) << down.out << down.err;
  EXPECT_EQ(Leftovers(run), "");
}

TEST(NetnsScript, ARunWhoseOwnerDiedIsTornDownByTheNext) {
  Process owner = Process::Start({"600"}, {.program = "sleep"});
  RunResult up = Script({"net-up", "1", "--owner", std::to_string(owner.pid())});
  ASSERT_EQ(up.exit_code, 0) << up.err;
  std::string run = up.out.substr(up.out.find("RUN_NAME=") + 9);
  run = run.substr(0, run.find('\n'));
  EXPECT_NE(Leftovers(run), "");
  owner.Signal(SIGKILL);
  ASSERT_TRUE(owner.WaitExit(absl::Seconds(10)).has_value());
  RunResult gc = Script({"gc"});  // (or another run's setup, at the same time)
  EXPECT_EQ(gc.exit_code, 0) << gc.err;
  EXPECT_EQ(Leftovers(run), "");
}

}  // namespace
}  // namespace paceline::e2e
