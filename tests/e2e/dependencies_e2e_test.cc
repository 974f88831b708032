// End to end: depends_on on a real master and agent. The field is parsed and checked (errors
// at line:column), but the master does not enforce dependencies yet, so it refuses a job that
// has them rather than start it early, and no update may change a job's depends_on.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kPool[] = R"(
resources:
  cpu:    {reservation: 1, limit: 2}
  memory: {reservation: 256Mi}
)";

std::string Web(const std::string& depends_on) {
  return absl::StrCat(R"(name: web
type: service
instances: 1
task:
  command: exec sleep 600
  resources: {cpu: 0.1, memory: 32Mi}
  kill_grace: 1s
)",
                      depends_on);
}

TEST(DependenciesE2E, RefusedAtCreationAndByAnUpdateWithClearErrors) {
  TestCluster c({.agents = 1});
  RunResult pool = c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPool)});
  ASSERT_EQ(pool.exit_code, 0) << pool.err;
  const uint64_t a = c.CreateJob("/e2e", Web(""));
  ASSERT_GT(a, 0u);

  // A malformed entry: its line and column.
  RunResult bad = c.Cli({"job", "create", "--pool", "/e2e", "-f",
                         c.WriteFile("bad.yaml", Web("depends_on:\n  - {job: 0}\n"))});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("bad.yaml:9:11: depends_on[0].job: '0' is not a job id"));

  // A well-formed one: refused, and no job is made.
  std::string deps = absl::StrCat("depends_on: [{job: ", a, ", condition: succeeded}]\n");
  RunResult b = c.Cli({"job", "create", "--pool", "/e2e", "-f", c.WriteFile("b.yaml", Web(deps))});
  EXPECT_NE(b.exit_code, 0) << b.out;
  EXPECT_THAT(b.err, HasSubstr("depends_on: this master does not enforce job dependencies yet"));
  RunResult next = c.Cli({"job", "get", std::to_string(a + 1)});
  EXPECT_NE(next.exit_code, 0) << next.out;
  EXPECT_THAT(next.err, HasSubstr("not found"));

  // An update may not add dependencies: they are set at creation only.
  RunResult up =
      c.Cli({"job", "update", std::to_string(a), "-f", c.WriteFile("up.yaml", Web(deps))});
  EXPECT_NE(up.exit_code, 0) << up.out;
  EXPECT_THAT(up.err, HasSubstr("depends_on: a job's dependencies are set at creation and "
                                "cannot change by an update"));
  Json job = c.CliJson({"job", "get", std::to_string(a)});
  std::string version = job["job"]["version"].dump();  // a uint64: a string in proto JSON
  EXPECT_TRUE(version == "1" || version == "\"1\"") << job.dump();
}

}  // namespace
}  // namespace paceline::e2e
