// Isolation on the cgroup hierarchy this machine has (v2 or v1), and the log cap.

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/testing/runtime_test_fixture.h"

namespace paceline::agent::testing {
namespace {

int64_t SizeOf(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 ? st.st_size : 0;
}

class IsolationTest : public RuntimeTest {
 protected:
  void SkipWithoutCgroups() {
    if (rt_->host().isolation == CgroupMode::kNone) {
      GTEST_SKIP() << "no writable cgroup hierarchy on this machine ("
                   << rt_->host().isolation_detail << "); isolation cannot be tested";
    }
  }
};

TEST_F(IsolationTest, ReportsWhichCgroupVersionIsUsed) {
  const HostInfo& h = rt_->host();
  EXPECT_FALSE(h.isolation_detail.empty());
  if (h.isolation == CgroupMode::kNone) {
    EXPECT_EQ(h.isolation_detail.rfind("none: ", 0), 0u) << h.isolation_detail;
  } else {
    EXPECT_NE(h.isolation_detail.find("paceline." + config_.name), std::string::npos);
  }
  std::cout << "isolation: " << CgroupModeName(h.isolation) << " — " << h.isolation_detail << "\n";
}

// The memory cgroup's path in a /proc/PID/cgroup text (cgroup v1): "/paceline.<agent>/task.<n>".
std::string MemoryCgroupV1(const std::string& proc_cgroup) {
  for (absl::string_view line : absl::StrSplit(proc_cgroup, '\n')) {
    std::vector<absl::string_view> f = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (f.size() == 3 && f[1] == "memory") return std::string(f[2]);
  }
  return "";
}

TEST_F(IsolationTest, TaskOverItsMemoryLimitIsOomKilled) {
  SkipWithoutCgroups();
  // 32Mi limit, 200Mi wanted: `tail` buffers the whole newline-free stream in memory.
  LaunchRequest r = Req(20, 0, 1, "head -c 200M /dev/zero | tail");
  r.spec.resources = Resources::Of(1000, 32LL << 20);
  std::optional<TaskEvent> end = RunToEnd(r);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->type, TaskEventType::kExited);
  EXPECT_EQ(end->reason, TerminationReason::kOomKilled) << end->ToString();
  EXPECT_NE(end->message.find("memory limit"), std::string::npos);

  // The same with the C++ helper (allocates and touches the memory itself).
  LaunchRequest h = Req(20, 1, 1, HelperPath() + " alloc 200");
  h.spec.resources = Resources::Of(1000, 32LL << 20);
  end = RunToEnd(h);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->reason, TerminationReason::kOomKilled) << end->ToString();
  // The shell reports its child's SIGKILL as 128 + 9.
  EXPECT_TRUE(end->signal == SIGKILL || end->exit_code == 128 + SIGKILL) << end->ToString();

  // Within the limit, nothing happens.
  LaunchRequest fine = Req(20, 2, 1, HelperPath() + " alloc 8");
  fine.spec.resources = Resources::Of(1000, 64LL << 20);
  end = RunToEnd(fine);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->reason, TerminationReason::kExited);
  EXPECT_EQ(end->exit_code, 0);
}

TEST_F(IsolationTest, TaskRunsInItsOwnCgroupWhichIsRemovedAfterwards) {
  SkipWithoutCgroups();
  LaunchRequest r = Req(21, 0, 1, "cat /proc/self/cgroup > cgroup.txt");
  r.spec.resources = Resources::Of(500, 64LL << 20);
  std::optional<TaskEvent> end = RunToEnd(r);
  ASSERT_TRUE(end);
  ASSERT_EQ(end->exit_code, 0);
  std::string cg = ReadAll(Sandbox(r.run) + "/cgroup.txt");
  if (rt_->host().isolation == CgroupMode::kV2) {
    EXPECT_NE(cg.find("paceline." + config_.name + "/21_0_1"), std::string::npos) << cg;
    std::string dir = config_.cgroup_root + "/paceline." + config_.name + "/21_0_1";
    EXPECT_FALSE(PathExists(dir)) << dir << " was not removed";
  } else {
    // cgroup v1: "task.<n>", in every hierarchy; kept empty for the next task, or removed.
    std::string mem = MemoryCgroupV1(cg);
    EXPECT_EQ(mem.rfind("/paceline." + config_.name + "/task.", 0), 0u) << cg;
    for (const char* h : {"cpu", "pids"}) {
      EXPECT_NE(cg.find(absl::StrCat(h, ":", mem)), std::string::npos) << h << ": " << cg;
    }
    std::string procs = config_.cgroup_root + "/memory" + mem + "/cgroup.procs";
    EXPECT_TRUE(!PathExists(procs) || ReadAll(procs).empty()) << procs;
  }
}

// An agent kills what it finds in its cgroups that no run of its own owns: a second agent of
// the same name (another work dir) would kill the first one's tasks. It refuses to start.
TEST_F(IsolationTest, ASecondAgentOfTheSameNameRefusesToStartAndKillsNothing) {
  SkipWithoutCgroups();
  LaunchRequest r = Req(23, 0, 1, "sleep 30");
  ASSERT_TRUE(rt_->Launch(r).ok());
  ASSERT_TRUE(Until([&] { return !log_.For(r.run).empty(); }));
  AgentConfig twin = config_;
  twin.work_dir = dir_.Sub("twin");
  absl::StatusOr<std::unique_ptr<TaskRuntime>> second = TaskRuntime::Create(twin);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("another agent named '" + config_.name + "'"),
            std::string::npos)
      << second.status();
  EXPECT_NE(second.status().message().find("--name"), std::string::npos);
  // The first agent's task still runs.
  std::optional<RunStatus> run = rt_->GetRun(r.run);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(::kill(log_.For(r.run)[0].pid, 0), 0);
}

TEST_F(IsolationTest, LimitsAreWrittenFromTheRequest) {
  SkipWithoutCgroups();
  LaunchRequest r = Req(22, 0, 1, "sleep 30");
  r.spec.resources = Resources::Of(250, 48LL << 20);
  ASSERT_TRUE(rt_->Launch(r).ok());
  ASSERT_TRUE(Until([&] { return !log_.For(r.run).empty(); }));
  std::string base = config_.cgroup_root;
  if (rt_->host().isolation == CgroupMode::kV2) {
    std::string d = base + "/paceline." + config_.name + "/22_0_1";
    EXPECT_EQ(ReadAll(d + "/memory.max"), std::to_string(48 << 20) + "\n");
    EXPECT_EQ(ReadAll(d + "/cpu.max"), "25000 100000\n");
    EXPECT_EQ(ReadAll(d + "/cpu.weight"), "25\n");
  } else {
    std::string mem =
        MemoryCgroupV1(ReadAll(absl::StrCat("/proc/", log_.For(r.run)[0].pid, "/cgroup")));
    std::string m = base + "/memory" + mem;
    std::string c = base + "/cpu" + mem;
    EXPECT_EQ(ReadAll(m + "/memory.limit_in_bytes"), std::to_string(48 << 20) + "\n");
    EXPECT_EQ(ReadAll(c + "/cpu.cfs_quota_us"), "25000\n");
    EXPECT_EQ(ReadAll(c + "/cpu.shares"), "256\n");
  }
}

// cgroup v1 keeps a finished run's cgroup for the next task (cgroup_v1_driver.cc): each task must
// still be in a cgroup of its own, with its own limits, whether they go down (memory first, then
// memory+swap) or up (the other way round, or the kernel refuses).
TEST_F(IsolationTest, AFinishedRunsCgroupServesTheNextTaskWithItsOwnLimits) {
  SkipWithoutCgroups();
  if (rt_->host().isolation != CgroupMode::kV1) GTEST_SKIP() << "cgroup v2 creates every cgroup";
  std::string agent_dir = config_.cgroup_root + "/memory/paceline." + config_.name;
  auto cgroups = [&] {
    std::set<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(agent_dir)) {
      if (e.is_directory()) names.insert(e.path().filename().string());
    }
    return names;
  };
  // A task's cgroup is released before its end is reported. It is kept unless it holds more than
  // the bound (e.g. the page cache of a binary this task was the first to read): then another try.
  std::optional<TaskEvent> end;
  std::set<std::string> kept;
  for (int i = 0; i < 5 && kept.empty(); ++i) {
    LaunchRequest warm = Req(24, 1000 + i, 1, "true");
    warm.spec.resources = Resources::Of(500, 64LL << 20);
    end = RunToEnd(warm);
    ASSERT_TRUE(end);
    ASSERT_EQ(end->exit_code, 0);
    kept = cgroups();
  }
  ASSERT_EQ(kept.size(), 1u);
  const std::string name = *kept.begin();
  EXPECT_EQ(name.rfind("task.", 0), 0u) << name;

  // Writes the task's own memory cgroup and its limit.
  std::string show =
      absl::StrCat("p=$(grep ':memory:' /proc/self/cgroup | cut -d: -f3); echo $p > cgroup.txt; d=",
                   config_.cgroup_root, "/memory$p; cat $d/memory.limit_in_bytes > limit.txt");
  for (int64_t mib : {32, 128}) {
    LaunchRequest r = Req(24, static_cast<int>(mib), 1, show);
    r.spec.resources = Resources::Of(250, mib << 20);
    end = RunToEnd(r);
    ASSERT_TRUE(end);
    ASSERT_EQ(end->exit_code, 0) << end->ToString();
    EXPECT_EQ(ReadAll(Sandbox(r.run) + "/cgroup.txt"),
              absl::StrCat("/paceline.", config_.name, "/", name, "\n"))
        << "the kept cgroup was not taken";
    EXPECT_EQ(ReadAll(Sandbox(r.run) + "/limit.txt"), absl::StrCat(mib << 20, "\n"));
    // Kept again (unless what its files left charged to it is over the bound: then removed).
    std::set<std::string> now = cgroups();
    EXPECT_TRUE(now.empty() || now == kept) << "a second cgroup was made";
  }

  // The supervisor that ran in the kept cgroup kept its cgroup.procs files open. If the cgroup
  // was removed and made again under its name (as a restarted agent may), those files are dead:
  // the task joins the new one by path.
  if (cgroups() != kept) return;  // not kept this time: nothing of the kind to test
  for (const auto& h : std::filesystem::directory_iterator(config_.cgroup_root)) {
    std::string d = absl::StrCat(h.path().string(), "/paceline.", config_.name, "/", name);
    if (::access(d.c_str(), F_OK) != 0) continue;
    ASSERT_EQ(::rmdir(d.c_str()), 0) << d;
    ASSERT_EQ(::mkdir(d.c_str(), 0755), 0) << d;
  }
  LaunchRequest r = Req(24, 64, 1, show);
  r.spec.resources = Resources::Of(250, 64LL << 20);
  end = RunToEnd(r);
  ASSERT_TRUE(end);
  ASSERT_EQ(end->exit_code, 0) << end->ToString();
  EXPECT_EQ(ReadAll(Sandbox(r.run) + "/cgroup.txt"),
            absl::StrCat("/paceline.", config_.name, "/", name, "\n"));
  EXPECT_EQ(ReadAll(Sandbox(r.run) + "/limit.txt"), absl::StrCat(64LL << 20, "\n"));
}

class LogCapTest : public RuntimeTest {
  void Customize(AgentConfig& c) override { c.log_max_bytes = 64 << 10; }
};

TEST_F(LogCapTest, AChattyTaskCannotFillTheDisk) {
  LaunchRequest r = Req(23, 0, 1, HelperPath() + " spew 3000000");  // ~3 MB through a 64 KiB cap
  std::optional<TaskEvent> end = RunToEnd(r);
  ASSERT_TRUE(end);
  ASSERT_EQ(end->exit_code, 0);
  std::string sb = Sandbox(r.run);
  int64_t on_disk = SizeOf(sb + "/stdout") + SizeOf(sb + "/stdout.1");
  EXPECT_LE(on_disk, 64 << 10);
  EXPECT_GT(on_disk, 32 << 10);
  // The newest output is what is kept: the last line is the last one written.
  absl::StatusOr<LogChunk> tail = rt_->ReadLog({r.run, LogStream::kStdout, 1});
  ASSERT_TRUE(tail.ok());
  absl::StatusOr<LogChunk> all = rt_->ReadLog({r.run, LogStream::kStdout, std::nullopt, 0});
  EXPECT_EQ(all->next_offset, 3000000);
  EXPECT_GT(all->skipped, 3000000 - (64 << 10) - 1);
  EXPECT_EQ(tail->data.back(), all->data.back());
}

}  // namespace
}  // namespace paceline::agent::testing

namespace paceline::agent::testing {
namespace {

class NoCgroupTest : public RuntimeTest {
  void Customize(AgentConfig& c) override { c.cgroup = CgroupPreference::kNone; }
};

TEST_F(NoCgroupTest, WithoutCgroupsTasksStillRunAndTheAgentSaysSo) {
  EXPECT_EQ(rt_->host().isolation, CgroupMode::kNone);
  EXPECT_EQ(rt_->host().isolation_detail, "none: disabled by configuration");
  std::optional<TaskEvent> end = RunToEnd(Req(24, 0, 1, "exit 4"));
  ASSERT_TRUE(end);
  EXPECT_EQ(end->exit_code, 4);
  LaunchRequest r = Req(24, 1, 1, "sleep 30");
  ASSERT_TRUE(rt_->Launch(r).ok());
  ASSERT_TRUE(Until([&] { return !log_.For(r.run).empty(); }));
  // The main process's RSS, read from /proc: zero while the shell is still between fork and
  // exec, so the test waits for the first reading that has it.
  UsageSnapshot u;
  EXPECT_TRUE(Until([&] {
    u = rt_->Usage(absl::Now());
    return u.tasks.size() == 1 && u.tasks[0].memory_bytes > 0;
  }));
  ASSERT_EQ(u.tasks.size(), 1u);
  EXPECT_FALSE(u.tasks[0].from_cgroup);
  EXPECT_GT(u.tasks[0].memory_bytes, 0);
  ASSERT_TRUE(rt_->Kill(r.run, absl::Seconds(5)).ok());
  end = WaitTerminal(*rt_, log_, r.run);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->reason, TerminationReason::kKilledGracefully);
}

class RetentionTest : public RuntimeTest {
  void Customize(AgentConfig& c) override { c.sandbox_retention = absl::Minutes(5); }
};

TEST_F(RetentionTest, FinishedSandboxesAreRemovedAfterTheRetention) {
  LaunchRequest done = Req(25, 0, 1, "echo bye");
  ASSERT_TRUE(RunToEnd(done));
  LaunchRequest live = Req(25, 1, 1, "sleep 30");
  ASSERT_TRUE(rt_->Launch(live).ok());
  ASSERT_TRUE(Until([&] { return !log_.For(live.run).empty(); }));
  // A sandbox in the layout of earlier agents, sandboxes/<job>/<instance>/<run>: its logs are
  // read, its run is not launched again, and it expires like the others.
  LaunchRequest old = Req(25, 2, 1, "echo again");
  std::string old_dir = absl::StrCat(config_.work_dir, "/sandboxes/25/2/1");
  ASSERT_TRUE(MakeDirs(old_dir, 0711).ok());
  ASSERT_TRUE(WriteFile(old_dir + "/stdout", "old\n").ok());
  absl::StatusOr<LogChunk> old_log = rt_->ReadLog({old.run, LogStream::kStdout, 1});
  ASSERT_TRUE(old_log.ok()) << old_log.status();
  EXPECT_EQ(old_log->data, "old\n");
  EXPECT_EQ(rt_->Launch(old).code(), absl::StatusCode::kAlreadyExists);
  rt_->Poll(absl::Now() + absl::Minutes(1));  // within the retention: kept
  EXPECT_TRUE(PathExists(Sandbox(done.run)));
  EXPECT_TRUE(PathExists(old_dir));
  rt_->Poll(absl::Now() + absl::Hours(1));  // the next collection, past the retention
  EXPECT_FALSE(PathExists(Sandbox(done.run)));
  EXPECT_FALSE(PathExists(absl::StrCat(config_.work_dir, "/sandboxes/25")));
  EXPECT_TRUE(PathExists(Sandbox(live.run)));  // a live run keeps its sandbox
  EXPECT_EQ(rt_->ReadLog({done.run, LogStream::kStdout, 1}).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace paceline::agent::testing
