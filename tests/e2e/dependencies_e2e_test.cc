// End to end: depends_on on a real master and agent.
//   - A chain a -> b -> c runs in order, each job once, across a master killed with SIGKILL while
//     the chain is under way; a job that needs `a` to fail fails with its reason instead.
//   - Bad dependencies are refused with clear errors and make no job: a malformed entry (at
//     line:column), an unknown name, a job in a pool the submitter may not read; an update may
//     not add dependencies.

#include <csignal>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <httplib.h>
#include "absl/strings/numbers.h"
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

std::string Batch(const std::string& name, const std::string& command,
                  const std::string& depends_on = "") {
  return absl::StrCat("name: ", name, R"(
type: batch
instances: 1
task:
  command: )",
                      command, R"(
  resources: {cpu: 0.1, memory: 16Mi}
  kill_grace: 1s
)",
                      depends_on);
}

// A uint64 of proto JSON (a string) or a plain number.
struct JobRun {
  std::string state;
  uint32_t run = 0;
  int64_t started = 0;
  int64_t finished = 0;
  std::string reason;
  std::string message;
};

JobRun OnlyRun(TestCluster& c, uint64_t job) {
  Json tasks = c.CliJson({"task", "list", std::to_string(job)});
  EXPECT_EQ(tasks["tasks"].size(), 1u) << tasks.dump();
  const Json& t = tasks["tasks"][0];
  return {t.value("state", ""),
          t.contains("run") ? t["run"].get<uint32_t>() : 0,
          JsonInt(t.value("started_at_unix_ms", Json())),
          JsonInt(t.value("finished_at_unix_ms", Json())),
          t.value("reason", ""),
          t.value("message", "")};
}

TEST(DependenciesE2E, AChainRunsInOrderOnceEachAcrossAMasterKilledMidChain) {
  TestCluster c({.agents = 1});
  ASSERT_EQ(c.Cli({"pool", "create", "/e2e", "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  const uint64_t a = c.CreateJob("/e2e", Batch("a", "sleep 3"));
  const uint64_t b = c.CreateJob("/e2e", Batch("b", "sleep 1", "depends_on: [{job: a}]\n"));
  const uint64_t c3 = c.CreateJob("/e2e", Batch("c", "true", "depends_on: [{job: b}]\n"));
  const uint64_t d =
      c.CreateJob("/e2e", Batch("d", "true", "depends_on: [{job: a, condition: failed}]\n"));
  ASSERT_GT(a, 0u);
  ASSERT_GT(b, 0u);
  ASSERT_GT(c3, 0u);
  ASSERT_GT(d, 0u);

  // Held, and says why; the names are stored as ids.
  Json held = c.CliJson({"job", "get", std::to_string(c3)});
  EXPECT_EQ(held["job"]["state"], "PENDING") << held.dump();
  EXPECT_THAT(held.value("pending_reason", ""),
              HasSubstr(absl::StrCat("waiting for job ", b, " (PENDING) to succeed")));
  EXPECT_THAT(held.value("spec_yaml", ""), HasSubstr(absl::StrCat("job: ", b)));
  EXPECT_EQ(OnlyRun(c, c3).reason, "WAITING_FOR_DEPENDENCIES");

  // The master dies while a runs; its successor reads the held jobs back.
  ASSERT_TRUE(c.WaitForJob(
      a, [](const Json& j) { return j["state"] == "RUNNING"; }, absl::Seconds(30)));
  c.master().Signal(SIGKILL);
  ASSERT_TRUE(c.master().WaitExit(absl::Seconds(10)).has_value());
  c.StartMaster();
  ASSERT_TRUE(c.WaitForHosts(1, absl::Seconds(60)));
  RunResult wait = c.Cli({"job", "wait", std::to_string(c3), "--timeout", "90s"});
  ASSERT_EQ(wait.exit_code, 0) << wait.out << wait.err;

  const JobRun ra = OnlyRun(c, a), rb = OnlyRun(c, b), rc = OnlyRun(c, c3), rd = OnlyRun(c, d);
  for (const JobRun& r : {ra, rb, rc}) {
    EXPECT_EQ(r.state, "SUCCEEDED");
    EXPECT_EQ(r.run, 1u) << "each job ran once";
  }
  EXPECT_GE(rb.started, ra.finished) << "b started before a ended";
  EXPECT_GE(rc.started, rb.finished) << "c started before b ended";
  EXPECT_EQ(rd.state, "FAILED");
  EXPECT_EQ(rd.reason, "DEPENDENCY_NEVER_MET");
  EXPECT_EQ(rd.started, 0) << "d never ran";
  Json events = c.CliJson({"task", "events", absl::StrCat(d, "/0")});
  EXPECT_THAT(events.dump(), HasSubstr(absl::StrCat("job ", a,
                                                    " ended SUCCEEDED; this job needed it to "
                                                    "fail or be killed")));
}

TEST(DependenciesE2E, BadDependenciesAreRefusedWithClearErrorsAndMakeNoJob) {
  TestCluster c({.agents = 0});
  for (const char* p : {"/a", "/b"}) {
    ASSERT_EQ(c.Cli({"pool", "create", p, "-f", c.WriteFile("pool.yaml", kPool)}).exit_code, 0);
  }
  const uint64_t in_a = c.CreateJob("/a", Batch("etl", "true"));
  const uint64_t in_b = c.CreateJob("/b", Batch("secret-etl", "true"));
  ASSERT_GT(in_b, in_a);

  // A malformed entry: its line and column.
  RunResult bad =
      c.Cli({"job", "create", "--pool", "/a", "-f",
             c.WriteFile("bad.yaml", Batch("x", "true", "depends_on:\n  - {job: 0}\n"))});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("bad.yaml:9:11: depends_on[0].job: '0' is not a job id"));

  // An unknown name: NOT_FOUND, naming the entry.
  RunResult unknown =
      c.Cli({"job", "create", "--pool", "/a", "-f",
             c.WriteFile("u.yaml", Batch("x", "true", "depends_on: [{job: nightly}]\n"))});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_THAT(unknown.err, HasSubstr("depends_on[0].job: no job named 'nightly' in pool /a"));

  // A submitter of /a may not wait for a job of /b, which it may not read.
  Json token =
      c.CliJson({"token", "create", "--user", "sam", "--role", "submitter", "--pool", "/a"});
  const std::string http = c.HttpAddress();
  httplib::Client client(http.substr(0, http.rfind(':')),
                         std::stoi(http.substr(http.rfind(':') + 1)));
  httplib::Headers headers{{"Authorization", "Bearer " + token.value("token", "")}};
  auto create = [&](uint64_t dep) {
    Json body{{"pool", "/a"},
              {"spec_yaml", Batch("x", "true", absl::StrCat("depends_on: [{job: ", dep, "}]\n"))}};
    return client.Post("/api/v1/JobService/CreateJob", headers, body.dump(), "application/json");
  };
  auto denied = create(in_b);
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 403) << denied->body;
  EXPECT_THAT(denied->body, HasSubstr(absl::StrCat("depends_on[0].job: job ", in_b,
                                                   " is in a pool you may not read")));
  RunResult next = c.Cli({"job", "get", std::to_string(in_b + 1)});
  EXPECT_NE(next.exit_code, 0) << "no job was made: " << next.out;
  auto allowed = create(in_a);  // the same submitter, a job of its own pool
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->status, 200) << allowed->body;

  // An update may not add dependencies: they are set at creation only.
  RunResult up =
      c.Cli({"job", "update", std::to_string(in_a), "-f",
             c.WriteFile("up.yaml",
                         Batch("etl", "true", absl::StrCat("depends_on: [{job: ", in_b, "}]\n")))});
  EXPECT_NE(up.exit_code, 0) << up.out;
  EXPECT_THAT(up.err, HasSubstr("depends_on: a job's dependencies are set at creation and "
                                "cannot change by an update"));
}

}  // namespace
}  // namespace paceline::e2e
