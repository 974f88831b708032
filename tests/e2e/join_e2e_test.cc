// End to end: a host joins with a bootstrap token (docs/operations.md "Joining hosts"). The
// admin makes a join token, which prints the CA's hash; `paceline agent join` fetches the CA,
// checks that hash, sends a CSR with the token and stores the certificate, its key and an agent
// token, with which `paceline agent` connects and runs a task. A token expired, used twice (also
// twice at once) or given with the wrong CA hash is refused and writes nothing, and the master
// audits the refusals. `paceline host revoke-cert` cuts the agent off at once: it is refused
// from then on (also after a master restart) and its host is lost.

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kPool[] = "resources:\n  cpu: {reservation: 1, limit: 2}\n";

struct JoinToken {
  std::string token;
  std::string ca_hash;
  std::string id;
};

class JoinE2E : public ::testing::Test {
 protected:
  JoinE2E() : JoinE2E(ClusterOptions{.agents = 0, .host_timeout = "3s", .tls = true}) {}
  explicit JoinE2E(ClusterOptions options) : c_(std::move(options)) {}

  // A join token made with `token create --role agent --join ...`.
  JoinToken MakeJoinToken(std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"token", "create", "--role", "agent", "--join"};
    args.insert(args.end(), more.begin(), more.end());
    RunResult r = c_.Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    JoinToken out;
    for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
      if (out.token.empty()) out.token = std::string(line);
      if (absl::ConsumePrefix(&line, "CA hash: ")) out.ca_hash = std::string(line);
    }
    out.id = out.token.substr(4, 16);  // plt_<id>_<secret>
    EXPECT_THAT(out.ca_hash, ::testing::StartsWith("sha256:")) << r.out;
    return out;
  }

  RunResult Join(const JoinToken& t, const std::string& name, const std::string& dir,
                 const std::string& ca_hash = "") {
    return RunPaceline({"agent", "join", c_.master_address(0), "--token", t.token, "--ca-hash",
                        ca_hash.empty() ? t.ca_hash : ca_hash, "--name", name, "--dir", dir});
  }

  std::unique_ptr<Process> StartJoinedAgent(const std::string& name, const std::string& dir,
                                            std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"agent",
                                     "--master",
                                     c_.master_address(0),
                                     "--name",
                                     name,
                                     "--work-dir",
                                     c_.dir() + "/work-" + name,
                                     "--ports",
                                     "33600-33699",
                                     "--cpu",
                                     "1",
                                     "--memory",
                                     "1Gi",
                                     "--ca",
                                     dir + "/ca.pem",
                                     "--cert",
                                     dir + "/agent.pem",
                                     "--key",
                                     dir + "/agent.key",
                                     "--token-file",
                                     dir + "/agent-token"};
    args.insert(args.end(), more.begin(), more.end());
    return std::make_unique<Process>(Process::Start(args, {.cwd = c_.dir()}));
  }

  std::string HostState(const std::string& name) {
    const Json hosts = c_.CliJson({"host", "list"});
    for (const Json& h : hosts["hosts"]) {
      if (h["name"] == name) return h.value("state", "");
    }
    return "";
  }

  // The outcomes of the audit log's JoinHost records, newest first.
  std::vector<std::string> JoinOutcomes() {
    std::vector<std::string> out;
    const Json audit = c_.CliJson({"audit", "list"});
    for (const Json& e : audit["entries"]) {
      if (e["action"] == "AccessService.JoinHost") out.push_back(e["outcome"]);
    }
    return out;
  }

  TestCluster c_;
};

// Certificates for joining hosts valid 15 s: their agents renew them after 10.
class ShortCertificatesE2E : public JoinE2E {
 protected:
  ShortCertificatesE2E()
      : JoinE2E(ClusterOptions{.agents = 0,
                               .host_timeout = "3s",
                               .master_args = {"--host-cert-validity", "15s"},
                               .tls = true}) {}

  // The port the agent printed that it serves its /metrics on ("" until it did).
  static std::string MetricsPort(Process& agent) {
    const std::string out = agent.Output();
    const std::string mark = "serves https://127.0.0.1:";
    const size_t at = out.rfind(mark);
    if (at == std::string::npos) return "";
    const size_t end = out.find('/', at + mark.size());
    return out.substr(at + mark.size(), end - at - mark.size());
  }

  // The end of validity /metrics shows for `host`'s agent (0: none shown).
  int64_t CertificateEndOnMetrics(const std::string& host) {
    const std::string prefix =
        "paceline_agent_certificate_not_after_timestamp_seconds{host=\"" + host + "\"} ";
    const std::string text = c_.HttpGet("/metrics");
    const size_t at = text.find(prefix);
    if (at == std::string::npos) return 0;
    return std::stoll(text.substr(at + prefix.size()));
  }
};

TEST_F(JoinE2E, AHostJoinsRunsATaskAndIsCutOffWhenItsCertificateIsRevoked) {
  const std::string name = "joined-" + std::to_string(::getpid());
  const std::string dir = c_.dir() + "/joined";
  JoinToken t = MakeJoinToken({"--user", name, "--ttl", "10m"});
  // The CA hash printed is the one of the master's CA file.
  RunResult joined = Join(t, name, dir);
  ASSERT_EQ(joined.exit_code, 0) << joined.err;
  EXPECT_THAT(joined.out, HasSubstr("host " + name + " joined"));
  EXPECT_EQ(ReadFile(dir + "/ca.pem"), ReadFile(c_.ca_file()));
  struct stat key {};
  ASSERT_EQ(::stat((dir + "/agent.key").c_str(), &key), 0);
  EXPECT_EQ(key.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((dir + "/agent-token").c_str(), &key), 0);
  EXPECT_EQ(key.st_mode & 0777, 0600u);
  // The join token is spent: listed as revoked, its secret nowhere.
  Json tokens = c_.CliJson({"token", "list"})["tokens"];
  bool listed = false;
  for (const Json& tok : tokens) {
    if (tok["id"] == t.id) {
      listed = true;
      EXPECT_EQ(tok["role"], "join");
      EXPECT_EQ(tok["state"], "REVOKED");
    }
  }
  EXPECT_TRUE(listed) << tokens.dump(1);
  EXPECT_EQ(tokens.dump().find(t.token.substr(21)), std::string::npos);

  // The joined agent connects with what join stored, and runs a task.
  std::unique_ptr<Process> agent = StartJoinedAgent(name, dir);
  ASSERT_TRUE(c_.WaitForHosts(1)) << agent->Output();
  ASSERT_EQ(c_.Cli({"pool", "create", "/j", "-f", c_.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  const uint64_t done = c_.CreateJob("/j",
                                     "name: once\ninstances: 1\ntask:\n  command: \"echo joined\"\n"
                                     "  resources: {cpu: 0.1, memory: 16Mi}\n");
  EXPECT_TRUE(c_.WaitForJob(
      done, [](const Json& j) { return j["state"] == "SUCCEEDED"; }, absl::Seconds(60)))
      << agent->Output();
  const uint64_t running =
      c_.CreateJob("/j",
                   "name: long\ninstances: 1\ntask:\n  command: \"sleep 600\"\n"
                   "  resources: {cpu: 0.1, memory: 16Mi}\n");
  ASSERT_TRUE(c_.WaitForJob(
      running,
      [](const Json& j) {
        return j.contains("task_counts") && j["task_counts"].value("RUNNING", 0) == 1;
      },
      absl::Seconds(60)))
      << agent->Output();

  // Revoked: the live stream ends at once, the agent is refused when it comes back, the host is
  // lost and its task with it.
  RunResult revoked = c_.Cli({"host", "revoke-cert", name});
  ASSERT_EQ(revoked.exit_code, 0) << revoked.err;
  EXPECT_THAT(revoked.out, HasSubstr("certificates revoked"));
  EXPECT_TRUE(WaitFor(
      [&] {
        return agent->Output().find("was revoked") != std::string::npos ||
               agent->Output().find("revoked at") != std::string::npos;
      },
      absl::Seconds(20)))
      << agent->Output();
  EXPECT_TRUE(WaitFor([&] { return HostState(name) == "LOST"; }, absl::Seconds(30)))
      << c_.CliJson({"host", "list"}).dump(1);
  EXPECT_TRUE(WaitFor(
      [&] {
        Json task = c_.CliJson({"task", "get", absl::StrCat(running, "/0")})["task"];
        return task.value("state", "") != "RUNNING";
      },
      absl::Seconds(30)));
  // Even with the bootstrap agent token, the revoked certificate is refused; also after the
  // master restarts (the revocation is in the store).
  agent->Signal(SIGKILL);
  agent->WaitExit(absl::Seconds(10));
  c_.master().Signal(SIGTERM);
  c_.master().WaitExit(absl::Seconds(60));
  c_.StartMaster();
  Process again =
      Process::Start({"agent", "--master", c_.master_address(0), "--name", name, "--work-dir",
                      c_.dir() + "/work-" + name, "--ports", "33600-33699", "--ca", dir + "/ca.pem",
                      "--cert", dir + "/agent.pem", "--key", dir + "/agent.key", "--token-file",
                      c_.dir() + "/master/agent-token"},
                     {.cwd = c_.dir()});
  EXPECT_TRUE(WaitFor([&] { return again.Output().find("was revoked") != std::string::npos; },
                      absl::Seconds(30)))
      << again.Output();
  EXPECT_NE(HostState(name), "UP");
  again.Signal(SIGKILL);
  bool audited = false;
  const Json audit = c_.CliJson({"audit", "list"});
  for (const Json& e : audit["entries"]) {
    audited =
        audited || (e["action"] == "AccessService.RevokeHostCertificate" && e["outcome"] == "OK");
  }
  EXPECT_TRUE(audited);
}

TEST_F(JoinE2E, ExpiredReusedAndWrongHashAreRefusedAndWriteNothing) {
  // The wrong CA hash: refused before the token is sent, which stays usable.
  JoinToken t = MakeJoinToken();
  const std::string wrong_dir = c_.dir() + "/wrong-hash";
  RunResult wrong = Join(t, "h-wrong", wrong_dir, "sha256:" + std::string(64, '0'));
  EXPECT_NE(wrong.exit_code, 0);
  EXPECT_THAT(wrong.err, HasSubstr("--ca-hash: the master at"));
  EXPECT_THAT(wrong.err, HasSubstr("nothing written"));
  EXPECT_FALSE(fs::exists(wrong_dir));
  RunResult malformed = Join(t, "h-wrong", wrong_dir, "md5:abc");
  EXPECT_THAT(malformed.err, HasSubstr("is not sha256: and 64 hex digits"));
  EXPECT_FALSE(fs::exists(wrong_dir));

  // Used once (`--user *`: any host), then refused.
  const std::string first = c_.dir() + "/first";
  ASSERT_EQ(Join(t, "h-first", first).exit_code, 0);
  const std::string second = c_.dir() + "/second";
  RunResult reused = Join(t, "h-second", second);
  EXPECT_NE(reused.exit_code, 0);
  EXPECT_THAT(reused.err, HasSubstr("revoked"));
  EXPECT_THAT(reused.err, HasSubstr("a join token serves once"));
  EXPECT_FALSE(fs::exists(second));

  // Expired.
  JoinToken brief = MakeJoinToken({"--ttl", "1s"});
  absl::SleepFor(absl::Milliseconds(1500));
  const std::string late = c_.dir() + "/late";
  RunResult expired = Join(brief, "h-late", late);
  EXPECT_NE(expired.exit_code, 0);
  EXPECT_THAT(expired.err, HasSubstr("expired"));
  EXPECT_FALSE(fs::exists(late));

  // A join token for one host does not join another, and is no API token.
  JoinToken only = MakeJoinToken({"--user", "h-only"});
  RunResult other = Join(only, "h-other", c_.dir() + "/other");
  EXPECT_NE(other.exit_code, 0);
  EXPECT_THAT(other.err, HasSubstr("is for host h-only"));
  RunResult as_api = RunPaceline({"--addr", c_.master_address(0), "--token", only.token, "--ca",
                                  c_.ca_file(), "pool", "list"});
  EXPECT_NE(as_api.exit_code, 0);
  EXPECT_THAT(as_api.err, HasSubstr("is a join token"));

  // The master audited each refusal it saw (the wrong hash never reached it).
  std::vector<std::string> outcomes = JoinOutcomes();
  EXPECT_EQ(std::count(outcomes.begin(), outcomes.end(), "OK"), 1)
      << ::testing::PrintToString(outcomes);
  EXPECT_EQ(std::count(outcomes.begin(), outcomes.end(), "UNAUTHENTICATED"), 2)
      << ::testing::PrintToString(outcomes);
  EXPECT_EQ(std::count(outcomes.begin(), outcomes.end(), "PERMISSION_DENIED"), 1)
      << ::testing::PrintToString(outcomes);
}

TEST_F(JoinE2E, RevokingCutsOffAnAgentWhateverTokenItConnectedWith) {
  const std::string name = "shared-" + std::to_string(::getpid());
  const std::string dir = c_.dir() + "/shared";
  ASSERT_EQ(Join(MakeJoinToken({"--user", name}), name, dir).exit_code, 0);
  // The joined certificate with the agents' bootstrap token, not the token the join made.
  Process agent =
      Process::Start({"agent", "--master", c_.master_address(0), "--name", name, "--work-dir",
                      c_.dir() + "/work-" + name, "--ports", "33700-33799", "--ca", dir + "/ca.pem",
                      "--cert", dir + "/agent.pem", "--key", dir + "/agent.key", "--token-file",
                      c_.dir() + "/master/agent-token"},
                     {.cwd = c_.dir()});
  ASSERT_TRUE(c_.WaitForHosts(1)) << agent.Output();
  ASSERT_EQ(c_.Cli({"host", "revoke-cert", name}).exit_code, 0);
  EXPECT_TRUE(WaitFor([&] { return agent.Output().find("was revoked") != std::string::npos; },
                      absl::Seconds(20)))
      << agent.Output();
  EXPECT_TRUE(WaitFor([&] { return HostState(name) == "LOST"; }, absl::Seconds(30)));
  // Revoking again keeps the first revocation and says which certificates it covers.
  RunResult again = c_.Cli({"host", "revoke-cert", name});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  RunResult unknown = c_.Cli({"host", "revoke-cert", "never-joined"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_THAT(unknown.err, HasSubstr("holds no certificate issued at a join"));
}

TEST_F(JoinE2E, AJoinedHostRenewsItsCertificateAndTheAgentComesBackWithIt) {
  const std::string name = "renewed-" + std::to_string(::getpid());
  const std::string dir = c_.dir() + "/renewed";
  ASSERT_EQ(Join(MakeJoinToken({"--user", name}), name, dir).exit_code, 0);
  const std::string old_cert = ReadFile(dir + "/agent.pem");
  const std::string old_key = ReadFile(dir + "/agent.key");
  // Not due yet (a year's certificate): --if-due changes nothing.
  RunResult early = RunPaceline({"agent", "renew", c_.master_address(0), "--dir", dir, "--if-due"});
  ASSERT_EQ(early.exit_code, 0) << early.err;
  EXPECT_THAT(early.out, HasSubstr("renewed from"));
  EXPECT_EQ(ReadFile(dir + "/agent.pem"), old_cert);
  // Renewed: a new key and certificate, with the old certificate and its agent token.
  RunResult renewed = RunPaceline({"agent", "renew", c_.master_address(0), "--dir", dir});
  ASSERT_EQ(renewed.exit_code, 0) << renewed.err;
  EXPECT_THAT(renewed.out, HasSubstr("certificate renewed"));
  EXPECT_NE(ReadFile(dir + "/agent.pem"), old_cert);
  EXPECT_NE(ReadFile(dir + "/agent.key"), old_key);
  std::unique_ptr<Process> agent = StartJoinedAgent(name, dir);
  ASSERT_TRUE(c_.WaitForHosts(1)) << agent->Output();
  // Renewing needs the certificate the agent token names: the old one no longer matches.
  const std::string stale = c_.dir() + "/stale";
  fs::create_directories(stale);
  fs::copy_file(dir + "/ca.pem", stale + "/ca.pem");
  fs::copy_file(dir + "/agent-token", stale + "/agent-token");
  std::ofstream(stale + "/agent.pem") << old_cert;
  std::ofstream(stale + "/agent.key") << old_key;
  RunResult mismatched = RunPaceline({"agent", "renew", c_.master_address(0), "--dir", stale});
  EXPECT_NE(mismatched.exit_code, 0);
  EXPECT_THAT(mismatched.err, HasSubstr("needs the certificate it was made with"));
  EXPECT_EQ(ReadFile(stale + "/agent.pem"), old_cert);
  // Revoking the host covers both certificates.
  RunResult revoked = c_.Cli({"host", "revoke-cert", name});
  ASSERT_EQ(revoked.exit_code, 0) << revoked.err;
  EXPECT_TRUE(WaitFor([&] { return agent->Output().find("was revoked") != std::string::npos; },
                      absl::Seconds(20)))
      << agent->Output();
}

// The agent renews its own certificate after two thirds of its validity, presents the new one at
// once and again with each renewal, long after the first certificate ended, and its task runs on
// untouched: the same run, never restarted, the host never lost.
TEST_F(ShortCertificatesE2E, AnAgentRenewsItsOwnCertificateAgainAndAgainAndKeepsItsTask) {
  const std::string name = "rotating-" + std::to_string(::getpid());
  const std::string dir = c_.dir() + "/rotating";
  ASSERT_EQ(Join(MakeJoinToken({"--user", name}), name, dir).exit_code, 0);
  const absl::Time joined = absl::Now();
  const std::string first = ReadFile(dir + "/agent.pem");
  std::unique_ptr<Process> agent =
      StartJoinedAgent(name, dir, {"--cert-check", "1s", "--metrics-listen", "127.0.0.1:0"});
  ASSERT_TRUE(c_.WaitForHosts(1)) << agent->Output();
  auto count = [&](const std::string& what) {
    size_t n = 0;
    const std::string out = agent->Output();
    for (size_t at = out.find(what); at != std::string::npos; at = out.find(what, at + 1)) ++n;
    return n;
  };
  // The master shows the end of the certificate the agent connected with.
  int64_t first_end = 0;
  ASSERT_TRUE(
      WaitFor([&] { return (first_end = CertificateEndOnMetrics(name)) > 0; }, absl::Seconds(10)));
  EXPECT_GT(first_end, absl::ToUnixSeconds(joined));
  if (count("renewed its certificate") == 0) {  // not yet renewed (a slow machine may have)
    EXPECT_LE(first_end, absl::ToUnixSeconds(joined) + 16);
  }
  ASSERT_EQ(c_.Cli({"pool", "create", "/j", "-f", c_.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  const uint64_t job = c_.CreateJob("/j",
                                    "name: long\ninstances: 1\ntask:\n  command: \"sleep 600\"\n"
                                    "  resources: {cpu: 0.1, memory: 16Mi}\n");
  Json task;
  ASSERT_TRUE(WaitFor(
      [&] {
        task = c_.CliJson({"task", "get", absl::StrCat(job, "/0")})["task"];
        return task.value("state", "") == "RUNNING";
      },
      absl::Seconds(60)))
      << agent->Output();

  // Two renewals, the second made with the first's certificate and agent token; each presented.
  ASSERT_TRUE(WaitFor([&] { return count("renewed its certificate") >= 2; }, absl::Seconds(60)))
      << agent->Output();
  EXPECT_GE(count("presents certificate"), 2u) << agent->Output();
  EXPECT_EQ(agent->Output().find("could not renew"), std::string::npos) << agent->Output();
  EXPECT_NE(ReadFile(dir + "/agent.pem"), first);
  // The first certificate has ended; the master shows the one presented now.
  ASSERT_GT(absl::Now(), joined + absl::Seconds(16));
  int64_t end = 0;
  EXPECT_TRUE(WaitFor(
      [&] {
        end = CertificateEndOnMetrics(name);
        return end > first_end;
      },
      absl::Seconds(20)))
      << end << " " << first_end;
  EXPECT_EQ(HostState(name), "UP");
  // Its /metrics is served with the certificate it presents now.
  ASSERT_EQ(RunPaceline({"cert", "client", "prometheus", "--tls-dir", c_.dir() + "/master/tls",
                         "--out", c_.dir() + "/clients"})
                .exit_code,
            0);
  auto serial = [&](const std::string& command) {
    RunResult r = RunProgram({"-c", command + " | openssl x509 -noout -serial"}, {.program = "sh"});
    return r.out;
  };
  const std::string port = MetricsPort(*agent);
  ASSERT_FALSE(port.empty()) << agent->Output();
  std::string served;
  EXPECT_TRUE(WaitFor(
      [&] {
        served = serial(absl::StrCat("openssl s_client -connect 127.0.0.1:", port, " -cert ",
                                     c_.dir(), "/clients/prometheus.pem -key ", c_.dir(),
                                     "/clients/prometheus.key </dev/null 2>/dev/null"));
        return absl::StartsWith(served, "serial=") && served == serial("cat " + dir + "/agent.pem");
      },
      absl::Seconds(10)))
      << served << " vs " << serial("cat " + dir + "/agent.pem");
  const Json now = c_.CliJson({"task", "get", absl::StrCat(job, "/0")})["task"];
  EXPECT_EQ(now.value("state", ""), "RUNNING");
  EXPECT_EQ(now.value("run", 0u), task.value("run", 0u));
  EXPECT_EQ(now.value("host", ""), name);
  // Every renewal is audited.
  int renewals = 0;
  const Json audit = c_.CliJson({"audit", "list"});
  for (const Json& e : audit["entries"]) {
    if (e["action"] == "AccessService.JoinHost" && e["outcome"] == "OK") ++renewals;
  }
  EXPECT_GE(renewals, 3) << audit.dump(1);  // the join and two renewals
  // The agent tokens of renewed certificates end with them, at most a day after the renewal:
  // the first (the join's) has ended with the first certificate.
  const Json listed = c_.CliJson({"token", "list"});
  std::vector<Json> tokens;
  for (const Json& tok : listed["tokens"]) {
    if (tok["role"] == "agent" && tok["user"] == name) tokens.push_back(tok);
  }
  ASSERT_GE(tokens.size(), 3u) << listed.dump(1);
  std::sort(tokens.begin(), tokens.end(), [](const Json& a, const Json& b) {
    return JsonInt(a["created_at_unix_ms"]) < JsonInt(b["created_at_unix_ms"]);
  });
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    const int64_t made = JsonInt(tokens[i]["created_at_unix_ms"]);
    const int64_t ends = JsonInt(tokens[i]["expires_at_unix_ms"]);
    EXPECT_GT(ends, made) << tokens[i].dump();
    EXPECT_LE(ends, made + 24 * 3600 * 1000) << tokens[i].dump();
  }
  EXPECT_LE(JsonInt(tokens[0]["expires_at_unix_ms"]), first_end * 1000) << tokens[0].dump();
  EXPECT_EQ(tokens[0]["state"], "EXPIRED") << tokens[0].dump();
}

TEST_F(JoinE2E, JoinWithTheAgentConfigFileStoresWhereTheAgentReads) {
  const std::string name = "configured-" + std::to_string(::getpid());
  const std::string etc = c_.dir() + "/etc";
  const std::string config = c_.WriteFile(
      "agent.yaml",
      absl::StrCat("master: ", c_.master_address(0), "\nname: ", name, "\nca: ", etc,
                   "/tls/ca.pem\ncert: ", etc, "/tls/agent.pem\nkey: ", etc,
                   "/tls/agent.key\ntoken-file: ", etc, "/agent-token\nwork-dir: ", c_.dir(),
                   "/work-", name, "\nports: 33800-33899\ncpu: \"1\"\nmemory: 1Gi\n"));
  JoinToken t = MakeJoinToken({"--user", name});
  RunResult joined = RunPaceline(
      {"agent", "join", "--config", config, "--token", t.token, "--ca-hash", t.ca_hash});
  ASSERT_EQ(joined.exit_code, 0) << joined.err;
  EXPECT_THAT(joined.out, HasSubstr("paceline agent --config " + config));
  EXPECT_TRUE(fs::exists(etc + "/tls/agent.key"));
  EXPECT_TRUE(fs::exists(etc + "/agent-token"));
  Process agent = Process::Start({"agent", "--config", config}, {.cwd = c_.dir()});
  EXPECT_TRUE(c_.WaitForHosts(1)) << agent.Output();
}

TEST_F(JoinE2E, ATokenUsedTwiceAtOnceJoinsOneHost) {
  JoinToken t = MakeJoinToken();
  std::vector<std::unique_ptr<Process>> joins;
  for (int i = 0; i < 4; ++i) {
    joins.push_back(std::make_unique<Process>(Process::Start(
        {"agent", "join", c_.master_address(0), "--token", t.token, "--ca-hash", t.ca_hash,
         "--name", absl::StrCat("racer-", i), "--dir", absl::StrCat(c_.dir(), "/racer-", i)},
        {.cwd = c_.dir()})));
  }
  int ok = 0;
  for (int i = 0; i < 4; ++i) {
    const std::optional<int> code = joins[i]->WaitExit(absl::Seconds(60));
    ASSERT_TRUE(code.has_value()) << joins[i]->Output();
    const bool wrote = fs::exists(absl::StrCat(c_.dir(), "/racer-", i, "/agent.pem"));
    EXPECT_EQ(*code == 0, wrote) << joins[i]->Output();
    if (*code != 0) {
      EXPECT_THAT(joins[i]->Output(), HasSubstr("revoked")) << joins[i]->Output();
    }
    ok += *code == 0 ? 1 : 0;
  }
  EXPECT_EQ(ok, 1);
}

}  // namespace
}  // namespace paceline::e2e
