// DaemonSettings and the daemons' flags: every key of master and agent read from a file, the
// strict errors with their place, flags over the file, the printed provenance, and the example
// files under deploy/etc.

#include "main/daemon_config.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "CLI/CLI.hpp"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "main/daemon_flags.h"

namespace paceline::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using Kind = SettingSource::Kind;

// A daemon command as the binary registers it: its flags, --config and --print-config.
struct Command {
  explicit Command(const std::string& name) : settings("paceline " + name) {
    cmd = app.add_subcommand(name);
    if (name == "master" || name == "up") AddMasterFlags(cmd, master, settings);
    if (name == "agent" || name == "up") AddAgentFlags(cmd, agent, name == "agent", settings);
    AddConfigFlags(cmd, config, "/etc/paceline/" + name + ".yaml");
  }
  // Parses `args` after the command's name, then loads the config file as the binary does.
  absl::Status Run(const std::string& args) {
    app.parse(cmd->get_name() + " " + args, /*program_name_included=*/false);
    return LoadDaemonConfig(*cmd, config, settings);
  }
  CLI::App app;
  CLI::App* cmd = nullptr;
  MasterFlags master;
  AgentFlags agent;
  ConfigFlags config;
  DaemonSettings settings;
};

// A file unique to this process (tests run concurrently), removed at the end of the test.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    static int n = 0;
    path_ = absl::StrCat(::testing::TempDir(), "/daemon-config-", getpid(), "-", n++, ".yaml");
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The lines of a printed configuration without the heading and the sources.
std::vector<std::string> Values(const std::string& printed) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(printed, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "#")) continue;
    out.emplace_back(line.substr(0, line.rfind("  # ")));
  }
  return out;
}

// Every option of the command (but help and the config's own flags) is a key of the file.
TEST(DaemonSettings, EveryFlagOfMasterAgentAndUpIsAKey) {
  for (const char* name : {"master", "agent", "up"}) {
    SCOPED_TRACE(name);
    Command c(name);
    size_t options = 0;
    for (const CLI::Option* opt : c.cmd->get_options()) {
      if (opt->get_lnames().empty()) continue;
      const std::string& flag = opt->get_lnames().front();
      if (flag == "help" || flag == "config" || flag == "print-config") continue;
      EXPECT_TRUE(c.settings.Has(flag)) << "--" << flag << " has no config key";
      ++options;
    }
    EXPECT_EQ(options, c.settings.keys().size());
  }
  EXPECT_EQ(Command("master").settings.keys().size(), 30u);
  EXPECT_EQ(Command("agent").settings.keys().size(), 30u);
}

// A value for every key, by its type; each must land in its field, sourced at its line.
TEST(DaemonSettings, EveryKeyOfMasterAndAgentIsAcceptedAndSourced) {
  for (const char* name : {"master", "agent"}) {
    SCOPED_TRACE(name);
    Command c(name);
    std::string text;
    for (const std::string& key : c.settings.keys()) {
      if (key == "insecure-loopback" || key == "no-backfill") {
        absl::StrAppend(&text, key, ": true\n");
      } else if (key == "dns-rate-limit") {
        absl::StrAppend(&text, key, ": 12.5\n");
      } else if (key == "label" || key == "container-host-path" || key == "metrics-client" ||
                 key == "cdi-dir") {
        absl::StrAppend(&text, key, ":\n  - v-", key, "\n  - w\n");
      } else {
        absl::StrAppend(&text, key, ": v-", key, "\n");
      }
    }
    ASSERT_TRUE(c.settings.ApplyFile(text, "f.yaml").ok()) << c.settings.ApplyFile(text, "f.yaml");
    int line = 1;
    for (const std::string& key : c.settings.keys()) {
      SettingSource src = c.settings.source(key);
      EXPECT_EQ(src.kind, Kind::kFile) << key;
      // A block list's value starts at its first item, on the next line.
      const bool list = key == "label" || key == "container-host-path" || key == "metrics-client" ||
                        key == "cdi-dir";
      EXPECT_EQ(src.ToString(), list ? absl::StrCat("f.yaml:", line + 1, ":3")
                                     : absl::StrCat("f.yaml:", line, ":", key.size() + 3))
          << key;
      line += list ? 3 : 1;
    }
  }
  Command m("master");
  ASSERT_TRUE(m.settings
                  .ApplyFile("data-dir: /srv/pl\nno-backfill: true\ndns-rate-limit: 7\n"
                             "lease: 9s\nstore: \"\"\nadvertise: 10.0.0.1:5390\n"
                             "placement: spread\nplacement-candidates: all\n",
                             "m.yaml")
                  .ok());
  EXPECT_EQ(m.master.placement, "spread");
  EXPECT_EQ(m.master.placement_candidates, "all");
  EXPECT_EQ(m.master.data_dir, "/srv/pl");
  EXPECT_TRUE(m.master.no_backfill);
  EXPECT_EQ(m.master.dns_rate_limit, 7);
  EXPECT_EQ(m.master.lease, "9s");
  EXPECT_EQ(m.master.store, "");
  EXPECT_EQ(m.master.advertise, "10.0.0.1:5390");
  Command a("agent");
  ASSERT_TRUE(a.settings
                  .ApplyFile("master: m1:5390,m2:5390\ncpu: 4\nlabel: [zone=a, rack=7]\n"
                             "container-host-path: [/data]\nreserve-memory: 2Gi\n",
                             "a.yaml")
                  .ok());
  EXPECT_EQ(a.agent.master, "m1:5390,m2:5390");
  EXPECT_EQ(a.agent.cpu, "4");
  EXPECT_THAT(a.agent.labels, ElementsAre("zone=a", "rack=7"));
  EXPECT_THAT(a.agent.container_host_paths, ElementsAre("/data"));
  EXPECT_EQ(a.agent.reserve_memory, "2Gi");
}

TEST(DaemonSettings, UnknownKeyAndTypoAreRefusedWithTheirPlace) {
  Command c("master");
  absl::Status s = c.settings.ApplyFile("cycle: 1s\nlisten: 1.2.3.4:1\nwhatever: 3\n", "m.yaml");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("m.yaml:3:1: whatever: unknown key 'whatever'"));
  EXPECT_THAT(s.message(), HasSubstr("expected one of: data-dir, store,"));
  // Nothing of the file was taken: the good keys before the bad one neither.
  EXPECT_EQ(c.master.cycle, "50ms");
  EXPECT_EQ(c.master.listen, "127.0.0.1:5390");
  EXPECT_EQ(c.settings.source("cycle").kind, Kind::kDefault);

  absl::Status typo = c.settings.ApplyFile("\n  data_dir: /srv\n", "m.yaml");
  EXPECT_THAT(typo.message(),
              HasSubstr("m.yaml:2:3: data_dir: unknown key 'data_dir' (did you mean 'data-dir'?)"));
  absl::Status flag_spelling = c.settings.ApplyFile("--cycle: 1s\n", "m.yaml");
  EXPECT_THAT(flag_spelling.message(), HasSubstr("(did you mean 'cycle'?)"));
  // The keys of one daemon are not the other's.
  Command a("agent");
  EXPECT_THAT(a.settings.ApplyFile("data-dir: x\n", "a.yaml").message(),
              HasSubstr("a.yaml:1:1: data-dir: unknown key"));
  EXPECT_EQ(c.master.data_dir, "data");
}

TEST(DaemonSettings, WrongTypesAreRefusedEachAtItsPlace) {
  Command c("agent");
  absl::Status s = c.settings.ApplyFile(
      "master: [a, b]\n"    // a list for a string
      "cgroup:\n"           // empty
      "label: zone=a\n"     // a string for a list
      "name: !!str x\n"     // a tag
      "work-dir: {a: 1}\n"  // a map
      "label2: 1\n",        // unknown, reported too
      "a.yaml");
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  const std::vector<std::string> lines = absl::StrSplit(s.message(), '\n');
  ASSERT_EQ(lines.size(), 6u) << s.message();
  EXPECT_THAT(lines[0], HasSubstr("a.yaml:1:9: master: "));
  EXPECT_THAT(lines[0], HasSubstr("expected a string"));
  EXPECT_THAT(lines[1], HasSubstr("a.yaml:2:1: cgroup: "));
  EXPECT_THAT(lines[2], HasSubstr("a.yaml:3:8: label: "));
  EXPECT_THAT(lines[2], HasSubstr("expected a list of strings"));
  EXPECT_THAT(lines[3], HasSubstr("a.yaml:4:7: name: "));
  EXPECT_THAT(lines[4], HasSubstr("a.yaml:5:11: work-dir: "));
  EXPECT_THAT(lines[5], HasSubstr("a.yaml:6:1: label2: unknown key 'label2' (did you mean"));
  EXPECT_EQ(c.agent.master, "");
  EXPECT_TRUE(c.agent.labels.empty());

  Command m("master");
  EXPECT_THAT(m.settings.ApplyFile("insecure-loopback: yes\n", "m.yaml").message(),
              HasSubstr("m.yaml:1:20: insecure-loopback: 'yes' is not a boolean; expected true "
                        "or false"));
  EXPECT_THAT(m.settings.ApplyFile("dns-rate-limit: fast\n", "m.yaml").message(),
              HasSubstr("m.yaml:1:17: dns-rate-limit: "));
  EXPECT_THAT(m.settings.ApplyFile("dns-rate-limit: \"5\"\n", "m.yaml").message(),
              HasSubstr("m.yaml:1:17: dns-rate-limit: "));
  EXPECT_FALSE(m.master.insecure_loopback);
  EXPECT_EQ(m.master.dns_rate_limit, 1000);
}

TEST(DaemonSettings, DuplicateKeyIsRefused) {
  Command c("master");
  absl::Status s = c.settings.ApplyFile("cycle: 1s\nlease: 9s\ncycle: 2s\n", "m.yaml");
  EXPECT_THAT(s.message(), HasSubstr("m.yaml:3:1: cycle: duplicate key 'cycle' (first at line 1)"));
  EXPECT_EQ(c.master.cycle, "50ms");
  EXPECT_EQ(c.master.lease, "2.5s");
}

TEST(DaemonSettings, SyntaxErrorsAndOtherShapesHaveTheirPlace) {
  Command c("master");
  EXPECT_THAT(c.settings.ApplyFile("cycle: 1s\nlease: [9s\n", "m.yaml").message(),
              HasSubstr("YAML syntax error"));
  EXPECT_THAT(c.settings.ApplyFile("- cycle: 1s\n", "m.yaml").message(),
              HasSubstr("m.yaml:1:1: the top level is a list"));
  EXPECT_THAT(c.settings.ApplyFile("cycle: 1s\n---\nlease: 2s\n", "m.yaml").message(),
              HasSubstr("m.yaml:2:1: the file holds more than one YAML document"));
  // Comments only, or nothing: nothing set, and no error.
  EXPECT_TRUE(c.settings.ApplyFile("# cycle: 1s\n\n# lease: 2s\n", "m.yaml").ok());
  EXPECT_TRUE(c.settings.ApplyFile("", "m.yaml").ok());
  EXPECT_EQ(c.master.cycle, "50ms");
}

TEST(DaemonSettings, FlagsAndTheirEnvironmentOverrideTheFile) {
  TempFile file("cycle: 2s\nlisten: 10.1.1.1:5390\nstore: sqlite:/srv/x\nno-backfill: true\n");
  ASSERT_EQ(setenv("PACELINE_STORE", "sqlite:/from/env", 1), 0);
  Command c("master");
  ASSERT_TRUE(c.Run("--listen 127.0.0.1:0 --config " + file.path()).ok());
  unsetenv("PACELINE_STORE");
  EXPECT_EQ(c.master.listen, "127.0.0.1:0");
  EXPECT_EQ(c.settings.source("listen").kind, Kind::kFlag);
  EXPECT_EQ(c.master.store, "sqlite:/from/env");
  EXPECT_EQ(c.settings.source("store").ToString(), "env PACELINE_STORE");
  EXPECT_EQ(c.master.cycle, "2s");
  EXPECT_EQ(c.settings.source("cycle").ToString(), file.path() + ":1:8");
  EXPECT_TRUE(c.master.no_backfill);
  EXPECT_EQ(c.settings.source("data-dir").kind, Kind::kDefault);

  // A repeated flag given on the command line replaces the file's list.
  TempFile agent_file("master: m:1\nlabel: [zone=a, rack=1]\ncontainer-host-path: [/data]\n");
  Command a("agent");
  ASSERT_TRUE(a.Run("--label gpu=h200 --config " + agent_file.path()).ok());
  EXPECT_THAT(a.agent.labels, ElementsAre("gpu=h200"));
  EXPECT_THAT(a.agent.container_host_paths, ElementsAre("/data"));
  EXPECT_EQ(a.agent.master, "m:1");
  // A switch given as a flag stays true whatever the file says.
  TempFile off("insecure-loopback: false\n");
  Command m("master");
  ASSERT_TRUE(m.Run("--insecure-loopback --config " + off.path()).ok());
  EXPECT_TRUE(m.master.insecure_loopback);
  EXPECT_EQ(m.settings.source("insecure-loopback").kind, Kind::kFlag);
}

TEST(DaemonSettings, AMissingFileIsAnErrorNamingIt) {
  Command c("master");
  const std::string path = absl::StrCat(::testing::TempDir(), "/no-such-", getpid(), ".yaml");
  absl::Status s = c.Run("--cycle 1s --config " + path);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr(path + ": cannot read the config file"));
  Command d("master");
  EXPECT_EQ(d.Run("--config " + ::testing::TempDir()).code(), absl::StatusCode::kNotFound);
}

TEST(DaemonSettings, PrintShowsEachValueWithItsSource) {
  TempFile file("\ncycle: 2s\nlabel: [a=b]\n");
  Command c("up");
  ASSERT_TRUE(c.Run("--listen 127.0.0.1:0 --config " + file.path()).ok());
  const std::string printed = c.settings.Print();
  EXPECT_THAT(printed, HasSubstr("# paceline up: the effective configuration."));
  const std::vector<std::string> lines = absl::StrSplit(printed, '\n', absl::SkipEmpty());
  auto line_of = [&](absl::string_view key) -> std::string {
    for (const std::string& l : lines) {
      if (absl::StartsWith(l, absl::StrCat(key, ": "))) return l;
    }
    return "";
  };
  EXPECT_THAT(line_of("listen"), testing::MatchesRegex("listen: 127\\.0\\.0\\.1:0 +# flag"));
  EXPECT_THAT(line_of("cycle"), testing::MatchesRegex("cycle: 2s +# .*:2:8"));
  EXPECT_THAT(line_of("label"), testing::MatchesRegex("label: \\[a=b\\] +# .*:3:8"));
  EXPECT_THAT(line_of("data-dir"), testing::MatchesRegex("data-dir: data +# default"));
  EXPECT_THAT(line_of("store"), testing::MatchesRegex("store: \"\" +# default"));
  EXPECT_THAT(line_of("insecure-loopback"),
              testing::MatchesRegex("insecure-loopback: false +# default"));
  EXPECT_THAT(line_of("dns-rate-limit"), testing::MatchesRegex("dns-rate-limit: 1000 +# default"));
  EXPECT_EQ(lines.size(), 2 + c.settings.keys().size());
  // The comments line up.
  EXPECT_EQ(line_of("listen").find('#'), line_of("data-dir").find('#'));
}

// What Print writes reads back to the very same values, however odd the strings.
TEST(DaemonSettings, PrintedConfigReadsBackToTheSameValues) {
  Command c("agent");
  c.agent.name = "a b";
  c.agent.work_dir = "null";
  c.agent.task_user = "";
  c.agent.address = "::1";
  c.agent.cgroup_parent = "x#y: \"q\" \\ \t\n\x01 é";
  c.agent.labels = {"k=v", "a:b", "c,d", "[x]", "", "-", "~"};
  c.agent.master = "-m";
  c.agent.ca = "true";
  c.agent.cpu = "0.5";
  const std::string printed = c.settings.Print();
  Command back("agent");
  ASSERT_TRUE(back.settings.ApplyFile(printed, "printed.yaml").ok())
      << back.settings.ApplyFile(printed, "printed.yaml") << "\n"
      << printed;
  EXPECT_EQ(back.agent.name, c.agent.name);
  EXPECT_EQ(back.agent.work_dir, c.agent.work_dir);
  EXPECT_EQ(back.agent.task_user, c.agent.task_user);
  EXPECT_EQ(back.agent.address, c.agent.address);
  EXPECT_EQ(back.agent.cgroup_parent, c.agent.cgroup_parent);
  EXPECT_EQ(back.agent.labels, c.agent.labels);
  EXPECT_EQ(back.agent.master, c.agent.master);
  EXPECT_EQ(back.agent.ca, c.agent.ca);
  EXPECT_EQ(back.agent.cpu, c.agent.cpu);
  EXPECT_EQ(Values(back.settings.Print()), Values(printed)) << "printing is not stable";
}

TEST(DaemonSettings, LocatePointsCommandErrorsAtTheFile) {
  Command c("master");
  ASSERT_TRUE(c.settings.ApplyFile("lease: 0s\n", "m.yaml").ok());
  absl::Status located =
      c.settings.Locate(absl::InvalidArgumentError("--lease: must be at least 1s"));
  EXPECT_EQ(located.message(), "m.yaml:1:8: lease: must be at least 1s");
  EXPECT_EQ(located.code(), absl::StatusCode::kInvalidArgument);
  // From a default or a flag, or not about one key: unchanged.
  EXPECT_EQ(c.settings.Locate(absl::InvalidArgumentError("--cycle: bad")).message(),
            "--cycle: bad");
  EXPECT_EQ(c.settings.Locate(absl::InvalidArgumentError("--ca, --cert: x")).message(),
            "--ca, --cert: x");
  EXPECT_EQ(c.settings.Locate(absl::InternalError("disk on fire")).message(), "disk on fire");
}

// deploy/etc: the example files parse; every key is in them (set, or commented out with its
// default); and with every commented key set, they still parse.
TEST(DaemonSettings, ExampleFilesNameEveryKeyAndParse) {
  for (const char* name : {"master", "agent"}) {
    SCOPED_TRACE(name);
    const std::string path = absl::StrCat(PACELINE_DEPLOY_ETC, "/", name, ".yaml");
    const std::string text = Slurp(path);
    ASSERT_FALSE(text.empty()) << path;
    Command c(name);
    absl::Status s = c.settings.ApplyFile(text, path);
    ASSERT_TRUE(s.ok()) << s;
    std::string uncommented;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      absl::string_view rest = line;
      bool key_line = absl::ConsumePrefix(&rest, "# ") && !rest.empty() &&
                      absl::ascii_islower(rest.front()) && absl::StrContains(rest, ": ") &&
                      c.settings.Has(rest.substr(0, rest.find(':')));
      absl::StrAppend(&uncommented, key_line ? rest : line, "\n");
    }
    for (const std::string& key : c.settings.keys()) {
      EXPECT_TRUE(absl::StrContains(uncommented, absl::StrCat("\n", key, ":")))
          << key << " is not in " << path;
    }
    Command all(name);
    s = all.settings.ApplyFile(uncommented, path);
    ASSERT_TRUE(s.ok()) << s << "\n" << uncommented;
    for (const std::string& key : all.settings.keys()) {
      EXPECT_EQ(all.settings.source(key).kind, Kind::kFile) << key;
    }
  }
}

}  // namespace
}  // namespace paceline::cli
