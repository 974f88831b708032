// End to end: fair share with memory (docs/resource-manager.md) on a real master and agent. A
// parent pool with `fair_share`, a child that ran work and one that did not: `pool get` shows
// the first one's decayed usage and its factor (2^-2 = 0.25: all of the siblings' usage, half
// the shares), the second one's factor 1; a malformed policy is refused at line:column; the
// policy survives the store across a kill -9 of the master, and the new master seeds the
// decayed usage from the usage the store kept, so the factor is the same after the restart.

#include <signal.h>

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kOrg[] = R"(
resources:
  cpu: {reservation: 2, limit: 4}
fair_share: {half_life: 1h}
)";

constexpr char kTeam[] = R"(
resources:
  cpu: {reservation: 0, limit: 4}
)";

const Json* Dim(const Json& pool, const std::string& name) {
  for (const Json& d : pool["dimensions"]) {
    if (d["name"] == name) return &d;
  }
  return nullptr;
}

double FactorOf(TestCluster& c, const std::string& path) {
  Json got = c.CliJson({"pool", "get", path});
  const Json* cpu = Dim(got["pool"], "cpu");
  EXPECT_NE(cpu, nullptr) << got.dump();
  return cpu == nullptr ? -1 : cpu->value("fair_share_factor", 0.0);
}

TEST(FairShareE2E, PoolGetShowsDecayedUsageAndTheFactor) {
  TestCluster c(ClusterOptions{.agents = 1});
  ASSERT_TRUE(c.WaitForHosts(1));
  RunResult bad = c.Cli(
      {"pool", "create", "/org", "-f", c.WriteFile("bad.yaml", "fair_share: {half_life: 10s}\n")});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("bad.yaml:1:25: fair_share.half_life: is 10s; expected a "
                                 "duration from 1m to 365d"));
  ASSERT_EQ(c.Cli({"pool", "create", "/org", "-f", c.WriteFile("org.yaml", kOrg)}).exit_code, 0);
  const std::string team = c.WriteFile("team.yaml", kTeam);
  ASSERT_EQ(c.Cli({"pool", "create", "/org/a", "-f", team}).exit_code, 0);
  ASSERT_EQ(c.Cli({"pool", "create", "/org/b", "-f", team}).exit_code, 0);
  EXPECT_EQ(FactorOf(c, "/org/a"), 1.0) << "nobody used anything yet";

  uint64_t job = c.CreateJob("/org/a", R"(
name: yesterday
instances: 2
task:
  command: "sleep 5"
  resources: {cpu: 1, memory: 16Mi}
)");
  ASSERT_GT(job, 0u);
  RunResult wait = c.Cli({"job", "wait", std::to_string(job), "--timeout", "60s"});
  ASSERT_EQ(wait.exit_code, 0) << wait.err;

  Json a = c.CliJson({"pool", "get", "/org/a"});
  ASSERT_TRUE(a["pool"].contains("fair_share")) << a.dump();
  const Json& fa = a["pool"]["fair_share"];
  // Two of the host's cores for about 5 s: some cluster-seconds, decayed a little.
  EXPECT_GT(fa["decayed_usage"].get<double>(), 0.0) << fa.dump();
  EXPECT_EQ(fa["usage_fraction"].get<double>(), 1.0) << fa.dump();
  EXPECT_EQ(fa["half_life_ms"], "3600000") << fa.dump();
  EXPECT_DOUBLE_EQ(FactorOf(c, "/org/a"), 0.25);
  EXPECT_EQ(FactorOf(c, "/org/b"), 1.0);
  Json org = c.CliJson({"pool", "get", "/org"});
  EXPECT_FALSE(org["pool"].contains("fair_share")) << "the root has no policy";
  EXPECT_THAT(org["pool"]["spec_yaml"].get<std::string>(),
              HasSubstr("fair_share: {half_life: 1h}"));
  RunResult table = c.Cli({"pool", "get", "/org/a"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("fair share: factor 0.25, decayed usage "));
  EXPECT_THAT(table.out, HasSubstr("(100% of its siblings'), half-life 1h"));

  // The policy is stored with the pool: a master killed and started again still has it.
  c.master().Signal(SIGKILL);
  ASSERT_TRUE(c.master().WaitExit(absl::Seconds(10)).has_value());
  c.StartMaster();
  org = c.CliJson({"pool", "get", "/org"});
  EXPECT_THAT(org["pool"]["spec_yaml"].get<std::string>(),
              HasSubstr("fair_share: {half_life: 1h}"));
  // The new master seeds the decayed usage from the usage the store kept of the ended runs:
  // /org/a yields again, from its first cycles on. The store counts each run from its start to
  // its end and decays it from the middle of its hour, the old master counted cycle by cycle:
  // the same order of magnitude, not the same number.
  const double before = fa["decayed_usage"].get<double>();
  EXPECT_TRUE(WaitFor([&] { return FactorOf(c, "/org/a") == 0.25; }, absl::Seconds(20)));
  Json seeded = c.CliJson({"pool", "get", "/org/a"});
  const double usage = seeded["pool"]["fair_share"].value("decayed_usage", 0.0);
  EXPECT_GT(usage, 0.3 * before) << seeded.dump();
  EXPECT_LT(usage, 3 * before) << seeded.dump();
  EXPECT_EQ(FactorOf(c, "/org/b"), 1.0);
}

}  // namespace
}  // namespace paceline::e2e
