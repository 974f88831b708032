// Trace replay and fill mode on a small synthetic trace (always), and fill mode on the real
// Alibaba GPU trace when PACELINE_ALIBABA_TRACE names its directory (skipped otherwise).

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

#include "sim/fill.h"
#include "sim/sim_driver.h"
#include "sim/trace_replay.h"

namespace paceline::sim {
namespace {

constexpr const char* kNodes =
    "sn,cpu_milli,memory_mib,gpu,model\n"
    "n0,32000,131072,2,V100\n"
    "n1,32000,131072,2,V100\n"
    "n2,32000,131072,4,T4\n"
    "n3,16000,65536,0,\n";
constexpr const char* kTasks =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n"
    "p0,4000,8192,1,1000,,LS,Running,0,600,0\n"
    "p1,2000,4096,1,500,V100,LS,Running,10,130,10\n"
    "p2,2000,4096,1,500,,LS,Running,10,,10\n"
    "p3,8000,16384,2,1000,T4,BE,Running,60,3600,60\n"
    "p4,1000,2048,0,0,,BE,Running,120,180,120\n"
    "p5,0,2048,0,0,,BE,Failed,130,140,\n";

class TraceFillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("pl-trace-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            std::to_string(reinterpret_cast<uintptr_t>(this)));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "openb_node_list_all_node.csv") << kNodes;
    std::ofstream(dir_ / "openb_pod_list_default.csv") << kTasks;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(TraceFillTest, LoadsTheDirectoryOrFiles) {
  absl::StatusOr<AlibabaTraceInput> all = LoadAlibabaTrace({dir_.string()}, false);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->nodes.size(), 4u);
  EXPECT_EQ(all->tasks.size(), 6u);
  EXPECT_EQ(all->gpus(), 8);
  absl::StatusOr<AlibabaTraceInput> gpu =
      LoadAlibabaTrace({(dir_ / "openb_node_list_all_node.csv").string(),
                        (dir_ / "openb_pod_list_default.csv").string()},
                       /*gpu_nodes_only=*/true);
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  EXPECT_EQ(gpu->nodes.size(), 3u);
  EXPECT_FALSE(LoadAlibabaTrace({(dir_ / "openb_node_list_all_node.csv").string()}, false).ok());
  EXPECT_FALSE(LoadAlibabaTrace({(dir_ / "other.csv").string()}, false).ok());
}

TEST_F(TraceFillTest, ReplaysTasksFromCreationToDeletion) {
  absl::StatusOr<AlibabaTraceInput> in = LoadAlibabaTrace({dir_.string()}, false);
  ASSERT_TRUE(in.ok()) << in.status();
  size_t skipped = 0;
  TraceReplayOptions o;
  o.cycle_every = absl::Seconds(1);
  absl::StatusOr<Scenario> sc = TraceScenario(*in, o, &skipped);
  ASSERT_TRUE(sc.ok()) << sc.status();
  EXPECT_EQ(skipped, 1u);  // p5 asks no cpu
  ASSERT_EQ(sc->jobs.size(), 5u);
  EXPECT_EQ(sc->hosts.size(), 4u);
  EXPECT_EQ(sc->hosts[2].gpu_model, "T4");
  EXPECT_EQ(sc->run_for, absl::Seconds(3601));
  EXPECT_EQ(sc->jobs[1].spec.task.gpu_models, std::vector<std::string>{"V100"});
  EXPECT_EQ(sc->jobs[1].spec.task.resources[Dim::kGpu], 500);
  EXPECT_EQ(sc->jobs[2].spec.task.duration, absl::ZeroDuration());  // no deletion: to the end

  absl::StatusOr<SimResult> r = RunScenario(*sc);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->jobs.size(), 5u);
  for (const JobOutcome& j : r->jobs) {
    ASSERT_EQ(j.latencies.size(), 1u) << j.name;  // each started once, at its arrival cycle
    EXPECT_EQ(j.latencies[0], absl::ZeroDuration()) << j.name;
  }
  EXPECT_EQ(r->jobs[0].finished, absl::Seconds(600));   // p0
  EXPECT_EQ(r->jobs[1].finished, absl::Seconds(130));   // p1
  EXPECT_FALSE(r->jobs[2].finished.has_value());        // p2 runs to the end
  EXPECT_EQ(r->jobs[3].finished, absl::Seconds(3600));  // p3, 2 T4 GPUs
  EXPECT_EQ(r->capacity[Dim::kGpu], 8000);
}

TEST_F(TraceFillTest, FillIsDeterministicAndMonotonic) {
  absl::StatusOr<AlibabaTraceInput> in = LoadAlibabaTrace({dir_.string()}, /*gpu_nodes_only=*/true);
  ASSERT_TRUE(in.ok()) << in.status();
  in->tasks.pop_back();  // p5: no cpu
  FillOptions o;
  o.profiles = {"best-fit", "fgd", "random-fit"};
  o.repetitions = 3;
  o.seed = 11;
  absl::StatusOr<Json> a = RunFill(*in, o);
  absl::StatusOr<Json> b = RunFill(*in, o);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  a->erase("timing");
  b->erase("timing");
  EXPECT_EQ(a->dump(), b->dump());
  for (const std::string& p : o.profiles) {
    const Json& buckets = (*a)["profiles"][p]["buckets"];
    ASSERT_EQ(buckets.size(), 130u) << p;
    EXPECT_EQ(buckets[0]["arrived_pct"].get<double>(), 1.0);
    double failed = 0;
    for (const Json& bk : buckets) {
      double un = bk["unallocated_pct"]["mean"].get<double>();
      EXPECT_GE(un, 0) << p;
      EXPECT_LE(un, 100) << p;
      EXPECT_GE(bk["failed"]["mean"].get<double>(), failed) << p;  // failures only accumulate
      failed = bk["failed"]["mean"].get<double>();
    }
    EXPECT_GT(failed, 0) << p;  // 130 % of the GPUs cannot all fit
    EXPECT_LT((*a)["profiles"][p]["final"]["gpu_allocated_pct"]["mean"].get<double>(), 100.001);
  }
  o.profiles = {"no-such-profile"};
  EXPECT_FALSE(RunFill(*in, o).ok());
  // Weights instead of a name: the same scorers, tried with other weights.
  o.profiles = {"pack=1+gpu_fragmentation=16+gpu_stranding=32"};
  absl::StatusOr<Json> w = RunFill(*in, o);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE((*w)["profiles"].contains(o.profiles[0]));
  o.profiles = {"pack=1+gpu_stranding=x"};
  absl::StatusOr<Json> bad = RunFill(*in, o);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("gpu_stranding=x"), std::string::npos) << bad.status();
  o.protocol = "fgd";
  o.profiles = {"paper-fgd", "pack=1+gpu_stranding=2"};
  EXPECT_TRUE(RunFill(*in, o).ok());
  o.protocol = "nope";
  EXPECT_FALSE(RunFill(*in, o).ok());
}

// A cluster shaped like the Alibaba trace's gpuspec lists: many hosts of a common model, a few
// of a scarce one (T4) that a fifth of the GPU tasks can use alone. Tasks of any model that
// take T4s leave T4-only tasks nowhere to go and the common model's devices idle.
TEST(ModelPressureFill, TasksOfAnyModelLeaveTheScarceModelToTheTasksThatNeedIt) {
  AlibabaTraceInput in;
  for (int i = 0; i < 24; ++i) {
    in.nodes.push_back(AlibabaNode{absl::StrCat("g", i), 64000, 262144, 8, "G2"});
  }
  for (int i = 0; i < 16; ++i) {
    in.nodes.push_back(AlibabaNode{absl::StrCat("t", i), 96000, 262144, 2, "T4"});
  }
  for (int i = 0; i < 100; ++i) {
    AlibabaTask t;
    t.name = absl::StrFormat("p%03d", i);
    t.cpu_milli = 4000 + 1000 * (i % 5);
    t.memory_mib = 8192;
    t.num_gpu = i % 10 == 9 ? 0 : 1;
    t.gpu_milli = t.num_gpu == 0 ? 0 : (i % 3 == 0 ? 500 : 1000);
    if (i % 7 == 1) t.gpu_models = {"T4"};
    in.tasks.push_back(std::move(t));
  }
  FillOptions o;
  o.protocol = "fgd";
  o.seed = 42;
  o.repetitions = 10;
  const std::string without = "pack=1+gpu_fragmentation=16+gpu_stranding=32";
  o.profiles = {"default", without};
  absl::StatusOr<Json> r = RunFill(in, o);
  ASSERT_TRUE(r.ok()) << r.status();
  auto unallocated = [&](const std::string& p) {
    return (*r)["profiles"][p]["final"]["unallocated_at_100_pct"]["mean"].get<double>();
  };
  EXPECT_LT(unallocated("default"), unallocated(without) - 1) << r->dump();
}

TEST(RealTraceTest, FillAllocatesMostOfTheGpus) {
  const char* dir = std::getenv("PACELINE_ALIBABA_TRACE");
  if (dir == nullptr) {
    GTEST_SKIP() << "set PACELINE_ALIBABA_TRACE to the directory of the Alibaba GPU trace "
                    "(cluster-trace-gpu-v2023) to run this test";
  }
  absl::StatusOr<AlibabaTraceInput> in = LoadAlibabaTrace({dir}, false);
  ASSERT_TRUE(in.ok()) << in.status();
  FillOptions o;
  o.profiles = {"best-fit", "gpu-packing"};
  absl::StatusOr<Json> r = RunFill(*in, o);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const std::string& p : o.profiles) {
    double allocated = (*r)["profiles"][p]["final"]["gpu_allocated_pct"]["mean"].get<double>();
    EXPECT_GT(allocated, 88) << p;
    EXPECT_LT(allocated, 100) << p;
  }
}

}  // namespace
}  // namespace paceline::sim
