// End to end: an agent's own /metrics and a master's --metrics-listen (docs/operations.md
// "Monitoring"), scraped as Prometheus does, with curl: HTTPS verified against the cluster's CA
// (by the agent's host name: the agent's certificate is a server certificate for it too), and
// mutual: a client certificate of the cluster's CA named `prometheus` (`paceline cert client`)
// is served, a client without one fails its handshake, and one with another name gets 403.
// What they serve passes `promtool check metrics`, and the agent's follows its runs.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "absl/strings/str_cat.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;

constexpr char kPool[] = "resources:\n  cpu: {reservation: 1, limit: 2}\n";

class AgentMetricsE2E : public ::testing::Test {
 protected:
  // The port the agent printed that it serves /metrics on (0 until it did).
  int MetricsPort() { return PrintedPort(c_.agent(0).Output(), "serves "); }
  // The master's, from its start-up lines.
  int MasterMetricsPort() { return PrintedPort(c_.master().Output(), "metrics: "); }
  static int PrintedPort(const std::string& out, const std::string& before) {
    std::smatch m;
    const std::regex served(before + "https://127\\.0\\.0\\.1:([0-9]+)/metrics");
    return std::regex_search(out, m, served) ? std::stoi(m[1]) : 0;
  }

  void MakeClientCertificates() {
    for (const char* name : {"prometheus", "intruder"}) {
      RunResult made = RunPaceline(
          {"cert", "client", name, "--tls-dir", c_.dir() + "/master/tls", "--out", clients_});
      ASSERT_EQ(made.exit_code, 0) << made.err;
    }
  }

  // curl https://HOST:PORT/metrics with `client` (NAME.pem and NAME.key under the clients
  // dir; "" for none); HOST is the agent's name, resolved to 127.0.0.1, by default.
  RunResult Scrape(const std::string& client, int port_number = 0, std::string host = "") {
    if (host.empty()) host = c_.agent_name(0);
    const std::string port = std::to_string(port_number ? port_number : MetricsPort());
    std::vector<std::string> args = {"-sS",
                                     "--max-time",
                                     "10",
                                     "--cacert",
                                     c_.ca_file(),
                                     "--resolve",
                                     host + ":" + port + ":127.0.0.1",
                                     "-w",
                                     "\n%{http_code}"};
    if (!client.empty()) {
      args.insert(args.end(), {"--cert", clients_ + "/" + client + ".pem", "--key",
                               clients_ + "/" + client + ".key"});
    }
    args.push_back("https://" + host + ":" + port + "/metrics");
    return RunProgram(args, {.program = "curl"});
  }

  TestCluster c_{ClusterOptions{.agents = 1,
                                .agent_args = {"--metrics-listen", "127.0.0.1:0"},
                                .master_args = {"--metrics-listen", "127.0.0.1:0"},
                                .tls = true}};
  std::string clients_ = c_.dir() + "/clients";
};

TEST_F(AgentMetricsE2E, AnAgentServesItsMetricsOverMutualTlsToItsNamedClientOnly) {
  ASSERT_TRUE(c_.WaitForHosts(1));
  ASSERT_TRUE(WaitFor([&] { return MetricsPort() > 0; }, absl::Seconds(10)))
      << c_.agent(0).Output();
  MakeClientCertificates();
  ASSERT_EQ(c_.Cli({"pool", "create", "/m", "-f", c_.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  const uint64_t job = c_.CreateJob("/m",
                                    "name: long\ninstances: 1\ntask:\n  command: \"sleep 600\"\n"
                                    "  resources: {cpu: 0.1, memory: 16Mi}\n");
  ASSERT_TRUE(c_.WaitForJob(
      job,
      [](const nlohmann::json& j) {
        return j.contains("task_counts") && j["task_counts"].value("RUNNING", 0) == 1;
      },
      absl::Seconds(60)));

  // Prometheus's certificate: served, and it shows the running task (published each second).
  RunResult scraped;
  EXPECT_TRUE(WaitFor(
      [&] {
        scraped = Scrape("prometheus");
        return scraped.out.find("paceline_agent_runs{state=\"running\"} 1\n") != std::string::npos;
      },
      absl::Seconds(10)))
      << scraped.out << scraped.err;
  EXPECT_EQ(scraped.exit_code, 0) << scraped.err;
  EXPECT_THAT(scraped.out, ::testing::EndsWith("\n200"));
  EXPECT_THAT(scraped.out, HasSubstr("paceline_agent_connected 1\n"));
  EXPECT_THAT(scraped.out,
              HasSubstr(absl::StrCat("paceline_agent_info{host=\"", c_.agent_name(0), "\"")));
  EXPECT_THAT(scraped.out, HasSubstr("paceline_agent_filesystem_avail_bytes "));
  const std::string text = scraped.out.substr(0, scraped.out.rfind('\n') + 1);
  const std::string file = c_.WriteFile("agent.metrics", text);
  RunResult checked = RunProgram({"-c", "promtool check metrics < " + file}, {.program = "sh"});
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err << text;

  // No client certificate: the handshake fails. Another name: 403.
  RunResult none = Scrape("");
  EXPECT_NE(none.exit_code, 0) << none.out;
  EXPECT_THAT(none.out, ::testing::Not(HasSubstr("paceline_agent")));
  RunResult other = Scrape("intruder");
  EXPECT_THAT(other.out, ::testing::EndsWith("\n403"));
  EXPECT_THAT(other.out, HasSubstr("'intruder' is not one of --metrics-client: prometheus"));
}

// The master's own listener for Prometheus: the same metrics as its HTTP listener's /metrics,
// but mutual TLS instead of a token.
TEST_F(AgentMetricsE2E, AMasterServesItsMetricsOverMutualTlsToItsNamedClientOnly) {
  ASSERT_TRUE(c_.WaitForHosts(1));
  const int port = MasterMetricsPort();
  ASSERT_GT(port, 0) << c_.master().Output();
  MakeClientCertificates();
  RunResult scraped;
  EXPECT_TRUE(WaitFor(
      [&] {
        scraped = Scrape("prometheus", port, "127.0.0.1");
        return scraped.out.find("paceline_hosts") != std::string::npos;
      },
      absl::Seconds(10)))
      << scraped.out << scraped.err;
  EXPECT_THAT(scraped.out, ::testing::EndsWith("\n200"));
  EXPECT_THAT(scraped.out, HasSubstr("paceline_master_leader 1\n"));
  const std::string text = scraped.out.substr(0, scraped.out.rfind('\n') + 1);
  const std::string file = c_.WriteFile("master.metrics", text);
  RunResult checked = RunProgram({"-c", "promtool check metrics < " + file}, {.program = "sh"});
  EXPECT_EQ(checked.exit_code, 0) << checked.out << checked.err << text;

  RunResult none = Scrape("", port, "127.0.0.1");
  EXPECT_NE(none.exit_code, 0) << none.out;
  EXPECT_THAT(none.out, ::testing::Not(HasSubstr("paceline_")));
  RunResult other = Scrape("intruder", port, "127.0.0.1");
  EXPECT_THAT(other.out, ::testing::EndsWith("\n403"));
  EXPECT_THAT(other.out, HasSubstr("'intruder' is not one of --metrics-client: prometheus"));
}

}  // namespace
}  // namespace paceline::e2e
