// End to end on the multi-host bed (4 agents, each in a network namespace of its own): PyTorch
// DDP with the unchanged example script (examples/frameworks/pytorch-ddp/train.py) and
// `gang.rendezvous: pytorch`. The job succeeds, every rank ends with the same parameters, and the
// model learned; with a rank killed mid-run, or the agent of a rank's host killed (on a bed of a
// host more), the gang restarts together and resumes from its checkpoint.

#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr int kRanks = 4;
constexpr double kLossBelow = 0.2;  // the untrained model's loss is about 3

constexpr char kPool[] = R"(
description: frameworks
resources:
  cpu:    {reservation: 4, limit: 8}
  memory: {reservation: 4Gi}
)";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A directory every rank (running as the task user) may write.
std::string SharedDir(const std::string& path) {
  std::filesystem::create_directories(path);
  std::filesystem::permissions(path, std::filesystem::perms::all);
  return path;
}

class PyTorchE2E : public ::testing::Test {
 protected:
  PyTorchE2E() {
    options_.agents = kRanks;
    options_.agent_cpu = "2";
    options_.agent_memory = "4Gi";
    options_.netns = true;  // each rank on a host of its own, with its own address
  }
  void SetUp() override {
    cluster_ = std::make_unique<TestCluster>(options_);
    TestCluster& c = *cluster_;
    RunResult r = c.Cli({"pool", "create", "/ml", "-f", c.WriteFile("pool.yaml", kPool)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(c.WaitForHosts(options_.agents));
    shared_ = SharedDir(c.dir() + "/shared");
    // The script as the example ships it, where the task user can read it.
    std::filesystem::copy_file(PACELINE_SOURCE_DIR "/examples/frameworks/pytorch-ddp/train.py",
                               shared_ + "/train.py");
    ::chmod((shared_ + "/train.py").c_str(), 0644);
  }

  // The example's job (examples/frameworks/pytorch-ddp/job.yaml), with this test's paths.
  uint64_t Submit(const std::string& extra_args) {
    std::string example = ReadAll(PACELINE_SOURCE_DIR "/examples/frameworks/pytorch-ddp/job.yaml");
    std::string args = absl::StrCat("--checkpoint-dir ", shared_, "/checkpoints --out-dir ",
                                    shared_, "/out ", extra_args);
    std::string yaml = absl::StrCat(R"(
name: ddp
type: batch
instances: 4
sla: {min_running_instances: 4}
gang: {rendezvous: pytorch, restart: gang, max_restarts: 3}
task:
  command: "/usr/bin/python3 )",
                                    shared_, "/train.py ", args, R"("
  resources: {cpu: 1, memory: 1Gi}
  constraints:
    - {max_per_host: 1}
)");
    // The example's own spec parses on this cluster's master too.
    EXPECT_THAT(example, HasSubstr("rendezvous: pytorch"));
    RunResult dry =
        cluster_->Cli({"job", "validate", "-f", cluster_->WriteFile("ex.yaml", example)});
    EXPECT_EQ(dry.exit_code, 0) << dry.out << dry.err;
    return cluster_->CreateJob("/ml", yaml);
  }

  // Every rank's result-RANK.json, by rank.
  std::map<int, Json> Results() {
    std::map<int, Json> out;
    for (int r = 0; r < kRanks; ++r) {
      Json j =
          Json::parse(ReadAll(absl::StrCat(shared_, "/out/result-", r, ".json")), nullptr, false);
      if (!j.is_discarded()) out[r] = j;
    }
    return out;
  }

  void ExpectIdenticalReplicas(const std::map<int, Json>& results) {
    ASSERT_EQ(results.size(), static_cast<size_t>(kRanks));
    const std::string sum = results.at(0)["checksum"];
    for (const auto& [rank, r] : results) {
      EXPECT_EQ(r["world"], kRanks) << r.dump();
      EXPECT_EQ(r["checksum"], sum) << "rank " << rank << " diverged: " << r.dump();
      EXPECT_LT(r["loss"].get<double>(), kLossBelow) << r.dump();
    }
  }

  // Waits until rank 0 saved the checkpoint of `step`.
  bool WaitForCheckpoint(int step) {
    return WaitFor(
        [&] {
          return std::filesystem::exists(absl::StrCat(shared_, "/checkpoints/step-", step, ".pt"));
        },
        absl::Seconds(240));
  }

  // After the gang of `job` restarted once for `cause` ("gang restart 1/3: ..."): the job
  // succeeded with identical replicas that learned, every rank ran again, met at a new
  // rendezvous (TORCHELASTIC_RESTART_COUNT 1) and resumed from a checkpoint of step
  // `resumed_from` or later, and every member's events give the cause.
  void ExpectResumedAfterGangRestart(uint64_t job, int resumed_from, const std::string& cause) {
    TestCluster& c = *cluster_;
    RunResult wait = c.Cli({"job", "wait", std::to_string(job), "--timeout", "300s"});
    ASSERT_EQ(wait.exit_code, 0) << wait.out << wait.err;
    Json got = c.CliJson({"job", "get", std::to_string(job)});
    EXPECT_EQ(got["job"]["state"], "SUCCEEDED") << got.dump();

    std::map<int, Json> results = Results();
    ExpectIdenticalReplicas(results);
    for (const auto& [rank, r] : results) {
      EXPECT_GE(r["restart"].get<int>(), 1) << r.dump();
      EXPECT_GE(r["resumed_from"].get<int>(), resumed_from) << r.dump();
    }
    // Every member ran again, and says where it resumed.
    Json tasks = c.CliJson({"task", "list", std::to_string(job)});
    for (const Json& t : tasks["tasks"]) EXPECT_GE(t["run"].get<int>(), 2) << t.dump();
    for (int i = 0; i < kRanks; ++i) {
      RunResult logs = c.Cli({"task", "logs", absl::StrCat(job, "/", i)});
      ASSERT_EQ(logs.exit_code, 0) << logs.err;
      EXPECT_THAT(logs.out, HasSubstr(absl::StrCat("rank ", i, ": resumed from step ")));
      EXPECT_THAT(logs.out, HasSubstr("restart 1"));
    }
    // The gang's restart is in every member's events, with its cause.
    for (int i = 0; i < kRanks; ++i) {
      RunResult events = c.Cli({"task", "events", absl::StrCat(job, "/", i)});
      ASSERT_EQ(events.exit_code, 0) << events.err;
      EXPECT_THAT(events.out, HasSubstr(cause)) << events.out;
    }
  }

  ClusterOptions options_;
  std::unique_ptr<TestCluster> cluster_;
  std::string shared_;
};

TEST_F(PyTorchE2E, DdpTrainsAcrossFourHostsWithIdenticalReplicas) {
  TestCluster& c = *cluster_;
  uint64_t job = Submit("--steps 40");
  ASSERT_GT(job, 0u);
  RunResult wait = c.Cli({"job", "wait", std::to_string(job), "--timeout", "240s"});
  ASSERT_EQ(wait.exit_code, 0) << wait.out << wait.err;
  Json got = c.CliJson({"job", "get", std::to_string(job)});
  EXPECT_EQ(got["job"]["state"], "SUCCEEDED") << got.dump();
  ExpectIdenticalReplicas(Results());

  // One rank per host, and each rank's own account of its rendezvous: instance i is rank i,
  // all met at instance 0's address.
  Json tasks = c.CliJson({"task", "list", std::to_string(job)});
  std::set<std::string> hosts;
  std::string rank0_host;
  for (const Json& t : tasks["tasks"]) {
    hosts.insert(t["host"]);
    if (t["instance"] == 0) rank0_host = t["host"];
  }
  EXPECT_EQ(hosts.size(), static_cast<size_t>(kRanks)) << tasks.dump();
  std::string master_addr;
  for (int i = 0; i < kRanks; ++i) {
    if (c.agent_name(i) == rank0_host) master_addr = c.host_address(i);
  }
  ASSERT_FALSE(master_addr.empty()) << rank0_host;
  for (int i = 0; i < kRanks; ++i) {
    RunResult logs = c.Cli({"task", "logs", absl::StrCat(job, "/", i)});
    ASSERT_EQ(logs.exit_code, 0) << logs.err;
    EXPECT_THAT(logs.out,
                HasSubstr(absl::StrCat("rank ", i, "/4 (local rank 0) joined ", master_addr, ":")));
    EXPECT_THAT(logs.out, HasSubstr("restart 0"));
    EXPECT_THAT(logs.out, HasSubstr(absl::StrCat("rank ", i, ": final loss")));
  }
}

// A rank killed (SIGKILL) mid-training: the gang is stopped and placed again together, meets
// at a new rendezvous (TORCHELASTIC_RESTART_COUNT 1), resumes from rank 0's last checkpoint, and
// still ends with identical replicas that learned.
TEST_F(PyTorchE2E, ARankKilledMidTrainingRestartsTheGangFromItsCheckpoint) {
  uint64_t job = Submit("--steps 60 --checkpoint-every 10 --step-delay 0.15");
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(WaitForCheckpoint(20)) << "no checkpoint at step 20";
  const pid_t victim = std::stoi(ReadAll(shared_ + "/out/pid-2"));
  ASSERT_GT(victim, 1);
  ASSERT_EQ(::kill(victim, SIGKILL), 0) << "rank 2 (pid " << victim << ") already gone";
  // Its peers may see the broken connection and fail first: whichever the master heard first
  // is the cause.
  ExpectResumedAfterGangRestart(job, 20, "gang restart 1/3: instance ");
}

// A bed of a host more than the gang needs, hosts taken for lost after 3 s. The agent of rank 1's
// host dies (SIGKILL) mid-training, its rank left running there as on a host cut off: once the
// host is lost, the gang is stopped and placed again on the four hosts left, meets at a new
// rendezvous, resumes from rank 0's last checkpoint and still ends with identical replicas.
class PyTorchHostLossE2E : public PyTorchE2E {
 protected:
  PyTorchHostLossE2E() {
    options_.agents = kRanks + 1;
    options_.host_timeout = "3s";
  }
};

TEST_F(PyTorchHostLossE2E, AHostLostMidTrainingRestartsTheGangOnTheOthersFromItsCheckpoint) {
  TestCluster& c = *cluster_;
  // Long enough that the host is taken for lost (3 s) before the ranks left would be done.
  uint64_t job = Submit("--steps 80 --checkpoint-every 10 --step-delay 0.15");
  ASSERT_GT(job, 0u);
  ASSERT_TRUE(WaitForCheckpoint(20)) << "no checkpoint at step 20";
  const std::string victim = c.CliJson({"task", "get", absl::StrCat(job, "/1")})["task"]["host"];
  int v = -1;
  for (int i = 0; i < options_.agents; ++i) {
    if (c.agent_name(i) == victim) v = i;
  }
  ASSERT_GE(v, 0) << "rank 1 runs on " << victim;
  c.agent(v).Signal(SIGKILL);
  ASSERT_TRUE(c.agent(v).WaitExit(absl::Seconds(10)).has_value());

  ExpectResumedAfterGangRestart(
      job, 20, absl::StrCat("gang restart (not counted): instance 1 lost its host ", victim));
  // The new runs are on the four hosts left, one rank each.
  std::set<std::string> hosts;
  const Json tasks = c.CliJson({"task", "list", std::to_string(job)});
  for (const Json& t : tasks["tasks"]) {
    EXPECT_NE(t["host"], victim) << t.dump();
    hosts.insert(t["host"]);
  }
  EXPECT_EQ(hosts.size(), static_cast<size_t>(kRanks));
}

}  // namespace
}  // namespace paceline::e2e
