// Scenario parsing: the examples parse to what they say; every malformed scenario under
// testdata/malformed fails with its `# expect:` fragments, each line "FILE:LINE:COLUMN: ...".

#include "sim/scenario.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace paceline::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::vector<std::string> ListYaml(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ScenarioTest, ParsesTheFairnessExample) {
  absl::StatusOr<Scenario> sc = LoadScenarioFile(PACELINE_EXAMPLES "/fairness.yaml");
  ASSERT_TRUE(sc.ok()) << sc.status();
  EXPECT_EQ(sc->seed, 7u);
  EXPECT_EQ(sc->run_for, absl::Minutes(10));
  EXPECT_EQ(sc->report_every, absl::Seconds(10));
  EXPECT_EQ(sc->cycle_every, absl::Seconds(1));
  ASSERT_EQ(sc->hosts.size(), 1u);
  EXPECT_EQ(sc->hosts[0].count, 10u);
  EXPECT_EQ(sc->hosts[0].resources, Resources::Of(10'000, int64_t{64} << 30));
  EXPECT_EQ(sc->hosts[0].labels, (std::vector<std::pair<std::string, std::string>>{{"zone", "a"}}));
  ASSERT_EQ(sc->pools.size(), 2u);
  EXPECT_EQ(sc->pools.at("/a").dim(Dim::kCpu).reservation, 20'000);
  EXPECT_EQ(sc->pools.at("/b").dim(Dim::kCpu).limit, 100'000);
  ASSERT_EQ(sc->jobs.size(), 2u);
  EXPECT_EQ(sc->jobs[1].at, absl::Seconds(30));
  EXPECT_EQ(sc->jobs[1].pool, "/b");
  EXPECT_EQ(sc->jobs[1].spec.name, "b1");
  EXPECT_EQ(sc->jobs[1].spec.instances, 80u);
  EXPECT_EQ(sc->jobs[1].spec.task.duration, absl::Hours(2));
  EXPECT_EQ(sc->jobs[1].spec.task.command, "simulated");  // not needed in a scenario
}

TEST(ScenarioTest, EveryExampleParses) {
  for (const std::string& path : ListYaml(PACELINE_EXAMPLES)) {
    absl::StatusOr<Scenario> sc = LoadScenarioFile(path);
    EXPECT_TRUE(sc.ok()) << sc.status();
  }
}

TEST(ScenarioTest, DefaultsAndOrdering) {
  absl::StatusOr<Scenario> sc = ParseScenario(R"(
hosts:
  - {resources: {cpu: 2, memory: 4Gi, gpu: 4}}
pools:
  /b: {}
  /: {}
jobs:
  - {at: 1m, pool: /b, spec: {name: late, instances: 1, task: {resources: {cpu: 1, memory: 1Gi}, duration: 1m}}}
  - {pool: /b, spec: {name: early, instances: 1, task: {command: x, resources: {cpu: 1, memory: 1Gi}, duration: 1m}}}
)",
                                              "s.yaml");
  ASSERT_TRUE(sc.ok()) << sc.status();
  EXPECT_EQ(sc->seed, 1u);
  EXPECT_EQ(sc->run_for, absl::InfiniteDuration());
  EXPECT_EQ(sc->heartbeat_every, absl::Seconds(10));
  EXPECT_EQ(sc->placement, "default");
  EXPECT_TRUE(sc->backfill);
  EXPECT_EQ(sc->hosts[0].name, "host0");
  EXPECT_EQ(sc->hosts[0].count, 1u);
  EXPECT_EQ(sc->hosts[0].resources[Dim::kGpu], 4000);
  EXPECT_EQ(sc->hosts[0].gpu_model, "gpu");
  EXPECT_EQ(sc->pools.begin()->first, "/");  // parents first
  ASSERT_EQ(sc->jobs.size(), 2u);
  EXPECT_EQ(sc->jobs[0].spec.name, "early");  // sorted by arrival
  EXPECT_EQ(sc->jobs[0].spec.task.command, "x");
}

TEST(ScenarioTest, MissingFile) {
  EXPECT_EQ(LoadScenarioFile("/nonexistent/s.yaml").status().code(), absl::StatusCode::kNotFound);
}

class MalformedScenarioTest : public ::testing::TestWithParam<std::string> {};

TEST_P(MalformedScenarioTest, FailsWithTheExpectedErrors) {
  const std::string& path = GetParam();
  std::string text = ReadAll(path);
  std::vector<std::string> fragments;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, "# expect: ")) break;
    fragments.emplace_back(absl::StripAsciiWhitespace(line));
  }
  ASSERT_FALSE(fragments.empty()) << path << " must start with '# expect: <error fragment>'";
  std::string name = std::filesystem::path(path).filename().string();
  absl::StatusOr<Scenario> sc = ParseScenario(text, name);
  ASSERT_FALSE(sc.ok()) << path << " parsed, but it should not";
  EXPECT_EQ(sc.status().code(), absl::StatusCode::kInvalidArgument);
  std::string message(sc.status().message());
  for (const std::string& f : fragments) EXPECT_THAT(message, HasSubstr(f));
  for (absl::string_view line : absl::StrSplit(message, '\n')) {
    EXPECT_THAT(std::string(line), StartsWith(name + ":"));
    EXPECT_TRUE(std::regex_search(std::string(line.substr(name.size() + 1)),
                                  std::regex("^[0-9]+:[0-9]+: ")))
        << line;
  }
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = std::filesystem::path(info.param).stem().string();
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(c); }, '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Testdata, MalformedScenarioTest,
                         ::testing::ValuesIn(ListYaml(PACELINE_SIM_TESTDATA "/malformed")),
                         TestName);

}  // namespace
}  // namespace paceline::sim
