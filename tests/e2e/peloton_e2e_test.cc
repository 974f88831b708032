// End to end: Peloton's configs (examples/peloton) created as they are with --format peloton on
// a real master and real agents, their tasks seeing Peloton's variables; `convert peloton`
// printing the kept spec; a bad config refused with its place and changing nothing.

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

const std::string kExamples = std::string(PACELINE_SOURCE_DIR) + "/examples/peloton/";

// Three hosts: zone a (racks r1, r2) and zone b, each with one stand-in GPU: `nvidia-smi` in
// the agents' PATH answers the query the agent asks.
ClusterOptions Options(const std::string& bin_dir) {
  ClusterOptions o;
  o.agent_labels = {
      {0, {"zone=a", "rack=r1"}}, {1, {"zone=a", "rack=r2"}}, {2, {"zone=b", "rack=r1"}}};
  o.agent_env = {absl::StrCat("PATH=", bin_dir, ":", std::getenv("PATH"))};
  return o;
}

// A directory with a stand-in `nvidia-smi` that reports one GPU; removed with the fixture.
std::string MakeStandInGpuBin() {
  static int n = 0;
  std::string d = absl::StrCat(::testing::TempDir(), "/peloton-e2e-bin-", ::getpid(), "-", n++);
  std::filesystem::create_directories(d);
  std::ofstream(d + "/nvidia-smi") << "#!/bin/sh\necho '0, Stand-in GPU, 16384 MiB'\n";
  std::filesystem::permissions(d + "/nvidia-smi", std::filesystem::perms::owner_all |
                                                      std::filesystem::perms::group_read |
                                                      std::filesystem::perms::others_read);
  return d;
}

class PelotonE2E : public ::testing::Test {
 protected:
  PelotonE2E() : bin_(MakeStandInGpuBin()), c_(Options(bin_)) {}
  ~PelotonE2E() override {
    std::error_code ec;
    std::filesystem::remove_all(bin_, ec);
  }

  void SetUp() override {
    ASSERT_TRUE(c_.WaitForHosts(3));
    RunResult pool = c_.Cli(
        {"pool", "create", "/analytics", "-f", kExamples + "respool.yaml", "--format", "peloton"});
    ASSERT_EQ(pool.exit_code, 0) << pool.err;
    EXPECT_THAT(pool.err, HasSubstr("respool.yaml:3:7: name: 'analytics' is not kept"));
  }

  // Creates an example with --format peloton; `err` gets what the CLI printed to stderr.
  uint64_t Create(const std::string& file, std::string* err = nullptr) {
    RunResult r = c_.Cli(
        {"job", "create", "-f", kExamples + file, "--format", "peloton", "--pool", "/analytics"});
    EXPECT_EQ(r.exit_code, 0) << file << ": " << r.err;
    if (err) *err = r.err;
    return r.exit_code == 0 ? std::stoull(r.out) : 0;
  }

  std::string Logs(uint64_t job, int instance) {
    return c_.Cli({"task", "logs", absl::StrCat(job, "/", instance)}).out;
  }

  bool Succeeds(uint64_t job) {
    bool done = c_.WaitForJob(
        job, [](const Json& j) { return j["state"] == "SUCCEEDED" || j["state"] == "FAILED"; },
        absl::Seconds(90));
    if (done && c_.CliJson({"job", "get", std::to_string(job)})["job"]["state"] == "SUCCEEDED") {
      return true;
    }
    ADD_FAILURE() << "job " << job << ":\n"
                  << c_.Cli({"job", "get", std::to_string(job)}).out
                  << c_.Cli({"task", "list", std::to_string(job)}).out;
    return false;
  }

  std::set<std::string> Hosts(uint64_t job) {
    std::set<std::string> hosts;
    const Json tasks = c_.CliJson({"task", "list", std::to_string(job)});
    EXPECT_FALSE(tasks["tasks"].empty()) << tasks.dump();
    for (const Json& t : tasks["tasks"]) hosts.insert(t.value("host", ""));
    return hosts;
  }

  const std::string bin_;  // before c_: the agents' PATH holds it
  TestCluster c_;
};

TEST_F(PelotonE2E, BatchConfigsRunAsTheyAreAndTheirTasksSeePelotonsVariables) {
  std::string batch_err;
  const uint64_t batch = Create("batch.yaml", &batch_err);
  const uint64_t camel = Create("camel-case.yaml");
  const uint64_t zoned = Create("constraints.yaml");
  const uint64_t gpu = Create("gpu.yaml");
  const uint64_t backfill = Create("revocable.yaml");
  EXPECT_THAT(batch_err, HasSubstr("warning: " + kExamples + "batch.yaml:"));
  EXPECT_THAT(batch_err, HasSubstr("defaultConfig.resource.fdLimit: is not kept"));

  ASSERT_TRUE(Succeeds(batch));
  const std::string id = std::to_string(batch);
  EXPECT_THAT(Logs(batch, 0),
              HasSubstr(absl::StrCat("job ", id, " instance 0 task ", id, "-0 shard of 3")));
  EXPECT_THAT(Logs(batch, 2), HasSubstr(absl::StrCat("last shard ", id, "-2 of 3")));
  Json got = c_.CliJson({"job", "get", id});
  EXPECT_EQ(got["job"]["labels"]["peloton.ldap-groups"], "analytics,reporting") << got.dump();

  ASSERT_TRUE(Succeeds(camel));
  EXPECT_THAT(Logs(camel, 0), HasSubstr("driver 0"));
  EXPECT_THAT(Logs(camel, 1), HasSubstr("executor 1"));
  // `job update --format peloton`: the config with one more instance grows the job.
  std::string four = ReadFile(kExamples + "camel-case.yaml");
  four.replace(four.find("instanceCount: 3"), 16, "instanceCount: 4");
  RunResult update = c_.Cli({"job", "update", std::to_string(camel), "-f",
                             c_.WriteFile("camel-4.yaml", four), "--format", "peloton"});
  ASSERT_EQ(update.exit_code, 0) << update.err;
  ASSERT_TRUE(c_.WaitForJob(
      camel, [](const Json& j) { return j["task_counts"].value("SUCCEEDED", 0) == 4; },
      absl::Seconds(60)));
  EXPECT_THAT(Logs(camel, 3), HasSubstr("executor 3"));

  ASSERT_TRUE(Succeeds(zoned));
  for (const std::string& host : Hosts(zoned)) {
    EXPECT_TRUE(host == c_.agent_name(0) || host == c_.agent_name(1)) << host;
  }

  ASSERT_TRUE(Succeeds(gpu));
  EXPECT_THAT(Logs(gpu, 1), HasSubstr("rank 1 sees GPU 0"));

  ASSERT_TRUE(Succeeds(backfill));
  EXPECT_THAT(Logs(backfill, 1), HasSubstr(absl::StrCat("scanning as ", backfill, "-1")));
}

TEST_F(PelotonE2E, ServicesRunWithTheirChecksPortsAndVolumes) {
  const uint64_t web = Create("service.yaml");
  const uint64_t status = Create("service-http-check.yaml");
  const uint64_t ledger = Create("stateful.yaml");
  const uint64_t cache = Create("instance-config.yaml");
  auto healthy = [&](uint64_t job, int n) {
    return c_.WaitForJob(
        job, [n](const Json& j) { return j.value("healthy", 0) == n; }, absl::Seconds(90));
  };
  // The command check reads PELOTON_TASK_ID; one instance per host (a TASK constraint).
  ASSERT_TRUE(healthy(web, 2));
  EXPECT_EQ(Hosts(web).size(), 2u);
  EXPECT_THAT(Logs(web, 0), HasSubstr(absl::StrCat("as ", web, "-0")));
  // The HTTP check reaches the server that listens on the port named WEB_PORT.
  ASSERT_TRUE(healthy(status, 1));
  // The volume appears at Peloton's containerPath, and the command ran without a shell.
  ASSERT_TRUE(c_.WaitForJob(
      ledger, [](const Json& j) { return j["task_counts"].value("RUNNING", 0) == 1; },
      absl::Seconds(90)));
  EXPECT_TRUE(
      WaitFor([&] { return absl::StrContains(Logs(ledger, 0), "started at "); }, absl::Seconds(30)))
      << Logs(ledger, 0);
  // An instanceConfig entry with a health check of its own: instance 0 makes only the file
  // `primary` and checks it, the others make and check `ready`; each check passes only on the
  // instances it belongs to.
  ASSERT_TRUE(healthy(cache, 3)) << c_.Cli({"task", "list", std::to_string(cache)}).out;
  EXPECT_THAT(c_.CliJson({"job", "get", std::to_string(cache)}).value("spec_yaml", ""),
              HasSubstr("instance_overrides:\n  0:\n"));
  for (uint64_t job : {web, status, ledger, cache}) {
    EXPECT_EQ(c_.Cli({"job", "kill", std::to_string(job)}).exit_code, 0);
  }
}

TEST_F(PelotonE2E, ConvertPrintsTheKeptSpecAndABadConfigChangesNothing) {
  RunResult conv = c_.Cli({"convert", "peloton", kExamples + "service.yaml"});
  ASSERT_EQ(conv.exit_code, 0) << conv.err;
  auto strip = [](const std::string& text) {
    std::string out;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      if (!absl::StartsWith(line, "#") && !line.empty()) absl::StrAppend(&out, line, "\n");
    }
    return out;
  };
  EXPECT_EQ(strip(conv.out), strip(ReadFile(kExamples + "converted/service.yaml")));
  // The converted spec runs as a Paceline spec.
  const std::string spec = c_.WriteFile("web.yaml", conv.out);
  RunResult created = c_.Cli({"job", "create", "-f", spec, "--pool", "/analytics"});
  ASSERT_EQ(created.exit_code, 0) << created.err;

  const size_t jobs_before = c_.CliJson({"job", "list"})["jobs"].size();
  const std::string bad =
      c_.WriteFile("bad.yaml",
                   "name: j\ninstancecount: 2\ndefaultconfig:\n  resource: {cpulimit: 1, "
                   "memlimitmb: 64}\n  container: {type: 1, docker: {image: debian}}\n"
                   "  command: {value: run}\n");
  RunResult refused =
      c_.Cli({"job", "create", "-f", bad, "--format", "peloton", "--pool", "/analytics"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr(bad + ":5:14: defaultConfig.container: Mesos containers"));
  RunResult pool = c_.Cli({"pool", "create", "/other", "-f", bad, "--format", "peloton"});
  EXPECT_EQ(pool.exit_code, 1);
  EXPECT_THAT(pool.err, HasSubstr("instancecount: unknown key"));
  EXPECT_EQ(c_.CliJson({"job", "list"})["jobs"].size(), jobs_before);
  EXPECT_EQ(c_.Cli({"pool", "get", "/other"}).exit_code, 1);
  EXPECT_EQ(
      c_.Cli({"job", "create", "-f", bad, "--format", "mesos", "--pool", "/analytics"}).exit_code,
      2);
  EXPECT_EQ(c_.Cli({"job", "kill", created.out.substr(0, created.out.find('\n'))}).exit_code, 0);
}

}  // namespace
}  // namespace paceline::e2e
