// End to end: the daemons' config files (docs/operations.md, "Configuration files") with the
// real binary — a master and an agent started from their files on free loopback ports serve and
// register, a flag overrides its key, --print-config shows each value's source and starts
// nothing, and a file with a typo, a wrong type or a bad value makes the binary exit 1 with the
// line and column on stderr, before anything listens or is written.

#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "tests/e2e/process.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

std::string Write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

// A loopback port nothing listens on now: bound to port 0, read, released.
int FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Whether something accepts connections on 127.0.0.1:`port`.
bool Listening(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool connected = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return connected;
}

class ConfigE2E : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir("pl-config-e2e"); }
  void TearDown() override {
    for (Process* p : {agent_.get(), master_.get()}) {
      if (p != nullptr && p->Running()) {
        p->Signal(SIGTERM);
        p->WaitExit(absl::Seconds(15));
      }
    }
    std::filesystem::remove_all(dir_);
  }

  std::string MasterConfig() const {
    return absl::StrCat("# the e2e test's master\n",    // 1
                        "data-dir: ", dir_, "/data\n",  // 2
                        "listen: 127.0.0.1:0\n",        // 3
                        "http-listen: 127.0.0.1:0\n",   // 4
                        "insecure-loopback: true\n",    // 5
                        "cycle: 20ms\n",                // 6
                        "heartbeat-interval: 500ms\n",  // 7
                        "host-timeout: 10s\n");         // 8
  }

  std::string dir_;
  std::unique_ptr<Process> master_, agent_;
};

TEST_F(ConfigE2E, MasterAndAgentStartFromTheirFilesAndFlagsOverrideThem) {
  const std::string master_yaml = Write(dir_ + "/master.yaml", MasterConfig());
  // --print-config: the effective values with their sources, and nothing started or written.
  RunResult printed =
      RunPaceline({"master", "--config", master_yaml, "--cycle", "30ms", "--print-config"}, dir_);
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  EXPECT_THAT(printed.out, HasSubstr("cycle: 30ms"));
  EXPECT_THAT(printed.out, MatchesRegex("(.|\n)*\ncycle: 30ms +# flag\n(.|\n)*"));
  EXPECT_THAT(printed.out, MatchesRegex(absl::StrCat("(.|\n)*\nlisten: 127.0.0.1:0 +# ",
                                                     master_yaml, ":3:9\n(.|\n)*")));
  EXPECT_THAT(printed.out, MatchesRegex("(.|\n)*\nlease: 2.5s +# default\n(.|\n)*"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/data"));

  // The master from its file: a flag overrides one key (the cycle).
  master_ = std::make_unique<Process>(
      Process::Start({"master", "--config", master_yaml, "--cycle", "30ms"}, {.cwd = dir_}));
  const std::string endpoints = dir_ + "/data/master.json";
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(endpoints); }, absl::Seconds(30)))
      << master_->Output();
  auto ep = nlohmann::json::parse(ReadFile(endpoints));
  const std::string grpc = ep["grpc"], http = ep["http"];
  EXPECT_THAT(grpc, HasSubstr("127.0.0.1:"));
  EXPECT_EQ(ep.value("ca_file", ""), "");  // insecure-loopback from the file: plain text
  httplib::Client web("http://" + http);
  auto health = web.Get("/healthz");
  ASSERT_TRUE(health) << master_->Output();
  EXPECT_EQ(health->status, 200);
  const std::string token =
      std::string(absl::StripAsciiWhitespace(ReadFile(ep["token_file"].get<std::string>())));

  // The agent from its file; --name on the command line wins over the file's name.
  const std::string agent_yaml = Write(
      dir_ + "/agent.yaml",
      absl::StrCat(
          "master: ", grpc, "\n", "token-file: ", ep["agent_token_file"].get<std::string>(), "\n",
          "name: from-file\n", "work-dir: ", dir_, "/agent\n", "label: [zone=config, tier=e2e]\n",
          "cpu: \"2\"\n", "memory: 1Gi\n", "ports: 33400-33499\n", "usage-interval: 1s\n"));
  RunResult agent_printed =
      RunPaceline({"agent", "--config", agent_yaml, "--name", "from-flag", "--print-config"}, dir_);
  ASSERT_EQ(agent_printed.exit_code, 0) << agent_printed.err;
  EXPECT_THAT(agent_printed.out, MatchesRegex("(.|\n)*\nname: from-flag +# flag\n(.|\n)*"));
  EXPECT_THAT(agent_printed.out,
              MatchesRegex(absl::StrCat("(.|\n)*\nlabel: \\[zone=config, tier=e2e\\] +# ",
                                        agent_yaml, ":5:8\n(.|\n)*")));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/agent"));

  agent_ = std::make_unique<Process>(
      Process::Start({"agent", "--config", agent_yaml, "--name", "from-flag"}, {.cwd = dir_}));
  nlohmann::json host;
  bool registered = WaitFor(
      [&] {
        RunResult r = RunPaceline(
            {"--addr", grpc, "--token", token, "--timeout", "5s", "host", "list", "-o", "json"});
        auto j = nlohmann::json::parse(r.out, nullptr, false);
        if (j.is_discarded() || !j.contains("hosts")) return false;
        for (const auto& h : j["hosts"]) {
          if (h.value("name", "") == "from-flag") host = h;
        }
        return !host.is_null();
      },
      absl::Seconds(30));
  ASSERT_TRUE(registered) << agent_->Output();
  EXPECT_THAT(host.dump(), HasSubstr("\"zone\":\"config\"")) << host.dump();
  EXPECT_THAT(host.dump(), HasSubstr("\"tier\":\"e2e\"")) << host.dump();
  EXPECT_THAT(host.dump(), Not(HasSubstr("from-file")));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/agent"));

  agent_->Signal(SIGTERM);
  EXPECT_EQ(agent_->WaitExit(absl::Seconds(15)), 0) << agent_->Output();
  master_->Signal(SIGTERM);
  EXPECT_EQ(master_->WaitExit(absl::Seconds(15)), 0) << master_->Output();
}

// A typo, a wrong type, a bad value: exit 1, FILE:LINE:COLUMN on stderr, and nothing started:
// no port listens, no data or work directory is written.
TEST_F(ConfigE2E, ABadFileStartsNothingAndNamesItsLineAndColumn) {
  const int port = FreePort();
  const std::string data = dir_ + "/data";
  struct Case {
    std::string text;   // after data-dir and listen (lines 1 and 2)
    std::string error;  // on stderr
  };
  for (const Case& c : std::vector<Case>{
           {"http-listen: 127.0.0.1:0\nhearbeat-interval: 1s\n",
            ":4:1: hearbeat-interval: unknown key 'hearbeat-interval' (did you mean "
            "'heartbeat-interval'?)"},
           {"cycle: [20ms]\n", ":3:8: cycle: is a list; expected a string"},
           {"insecure-loopback: yes\n", ":3:20: insecure-loopback: 'yes' is not a boolean"},
           {"cycle: 1s\ncycle: 2s\n", ":4:1: cycle: duplicate key 'cycle' (first at line 3)"},
           {"\nlease: 0s\n", ":4:8: lease: must be at least 1s"},
           {"placement: spred\n",
            ":3:12: placement: unknown placement profile 'spred'; known: "
            "default, spread"},
       }) {
    SCOPED_TRACE(c.text);
    const std::string file =
        Write(dir_ + "/master.yaml",
              absl::StrCat("data-dir: ", data, "\nlisten: 127.0.0.1:", port, "\n", c.text));
    RunResult r = RunPaceline({"master", "--config", file}, dir_, absl::Seconds(30));
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(absl::StrCat("error: ", file, c.error)));
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(Listening(port));
    EXPECT_FALSE(std::filesystem::exists(data));
  }

  const std::string work = dir_ + "/agent";
  const std::string agent_yaml =
      Write(dir_ + "/agent.yaml",
            absl::StrCat("master: 127.0.0.1:", port, "\nwork-dir: ", work, "\nlabels: [zone=a]\n"));
  RunResult agent = RunPaceline({"agent", "--config", agent_yaml}, dir_, absl::Seconds(30));
  EXPECT_EQ(agent.exit_code, 1) << agent.out << agent.err;
  EXPECT_THAT(agent.err, HasSubstr(absl::StrCat("error: ", agent_yaml,
                                                ":3:1: labels: unknown key 'labels' (did you "
                                                "mean 'label'?)")));
  EXPECT_FALSE(std::filesystem::exists(work));

  // A file that is missing is an error too, and no flag makes up for it.
  RunResult missing =
      RunPaceline({"master", "--config", dir_ + "/nope.yaml", "--data-dir", data}, dir_);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("nope.yaml: cannot read the config file"));
  EXPECT_FALSE(std::filesystem::exists(data));
}

}  // namespace
}  // namespace paceline::e2e
