// End to end: GPU discovery and health through NVML (docs/agent.md "GPUs"). No GPU on these
// machines: the agent loads the tests' fake NVML (agent/testing/fake_nvml.h) through the same
// dlopen path as libnvidia-ml.so.1. It reports a whole A100 and an A100 in MIG mode with two
// 1g.10gb instances; the test injects an XID into one instance while a task runs on it.
//
// Shown: MIG instances are devices placed by their model name, with their UUID as
// CUDA_VISIBLE_DEVICES; the XID marks the device unhealthy in `host list` and /metrics, the run
// on it gets a GPU_UNHEALTHY event that says why, the next task goes to the other instance, and
// nothing is placed on the unhealthy device even once it is free.

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/testing/fake_nvml.h"
#include "tests/e2e/cluster_fixture.h"

namespace paceline::e2e {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kPool[] = R"(
resources:
  cpu:    {reservation: 1}
  memory: {reservation: 1Gi}
  gpu:    {reservation: 3}
)";
constexpr char kMig[] = "A100-1g.10gb";

// The fake NVML's GPUs. Slot 0: a whole A100; slots 1 and 2: the two 1g.10gb instances of an A100
// in MIG mode (GPU instances 3 and 4).
const std::vector<agent::testing::FakeGpu>& Gpus() {
  static const auto* gpus = new std::vector<agent::testing::FakeGpu>{
      {.name = "NVIDIA A100-SXM4-80GB", .memory_mib = 81920, .uuid = "GPU-e2e-0", .minor = 0},
      {.name = "NVIDIA A100-SXM4-80GB",
       .memory_mib = 81920,
       .uuid = "GPU-e2e-1",
       .minor = 1,
       .migs = {{.slot = 0,
                 .gpu_instance = 3,
                 .name = "NVIDIA A100-SXM4-80GB MIG 1g.10gb",
                 .memory_mib = 9856,
                 .uuid = "MIG-e2e-1-0"},
                {.slot = 1,
                 .gpu_instance = 4,
                 .name = "NVIDIA A100-SXM4-80GB MIG 1g.10gb",
                 .memory_mib = 9856,
                 .uuid = "MIG-e2e-1-1"}}},
  };
  return *gpus;
}
// The MIG instance at `slot` (1 or 2).
const agent::testing::FakeMig& MigAt(int slot) { return Gpus()[1].migs[slot - 1]; }

class GpuHealthE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("fake-nvml");
    devices_ = dir_ + "/devices";
    events_ = dir_ + "/events";
    ASSERT_TRUE(agent::testing::WriteFakeNvmlDevices(devices_, Gpus()).ok());
    c_ = std::make_unique<TestCluster>(ClusterOptions{
        .agents = 1,
        .agent_env = {"PACELINE_FAKE_NVML_DEVICES=" + devices_,
                      "PACELINE_FAKE_NVML_EVENTS=" + events_},
        .agent_args = {"--nvml-library", agent::testing::FakeNvmlPath()},
    });
    RunResult r = c_->Cli({"pool", "create", "/g", "-f", c_->WriteFile("pool.yaml", kPool)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  void TearDown() override {
    c_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  Json HostGpus() {
    Json all = c_->CliJson({"host", "list"});
    return all["hosts"].empty() ? Json() : all["hosts"][0].value("gpus", Json::array());
  }
  // The device each task of `job` holds, from the host's holders.
  int DeviceOf(uint64_t job) {
    for (const Json& d : HostGpus()) {
      for (const Json& h : d.value("holders", Json::array())) {
        if (JsonInt(h["job_id"]) == static_cast<int64_t>(job)) return d.value("index", 0);
      }
    }
    return -1;
  }
  uint64_t MigJob(const std::string& name) {
    return c_->CreateJob("/g", absl::StrCat("name: ", name, R"(
instances: 1
task:
  command: "echo CVD=$CUDA_VISIBLE_DEVICES; sleep 600"
  resources: {cpu: 0.1, memory: 32Mi, gpu: 1}
  gpu_models: [")",
                                            kMig, R"("]
  kill_grace: 1s
)"));
  }
  std::string State(uint64_t job) {
    RunResult r = c_->Cli({"task", "get", absl::StrCat(job, "/0"), "-o", "json"});
    Json j = Json::parse(r.out, nullptr, false);
    return r.exit_code != 0 || j.is_discarded() ? "" : j["task"].value("state", "");
  }
  bool Running(uint64_t job) {
    return WaitFor([&] { return State(job) == "RUNNING"; }, absl::Seconds(60));
  }
  std::string dir_, devices_, events_;
  std::unique_ptr<TestCluster> c_;
};

TEST_F(GpuHealthE2E, AnXidMarksAMigInstanceUnhealthyAndTheNextTaskGoesToTheOther) {
  // Discovery: the whole GPU, then the MIG instances under their own model name.
  Json gpus = HostGpus();
  std::vector<std::string> models;
  for (const Json& d : gpus) models.push_back(d.value("model", ""));
  ASSERT_THAT(models, ElementsAre("NVIDIA A100-SXM4-80GB", kMig, kMig)) << gpus.dump();

  const uint64_t first = MigJob("first");
  ASSERT_TRUE(Running(first));
  const int sick = DeviceOf(first);
  ASSERT_TRUE(sick == 1 || sick == 2) << HostGpus().dump();
  const std::string uuid = MigAt(sick).uuid;
  ASSERT_TRUE(WaitFor(
      [&] {
        return absl::StrContains(c_->Cli({"task", "logs", absl::StrCat(first, "/0")}).out,
                                 "CVD=" + uuid);
      },
      absl::Seconds(20)))
      << c_->Cli({"task", "logs", absl::StrCat(first, "/0")}).out;

  // An XID 79 in its GPU instance.
  ASSERT_TRUE(agent::testing::InjectFakeNvmlEvent(
                  events_, absl::StrCat("xid 1 79 ", MigAt(sick).gpu_instance))
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return HostGpus()[sick].contains("fault"); }, absl::Seconds(30)))
      << HostGpus().dump();
  EXPECT_THAT(HostGpus()[sick]["fault"].value("reason", ""), HasSubstr("XID 79"));
  EXPECT_FALSE(HostGpus()[3 - sick].contains("fault")) << "the other instance is healthy";
  EXPECT_FALSE(HostGpus()[0].contains("fault")) << "and so is the whole GPU";
  EXPECT_THAT(c_->Cli({"host", "list"}).out,
              AllOf(HasSubstr("(unhealthy)"), HasSubstr(absl::StrCat("GPU ", sick, " (", kMig))));
  EXPECT_THAT(c_->HttpGet("/metrics"),
              HasSubstr(absl::StrCat("paceline_host_gpus{host=\"", c_->agent_name(0),
                                     "\",health=\"unhealthy\"} 1")));
  // The run on it is told why, and goes on.
  RunResult events = c_->Cli({"task", "events", absl::StrCat(first, "/0")});
  EXPECT_THAT(events.out, AllOf(HasSubstr("GPU_UNHEALTHY"), HasSubstr("XID 79")));

  // The next task goes to the other instance.
  const uint64_t second = MigJob("second");
  ASSERT_TRUE(Running(second));
  EXPECT_EQ(DeviceOf(second), 3 - sick);
  // Once the first ends, its device is free but unhealthy: nothing is placed there.
  ASSERT_EQ(c_->Cli({"job", "kill", std::to_string(first)}).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return DeviceOf(first) < 0; }, absl::Seconds(30)));
  const uint64_t third = MigJob("third");
  absl::SleepFor(absl::Seconds(3));
  EXPECT_NE(State(third), "RUNNING");
  EXPECT_EQ(DeviceOf(third), -1) << HostGpus().dump();
}

}  // namespace
}  // namespace paceline::e2e
