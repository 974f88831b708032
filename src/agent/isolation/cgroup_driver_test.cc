// The cgroup drivers against a fake cgroupfs (plain directories and files), plus the helpers.
// The real hierarchies are exercised by task_runtime_isolation_test.cc.

#include <sys/stat.h>

#include "agent/file_util.h"
#include "agent/isolation/cgroup_driver.h"
#include "agent/testing/agent_test_util.h"
#include "gtest/gtest.h"

namespace paceline::agent {
namespace {

using testing::ReadAll;
using testing::TempDir;

void Touch(const std::string& path, const std::string& content = "") {
  ASSERT_TRUE(MakeDirs(Dirname(path), 0755).ok());
  ASSERT_TRUE(WriteFile(path, content).ok());
}

// Creates the interface files a real kernel would show in a new v2 cgroup.
void FakeV2Cgroup(const std::string& dir) {
  for (const char* f :
       {"cgroup.procs", "cgroup.kill", "memory.max", "memory.swap.max", "cpu.weight", "cpu.max",
        "pids.max", "memory.current", "memory.events", "cpu.stat", "cgroup.subtree_control"}) {
    Touch(dir + "/" + f);
  }
}

TEST(CgroupHelpersTest, ParsesAndConverts) {
  using namespace cgroup_internal;
  EXPECT_EQ(ParsePids("12\n34\n\n"), (std::vector<pid_t>{12, 34}));
  EXPECT_EQ(KeyedValue("low 0\nhigh 2\noom_kill 3\n", "oom_kill", -1), 3);
  EXPECT_EQ(KeyedValue("low 0\n", "oom_kill", -1), -1);
  EXPECT_EQ(CpuWeightV2(1000), 100);
  EXPECT_EQ(CpuWeightV2(0), 100);
  EXPECT_EQ(CpuWeightV2(1), 1);
  EXPECT_EQ(CpuSharesV1(500), 512);
  EXPECT_EQ(CpuQuotaUsec(250), 25000);
  EXPECT_EQ(CpuQuotaUsec(1), 1000);
}

TEST(CgroupV2Test, SetsUpTheAgentTreeAndTaskLimits) {
  TempDir root;
  Touch(root.path() + "/cgroup.controllers", "cpuset cpu io memory pids\n");
  Touch(root.path() + "/cgroup.subtree_control", "");
  AgentConfig c;
  c.name = "a1";
  c.cgroup_root = root.path();
  // The fake kernel: the agent dir gets its subtree_control file when created.
  Touch(root.path() + "/paceline.a1/cgroup.subtree_control", "");
  absl::StatusOr<std::unique_ptr<CgroupDriver>> d = CreateCgroupV2Driver(c);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)->mode(), CgroupMode::kV2);
  EXPECT_EQ(ReadAll(root.path() + "/cgroup.subtree_control"), "+cpu +memory +pids");
  EXPECT_EQ(ReadAll(root.path() + "/paceline.a1/cgroup.subtree_control"), "+cpu +memory +pids");
  EXPECT_TRUE(PathExists(root.path() + "/paceline.a1/supervisors"));
  EXPECT_EQ((*d)->SupervisorProcsFiles(),
            (std::vector<std::string>{root.path() + "/paceline.a1/supervisors/cgroup.procs"}));

  std::string task = root.path() + "/paceline.a1/5_0_1";
  FakeV2Cgroup(task);
  CgroupLimits limits{64 << 20, 1500, true, 100};
  ASSERT_TRUE((*d)->Create("5_0_1", limits).ok());
  EXPECT_EQ(ReadAll(task + "/memory.max"), std::to_string(64 << 20));
  EXPECT_EQ(ReadAll(task + "/memory.swap.max"), "0");
  EXPECT_EQ(ReadAll(task + "/cpu.weight"), "150");
  EXPECT_EQ(ReadAll(task + "/cpu.max"), "150000 100000");
  EXPECT_EQ(ReadAll(task + "/pids.max"), "100");
  EXPECT_EQ((*d)->ProcsFiles("5_0_1"), (std::vector<std::string>{task + "/cgroup.procs"}));

  ASSERT_TRUE(WriteFile(task + "/memory.current", "12345\n").ok());
  ASSERT_TRUE(WriteFile(task + "/cpu.stat", "usage_usec 777\nuser_usec 1\n").ok());
  ASSERT_TRUE(WriteFile(task + "/memory.events", "low 0\noom 1\noom_kill 2\n").ok());
  absl::StatusOr<CgroupStats> st = (*d)->Stats("5_0_1");
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->memory_bytes, 12345);
  EXPECT_EQ(st->cpu_usec, 777);
  EXPECT_EQ(st->oom_kills, 2u);

  (*d)->KillAll("5_0_1");
  EXPECT_EQ(ReadAll(task + "/cgroup.kill"), "1");
  EXPECT_EQ((*d)->List(), (std::vector<std::string>{"5_0_1"}));
}

TEST(CgroupV2Test, UnlimitedAndRefusedWithoutMemoryController) {
  TempDir root;
  Touch(root.path() + "/cgroup.controllers", "cpu pids\n");
  Touch(root.path() + "/cgroup.subtree_control", "");
  AgentConfig c;
  c.cgroup_root = root.path();
  absl::StatusOr<std::unique_ptr<CgroupDriver>> d = CreateCgroupV2Driver(c);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(d.status().message().find("memory controller"), std::string::npos);
}

TEST(CgroupV1Test, CreatesTheTaskCgroupInEveryHierarchy) {
  TempDir root;
  for (const char* h : {"memory", "cpu", "cpuacct", "pids"})
    Touch(root.path() + "/" + h + "/cgroup.procs");
  AgentConfig c;
  c.name = "a1";
  c.cgroup_root = root.path();
  absl::StatusOr<std::unique_ptr<CgroupDriver>> d = CreateCgroupV1Driver(c);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ((*d)->mode(), CgroupMode::kV1);
  // Task cgroups are named by the driver ("task.<n>"), not after the run.
  std::string m = root.path() + "/memory/paceline.a1/task.0";
  std::string cpu = root.path() + "/cpu/paceline.a1/task.0";
  std::string acct = root.path() + "/cpuacct/paceline.a1/task.0";
  std::string pids = root.path() + "/pids/paceline.a1/task.0";
  Touch(m + "/memory.limit_in_bytes");
  Touch(m + "/cgroup.procs", "");
  for (const char* f : {"cpu.shares", "cpu.cfs_period_us", "cpu.cfs_quota_us"})
    Touch(cpu + "/" + f);
  Touch(pids + "/pids.max");
  Touch(acct + "/cpuacct.usage", "5000000\n");
  EXPECT_EQ((*d)->Create("9_1_2", CgroupLimits{32 << 20, 250, true, 50}).value(), "task.0");
  EXPECT_EQ(ReadAll(m + "/memory.limit_in_bytes"), std::to_string(32 << 20));
  EXPECT_EQ(ReadAll(cpu + "/cpu.shares"), "256");
  EXPECT_EQ(ReadAll(cpu + "/cpu.cfs_quota_us"), "25000");
  EXPECT_EQ(ReadAll(pids + "/pids.max"), "50");
  EXPECT_EQ((*d)->ProcsFiles("task.0").size(), 4u);

  Touch(m + "/memory.usage_in_bytes", "4096\n");
  Touch(m + "/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
  absl::StatusOr<CgroupStats> st = (*d)->Stats("task.0");
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ(st->memory_bytes, 4096);
  EXPECT_EQ(st->cpu_usec, 5000);
  EXPECT_EQ(st->oom_kills, 1u);
  ASSERT_TRUE(WriteFile(m + "/cgroup.procs", "").ok());
  EXPECT_TRUE((*d)->Pids("task.0").value().empty());
}

TEST(CgroupV1Test, NewCgroupsAreNumberedAfterTheOnesThereAre) {
  TempDir root;
  for (const char* h : {"memory", "cpu", "cpuacct", "pids"}) {
    Touch(root.path() + "/" + h + "/cgroup.procs");
    // A restarted agent: its runs' cgroups are still there, and one of another naming.
    ASSERT_TRUE(MakeDirs(root.path() + "/" + h + "/paceline.a1/task.7", 0755).ok());
    ASSERT_TRUE(MakeDirs(root.path() + "/" + h + "/paceline.a1/3_0_1", 0755).ok());
  }
  AgentConfig c;
  c.name = "a1";
  c.cgroup_root = root.path();
  std::unique_ptr<CgroupDriver> d = CreateCgroupV1Driver(c).value();
  EXPECT_EQ(d->Create("4_0_1", CgroupLimits{}).value(), "task.8");
  EXPECT_EQ(d->Create("5_0_1", CgroupLimits{}).value(), "task.9");
}

// A v1 driver for agent "a1" on a fake tree of the four hierarchies under `root`.
std::unique_ptr<CgroupDriver> FakeV1Driver(const std::string& root) {
  for (const char* h : {"memory", "cpu", "cpuacct", "pids"})
    Touch(root + "/" + h + "/cgroup.procs");
  AgentConfig c;
  c.name = "a1";
  c.cgroup_root = root;
  return CreateCgroupV1Driver(c).value();
}

// The files of a fake v1 task cgroup `name` in every hierarchy (see the test above).
void FakeV1Cgroup(const std::string& root, const std::string& name) {
  std::string m = root + "/memory/paceline.a1/" + name;
  for (const char* f : {"memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "cgroup.procs"})
    Touch(m + "/" + f);
  Touch(m + "/memory.usage_in_bytes", "4096\n");
  Touch(m + "/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
  for (const char* f : {"cpu.shares", "cpu.cfs_quota_us"})
    Touch(root + "/cpu/paceline.a1/" + name + "/" + f);
  Touch(root + "/pids/paceline.a1/" + name + "/pids.max");
  Touch(root + "/cpuacct/paceline.a1/" + name + "/cpuacct.usage", "5000000\n");
}

TEST(CgroupV1Test, AFinishedRunsCgroupIsKeptAndReusedWritingOnlyWhatDiffers) {
  TempDir root;
  std::unique_ptr<CgroupDriver> d = FakeV1Driver(root.path());
  auto at = [&](const char* h, const std::string& name, const char* file) {
    return root.path() + "/" + h + "/paceline.a1/" + name + "/" + file;
  };
  auto exists = [&](const std::string& name) {
    return PathExists(root.path() + "/memory/paceline.a1/" + name);
  };
  FakeV1Cgroup(root.path(), "task.0");
  ASSERT_EQ(d->Create("1_0_1", CgroupLimits{32 << 20, 250, true, 50}).value(), "task.0");
  ASSERT_TRUE(d->Release("task.0").ok());
  for (const char* h : {"memory", "cpu", "cpuacct", "pids"}) {
    EXPECT_TRUE(PathExists(root.path() + "/" + h + "/paceline.a1/task.0")) << h;
  }
  // The next task takes it, under the same name: the new memory limit (and memory+swap), the
  // same cpu and pids values left as they are, the CPU counter zeroed.
  // (The fake's files are plain files: a write does not truncate them, so they start empty.)
  ASSERT_TRUE(WriteFile(at("pids", "task.0", "pids.max"), "untouched").ok());
  ASSERT_TRUE(WriteFile(at("cpuacct", "task.0", "cpuacct.usage"), "").ok());
  for (const char* f : {"memory.limit_in_bytes", "memory.memsw.limit_in_bytes"})
    ASSERT_TRUE(WriteFile(at("memory", "task.0", f), "").ok());
  ASSERT_EQ(d->Create("2_0_1", CgroupLimits{64 << 20, 250, true, 50}).value(), "task.0");
  EXPECT_EQ(ReadAll(at("memory", "task.0", "memory.limit_in_bytes")), std::to_string(64 << 20));
  EXPECT_EQ(ReadAll(at("memory", "task.0", "memory.memsw.limit_in_bytes")),
            std::to_string(64 << 20));
  EXPECT_EQ(ReadAll(at("cpu", "task.0", "cpu.shares")), "256");
  EXPECT_EQ(ReadAll(at("cpu", "task.0", "cpu.cfs_quota_us")), "25000");
  EXPECT_EQ(ReadAll(at("pids", "task.0", "pids.max")), "untouched");
  EXPECT_EQ(ReadAll(at("cpuacct", "task.0", "cpuacct.usage")), "0");
  // Other limits: each knob that differs is written, "no quota" and "no limit" included.
  ASSERT_TRUE(d->Release("task.0").ok());
  for (const char* f : {"memory.limit_in_bytes", "memory.memsw.limit_in_bytes"})
    ASSERT_TRUE(WriteFile(at("memory", "task.0", f), "").ok());
  ASSERT_TRUE(WriteFile(at("cpu", "task.0", "cpu.cfs_quota_us"), "").ok());
  ASSERT_EQ(d->Create("3_0_1", CgroupLimits{0, 2000, false, 50}).value(), "task.0");
  EXPECT_EQ(ReadAll(at("memory", "task.0", "memory.limit_in_bytes")), "-1");
  EXPECT_EQ(ReadAll(at("cpu", "task.0", "cpu.shares")), "2048");
  EXPECT_EQ(ReadAll(at("cpu", "task.0", "cpu.cfs_quota_us")), "-1");

  // Not kept: a cgroup that counted an OOM kill, one with a process left, one holding memory.
  // (Removal is an rmdir, which the fake's plain files make fail: the directory stays, and the
  // next Create makes a new cgroup instead of taking it.)
  ASSERT_TRUE(WriteFile(at("memory", "task.0", "memory.oom_control"), "oom_kill 1\n").ok());
  d->Release("task.0").IgnoreError();
  FakeV1Cgroup(root.path(), "task.1");
  ASSERT_EQ(d->Create("4_0_1", CgroupLimits{}).value(), "task.1");
  ASSERT_TRUE(WriteFile(at("memory", "task.1", "cgroup.procs"), "123\n").ok());
  d->Release("task.1").IgnoreError();
  FakeV1Cgroup(root.path(), "task.2");
  ASSERT_EQ(d->Create("5_0_1", CgroupLimits{}).value(), "task.2");
  ASSERT_TRUE(WriteFile(at("memory", "task.2", "memory.usage_in_bytes"), "8388608\n").ok());
  d->Release("task.2").IgnoreError();
  // A cgroup this driver did not create (a run recovered after a restart) is removed too.
  FakeV1Cgroup(root.path(), "6_0_1");
  d->Release("6_0_1").IgnoreError();
  FakeV1Cgroup(root.path(), "task.3");
  EXPECT_EQ(d->Create("7_0_1", CgroupLimits{}).value(), "task.3") << "none was kept";
  EXPECT_TRUE(exists("task.0") && exists("task.1") && exists("task.2") && exists("6_0_1"));
}

TEST(CgroupV1Test, KeptCgroupsNoTaskTookSinceTheLastTrimAreDropped) {
  TempDir root;
  std::unique_ptr<CgroupDriver> d = FakeV1Driver(root.path());
  for (const char* name : {"task.0", "task.1", "task.2"}) FakeV1Cgroup(root.path(), name);
  ASSERT_EQ(d->Create("1_0_1", CgroupLimits{}).value(), "task.0");
  ASSERT_EQ(d->Create("2_0_1", CgroupLimits{}).value(), "task.1");
  ASSERT_TRUE(d->Release("task.0").ok());
  ASSERT_TRUE(d->Release("task.1").ok());
  EXPECT_EQ(d->Create("3_0_1", CgroupLimits{}).value(), "task.1") << "the newest is taken first";
  d->TrimReleased();  // one was taken since the start, so one stays kept
  EXPECT_EQ(d->Create("4_0_1", CgroupLimits{}).value(), "task.0");

  ASSERT_TRUE(d->Release("task.0").ok());
  d->TrimReleased();  // taken since the last trim: kept
  d->TrimReleased();  // none taken since the last trim: dropped (an rmdir, failing on the fake)
  EXPECT_EQ(d->Create("5_0_1", CgroupLimits{}).value(), "task.2") << "a new one, not task.0";
}

// With the devices hierarchy, a task cgroup denies the nodes of the GPUs the task does not
// hold; a kept cgroup that denies other nodes is not reused (taking a denial back would need
// devices.allow, which a parent allowing less refuses).
TEST(CgroupV1Test, AGpuTasksCgroupDeniesTheOtherGpusNodes) {
  TempDir root;
  Touch(root.path() + "/devices/cgroup.procs");
  std::unique_ptr<CgroupDriver> d = FakeV1Driver(root.path());
  auto deny = [&](const std::string& name) {
    return root.path() + "/devices/paceline.a1/" + name + "/devices.deny";
  };
  FakeV1Cgroup(root.path(), "task.0");
  Touch(deny("task.0"));
  CgroupLimits limits;
  limits.deny_devices = {DeviceRule{'c', 195, 1}};
  ASSERT_EQ(d->Create("1_0_1", limits).value(), "task.0");
  EXPECT_EQ(ReadAll(deny("task.0")), "c 195:1 rwm");
  EXPECT_EQ(d->ProcsFiles("task.0").size(), 5u);  // the task joins the devices hierarchy too
  // The same denials: reused; others: a new cgroup.
  ASSERT_TRUE(d->Release("task.0").ok());
  ASSERT_EQ(d->Create("2_0_1", limits).value(), "task.0");
  ASSERT_TRUE(d->Release("task.0").ok());
  FakeV1Cgroup(root.path(), "task.1");
  Touch(deny("task.1"));
  limits.deny_devices = {DeviceRule{'c', 195, 0}};
  ASSERT_EQ(d->Create("3_0_1", limits).value(), "task.1");
  EXPECT_EQ(ReadAll(deny("task.1")), "c 195:0 rwm");
}

TEST(CgroupDetectTest, FallsBackToNoneWithAReason) {
  TempDir root;  // neither v2 nor v1 layout
  AgentConfig c;
  c.cgroup_root = root.path();
  absl::StatusOr<std::unique_ptr<CgroupDriver>> d = CreateCgroupDriver(c);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)->mode(), CgroupMode::kNone);
  EXPECT_NE((*d)->Describe().find("memory"), std::string::npos) << (*d)->Describe();
  c.cgroup = CgroupPreference::kNone;
  EXPECT_EQ(CreateCgroupDriver(c).value()->Describe(), "none: disabled by configuration");
}

}  // namespace
}  // namespace paceline::agent
