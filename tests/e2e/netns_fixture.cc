// TestCluster's hosts of their own (ClusterOptions::netns): the network comes from
// scripts/netns-cluster.sh, the same script an operator runs to try a cluster of several hosts
// on one machine, so that the test bed and the documented one are one thing.

#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

RunResult RunScript(const std::vector<std::string>& args) {
  std::vector<std::string> full = {PACELINE_NETNS_SCRIPT};
  full.insert(full.end(), args.begin(), args.end());
  return RunProgram(full, {.program = "bash"}, absl::Seconds(60));
}

}  // namespace

std::string TestCluster::agent_name(int i) const {
  if (options_.netns) return absl::StrCat("host-", i);
  return absl::StrCat("agent", i, "-", suffix_);
}

std::string TestCluster::host_address(int i) const {
  if (!options_.netns) return "127.0.0.1";
  return i >= 0 && i < static_cast<int>(netns_address_.size()) ? netns_address_[i] : "";
}

std::string TestCluster::netns_name(int i) const {
  return i >= 0 && i < static_cast<int>(netns_names_.size()) ? netns_names_[i] : "";
}

RunResult TestCluster::RunOnHost(int i, const std::vector<std::string>& argv,
                                 absl::Duration timeout) {
  if (argv.empty()) return {};
  std::vector<std::string> args(argv.begin() + 1, argv.end());
  return RunProgram(args, {.cwd = dir_, .program = argv[0], .netns = netns_name(i)}, timeout);
}

void TestCluster::SetUpNetns() {
  // One namespace per agent the test starts with; the run lives as long as this process.
  RunResult up =
      RunScript({"net-up", std::to_string(options_.agents), "--owner", std::to_string(::getpid())});
  ASSERT_EQ(up.exit_code, 0) << "netns-cluster.sh net-up: " << up.out << up.err;
  // Lines KEY=VALUE (run.env) and "host I NAMESPACE ADDRESS".
  std::string run;
  std::istringstream lines(up.out);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (words.size() == 4 && words[0] == "host") {
      int i = -1;
      ASSERT_TRUE(absl::SimpleAtoi(words[1], &i)) << line;
      ASSERT_EQ(i, static_cast<int>(netns_names_.size())) << up.out;
      netns_names_.push_back(words[2]);
      netns_address_.push_back(words[3]);
      continue;
    }
    std::pair<std::string, std::string> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
    if (kv.first == "RUN_NAME") run = kv.second;
    if (kv.first == "RUN_BRIDGE_ADDRESS") bridge_address_ = kv.second;
    if (kv.first == "RUN_CGROUP_PARENT") cgroup_parent_ = kv.second;
  }
  ASSERT_FALSE(run.empty() || bridge_address_.empty() || cgroup_parent_.empty()) << up.out;
  ASSERT_EQ(static_cast<int>(netns_names_.size()), options_.agents) << up.out;
  netns_run_ = run;
}

void TestCluster::TrackInNetns(pid_t pid, const std::string& name) {
  RunResult r = RunScript({"--run", netns_run_, "track", std::to_string(pid), name});
  EXPECT_EQ(r.exit_code, 0) << "netns-cluster.sh track: " << r.err;
}

void TestCluster::TearDownNetns() {
  RunResult r = RunScript({"--run", netns_run_, "down"});
  EXPECT_EQ(r.exit_code, 0) << "netns-cluster.sh down: " << r.out << r.err;
}

}  // namespace paceline::e2e
