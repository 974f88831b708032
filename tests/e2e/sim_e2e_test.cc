// End to end: the real `paceline sim` binary on the scenarios under examples/sim — exit codes,
// the JSON report on stdout and in --report, determinism across processes, errors with file
// positions, and PNG plots (skipped when gnuplot is not installed).

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/e2e/process.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;

const std::string kExamples = std::string(PACELINE_SOURCE_DIR) + "/examples/sim";

nlohmann::json ParseReport(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << text;
  return j;
}

TEST(SimE2eTest, ReportOnStdoutAndInAFile) {
  std::string dir = MakeTempDir("pl-sim");
  RunResult r = RunPaceline(
      {"sim", kExamples + "/preemption.yaml", "-o", "json", "--report", dir + "/report.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = ParseReport(r.out);
  EXPECT_EQ(j["scenario"]["hosts"], 10);
  EXPECT_EQ(j["intervals"].size(), 180u);  // 30m every 10s
  EXPECT_EQ(j["summary"]["preemptions"], 50);
  // At 1m the two pools share the 100 cores 50 / 50.
  const nlohmann::json& at_1m = j["intervals"][5];
  EXPECT_EQ(at_1m["t_s"], 60.0);
  EXPECT_EQ(at_1m["pools"]["/a"]["cpu"]["allocation"], 50.0);
  EXPECT_EQ(at_1m["pools"]["/b"]["cpu"]["entitlement"], 50.0);
  EXPECT_TRUE(j["timing"].contains("wall_s"));
  nlohmann::json file = ParseReport(ReadFile(dir + "/report.json"));
  file.erase("timing");
  j.erase("timing");
  EXPECT_EQ(file, j);
  std::filesystem::remove_all(dir);
}

TEST(SimE2eTest, SameScenarioSameReportAcrossRuns) {
  RunResult a = RunPaceline({"sim", kExamples + "/preemption.yaml", "-o", "json"});
  RunResult b = RunPaceline({"sim", kExamples + "/preemption.yaml", "-o", "json"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  nlohmann::json ja = ParseReport(a.out), jb = ParseReport(b.out);
  ja.erase("timing");
  jb.erase("timing");
  EXPECT_EQ(ja.dump(), jb.dump());
}

TEST(SimE2eTest, SummaryByDefault) {
  RunResult r = RunPaceline({"sim", kExamples + "/fairness.yaml"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("10 hosts, 2 pools, 2 jobs, seed 7"));
  EXPECT_THAT(r.out, HasSubstr("90 placements, 0 preemptions"));
  EXPECT_THAT(r.out, HasSubstr("ENTITLEMENT"));
}

TEST(SimE2eTest, InvalidScenarioFailsWithPositions) {
  std::string dir = MakeTempDir("pl-sim");
  std::string path = dir + "/bad.yaml";
  {
    std::ofstream(path) << "hosts:\n  - {count: 2, resources: {cpu: 4, memroy: 8Gi}}\n"
                           "pools: {/a: {}}\nrun_for: 1m\n";
  }
  RunResult r = RunPaceline({"sim", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(path + ":2:36: hosts[0].resources.memroy: unknown key 'memroy' "
                                      "(did you mean 'memory'?)"));
  EXPECT_THAT(r.err, HasSubstr("error: the scenario is invalid (2 problems)"));
  RunResult missing = RunPaceline({"sim", dir + "/none.yaml"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("no such file"));
  std::filesystem::remove_all(dir);
}

TEST(SimE2eTest, PlotsArePngFiles) {
  if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "gnuplot is not installed (scripts/install-deps.sh installs gnuplot-nox); "
                    "the plots are not checked";
  }
  std::string dir = MakeTempDir("pl-sim");
  RunResult r = RunPaceline({"sim", kExamples + "/fairness.yaml", "--plot", dir + "/plots"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* png : {"pool-cpu.png", "pool-memory.png", "utilisation.png"}) {
    std::string data = ReadFile(dir + "/plots/" + png);
    ASSERT_GT(data.size(), 1000u) << png;
    EXPECT_EQ(data.substr(1, 3), "PNG") << png;
    EXPECT_THAT(r.out, HasSubstr(png));
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace paceline::e2e
