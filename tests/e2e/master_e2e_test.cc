// End to end: the real `paceline` binary — version, the master's /healthz and gRPC API, clean
// stop on SIGINT/SIGTERM, a store that survives restarts, and CLI errors.

#include <httplib.h>
#include <signal.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/e2e/process.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

struct Endpoints {
  std::string grpc, http;
  std::string ca_file;  // the master serves TLS (HTTPS too) with this CA
};

// Starts `paceline <mode>` on free loopback ports with its store in `dir`/data and waits until
// it has written its endpoints file.
Process StartMaster(const std::string& dir, const std::string& mode, Endpoints* ep) {
  Process p = Process::Start({mode, "--data-dir", dir + "/data", "--listen", "127.0.0.1:0",
                              "--http-listen", "127.0.0.1:0"},
                             {.cwd = dir});
  std::string file = dir + "/data/master.json";
  bool ready = WaitFor([&] { return std::filesystem::exists(file); }, absl::Seconds(20));
  EXPECT_TRUE(ready) << p.Output();
  if (ready) {
    auto j = nlohmann::json::parse(ReadFile(file));
    ep->grpc = j["grpc"];
    ep->http = j["http"];
    ep->ca_file = j.value("ca_file", "");
  }
  return p;
}

nlohmann::json GetHealth(const Endpoints& ep, int* status) {
  httplib::Client cli((ep.ca_file.empty() ? "http://" : "https://") + ep.http);
  if (!ep.ca_file.empty()) cli.set_ca_cert_path(ep.ca_file.c_str());
  auto res = cli.Get("/healthz");
  *status = res ? res->status : -1;
  return res ? nlohmann::json::parse(res->body, nullptr, false) : nlohmann::json();
}

TEST(Binary, VersionPrintsVersionAndCommit) {
  RunResult r = RunPaceline({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, MatchesRegex("paceline [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit [0-9a-f]+.*\\)\n"));
}

TEST(Binary, HelpListsEverySubcommand) {
  RunResult r = RunPaceline({"help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* sub : {"master", "agent", "up", "sim", "bench", "pool", "job", "task", "host"}) {
    EXPECT_THAT(r.out, HasSubstr(std::string("  ") + sub + " ")) << sub;
  }
}

TEST(Binary, ApiBenchmarkRunsAgainstItsOwnMasterAndReports) {
  RunResult r = RunPaceline({"bench", "api", "--clients", "4", "--duration", "1s", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["clients"], 4);
  ASSERT_EQ(j["calls"].size(), 3u);
  for (const auto& c : j["calls"]) {
    EXPECT_GT(c["ok"].get<uint64_t>(), 0u) << c.dump();
    EXPECT_EQ(c["errors"], 0) << c.dump();
    EXPECT_GE(c["p99_ms"].get<double>(), c["p50_ms"].get<double>());
  }
  RunResult bad = RunPaceline({"bench", "api", "--clients", "0"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, ::testing::HasSubstr("--clients"));
}

// The scale benchmark on both transports, small: every task runs, the latencies are ordered,
// the store committed, and after the master restart every task is RUNNING again.
TEST(Binary, ScaleBenchmarkRunsEveryTaskOnBothTransportsAndSurvivesARestart) {
  for (const char* transport : {"inproc", "grpc"}) {
    SCOPED_TRACE(transport);
    RunResult r = RunPaceline({"bench", "scale", "--transport", transport, "--hosts", "100",
                               "--tasks", "2000", "--job-mix", "10:0.5,100:0.5", "--clients", "4",
                               "--heartbeat-interval", "1s", "--timeout", "60s", "-o", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    EXPECT_EQ(j["running"], 2000);
    EXPECT_EQ(j["jobs"], 110);  // 100 jobs of 10 and 10 of 100
    EXPECT_EQ(j["submit_errors"], 0);
    EXPECT_GT(j["tasks_per_second"].get<double>(), 0);
    const auto& lat = j["submit_to_running_ms"];
    EXPECT_LE(lat["p50"].get<double>(), lat["p99"].get<double>());
    EXPECT_LE(lat["p99"].get<double>(), lat["max"].get<double>());
    EXPECT_GT(j["store"]["commits"].get<uint64_t>(), 0u);
    EXPECT_GE(j["store"]["batches"].get<uint64_t>(), j["store"]["commits"].get<uint64_t>());
    EXPECT_EQ(j["restart"]["running_after"], 2000);
    EXPECT_EQ(j["fleet"]["launches"], 2000);  // nothing launched twice, across the restart
    EXPECT_GT(j["memory"]["rss_after_bytes"].get<int64_t>(), 0);
    EXPECT_FALSE(j["machine"]["commit"].get<std::string>().empty());
  }
  RunResult bad = RunPaceline({"bench", "scale", "--transport", "carrier-pigeon"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("--transport"));
  RunResult mix = RunPaceline({"bench", "scale", "--job-mix", "10:x"});
  EXPECT_THAT(mix.err, HasSubstr("--job-mix: '10:x'"));
  RunResult big = RunPaceline({"bench", "scale", "--hosts", "1", "--tasks", "100"});
  EXPECT_THAT(big.err, HasSubstr("do not fit"));
  RunResult cpus = RunPaceline({"bench", "scale", "--host-cpus", "0"});
  EXPECT_EQ(cpus.exit_code, 1);
  EXPECT_THAT(cpus.err, HasSubstr("--host-cpus: 0; expected 1 to 1024"));
}

TEST(Binary, UnknownFlagIsUsageError) {
  RunResult r = RunPaceline({"master", "--no-such-flag"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--no-such-flag"));
}

TEST(Binary, BadListenAddressNamesTheFlag) {
  std::string dir = MakeTempDir("pl-e2e");
  RunResult r = RunPaceline({"master", "--data-dir", dir, "--listen", "nohost"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("error: --listen: address 'nohost' has no port"));
  std::filesystem::remove_all(dir);
}

TEST(Binary, ClientCommandWithoutMasterFailsOnStderr) {
  std::string dir = MakeTempDir("pl-e2e");
  RunResult r = RunPaceline({"--addr", "127.0.0.1:1", "--timeout", "1s", "info"}, dir);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, HasSubstr("cannot reach the master at 127.0.0.1:1 (from --addr)"));
  std::filesystem::remove_all(dir);
}

class MasterE2E : public ::testing::TestWithParam<std::string> {};

TEST_P(MasterE2E, ServesHealthAndApiThenStopsCleanly) {
  std::string dir = MakeTempDir("pl-e2e");
  Endpoints ep;
  Process master = StartMaster(dir, GetParam(), &ep);
  ASSERT_FALSE(ep.http.empty());

  int status = 0;
  nlohmann::json health = GetHealth(ep, &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(health["status"], "ok");
  EXPECT_THAT(std::string(health["store"]), HasSubstr("paceline.db"));
  std::string cluster_id = health["cluster_id"];
  EXPECT_EQ(cluster_id.size(), 16u);

  // The CLI finds the master through ./data/master.json when run from the same directory.
  RunResult info = RunPaceline({"info", "-o", "json"}, dir);
  ASSERT_EQ(info.exit_code, 0) << info.err;
  auto j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["address"], ep.grpc);
  EXPECT_EQ(j["cluster_id"], cluster_id);

  RunResult table = RunPaceline({"--addr", ep.grpc, "info"}, dir);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("ADDRESS"));
  EXPECT_THAT(table.out, HasSubstr(cluster_id));

  master.Signal(SIGINT);
  std::optional<int> code = master.WaitExit(absl::Seconds(15));
  ASSERT_TRUE(code.has_value()) << "master did not stop on SIGINT";
  EXPECT_EQ(*code, 0) << master.Output();
  EXPECT_FALSE(std::filesystem::exists(dir + "/data/master.json"));

  // The store survives: a restarted master reports the same cluster id.
  Process again = StartMaster(dir, GetParam(), &ep);
  nlohmann::json health2 = GetHealth(ep, &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(health2["cluster_id"], cluster_id);
  again.Signal(SIGTERM);
  EXPECT_EQ(again.WaitExit(absl::Seconds(15)), 0);
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Modes, MasterE2E, ::testing::Values("master", "up"));

}  // namespace
}  // namespace paceline::e2e
