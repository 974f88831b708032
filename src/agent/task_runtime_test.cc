// TaskRuntime on real processes: exit statuses, environment, sandbox, ports, logs, health,
// readiness, idempotence. (Kill: task_runtime_kill_test.cc; cgroups:
// task_runtime_isolation_test.cc; restarts: task_runtime_recovery_test.cc.)

#include <sys/stat.h>
#include <unistd.h>

#include <set>

#include "absl/strings/str_split.h"
#include "agent/launch/wrapper_protocol.h"
#include "agent/testing/fake_nvml.h"
#include "agent/testing/runtime_test_fixture.h"

namespace paceline::agent::testing {
namespace {

TEST_F(RuntimeTest, ReportsExitCodesAndSignalsExactly) {
  std::optional<TaskEvent> ok = RunToEnd(Req(1, 0, 1, "true"));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->type, TaskEventType::kExited);
  EXPECT_EQ(ok->reason, TerminationReason::kExited);
  EXPECT_EQ(ok->exit_code, 0);

  std::optional<TaskEvent> three = RunToEnd(Req(1, 1, 1, "echo bye; exit 3"));
  ASSERT_TRUE(three);
  EXPECT_EQ(three->exit_code, 3);
  EXPECT_FALSE(three->signal);

  std::optional<TaskEvent> term = RunToEnd(Req(1, 2, 1, "kill -TERM $$"));
  ASSERT_TRUE(term);
  EXPECT_EQ(term->reason, TerminationReason::kSignaled);
  EXPECT_EQ(term->signal, SIGTERM);
  EXPECT_FALSE(term->exit_code);

  std::optional<TaskEvent> segv = RunToEnd(Req(1, 3, 1, "kill -SEGV $$"));
  ASSERT_TRUE(segv);
  EXPECT_EQ(segv->signal, SIGSEGV);

  std::optional<TaskEvent> missing = RunToEnd(Req(1, 4, 1, "/no/such/program"));
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->exit_code, 127);  // the shell's "not found"

  // Every run got RUNNING (with its pid) before its one terminal event.
  for (uint32_t i = 0; i < 5; ++i) {
    std::vector<TaskEvent> ev = log_.For(MakeRun(1, i, 1));
    ASSERT_EQ(ev.size(), 2u) << i;
    EXPECT_EQ(ev[0].type, TaskEventType::kRunning);
    EXPECT_GT(ev[0].pid, 0);
    EXPECT_TRUE(ev[1].terminal());
    EXPECT_LT(ev[0].seq, ev[1].seq);
  }
}

TEST_F(RuntimeTest, EnvironmentAndSandboxAreAsSpecified) {
  LaunchRequest r = Req(42, 7, 3,
                        "env > env.txt; pwd > pwd.txt; id -u > uid.txt; echo out; "
                        "echo err >&2; ls -ld . | cut -c1-10 > mode.txt");
  r.spec.ports = {"http", "admin-api"};
  r.spec.env = {{"GREETING", "hello world"}, {"PACELINE_JOB_ID", "spoofed"}};
  r.spec.volume = VolumeSpec{1 << 20};
  r.peers = std::map<uint32_t, GangPeer>{{0, {"host-a", {{"rpc", 31000}}}}};
  std::optional<TaskEvent> end = RunToEnd(r);
  ASSERT_TRUE(end);
  ASSERT_EQ(end->exit_code, 0) << end->ToString();

  std::string sb = Sandbox(r.run);
  EXPECT_EQ(ReadAll(sb + "/pwd.txt"), sb + "\n");
  EXPECT_EQ(ReadAll(sb + "/stdout"), "out\n");
  EXPECT_EQ(ReadAll(sb + "/stderr"), "err\n");
  // 0700, and the sticky bit: the mark of a started run (wrapper_protocol.h).
  EXPECT_EQ(ReadAll(sb + "/mode.txt"), "drwx-----T\n");
  std::map<std::string, std::string> env;
  for (absl::string_view line : absl::StrSplit(ReadAll(sb + "/env.txt"), '\n')) {
    std::pair<std::string, std::string> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
    env[kv.first] = kv.second;
  }
  EXPECT_EQ(env["PACELINE_JOB_ID"], "42");
  EXPECT_EQ(env["PACELINE_INSTANCE_ID"], "7");
  EXPECT_EQ(env["PACELINE_RUN_ID"], "42/7/3");
  EXPECT_EQ(env["PACELINE_TASK_ID"], "42/7");
  EXPECT_EQ(env["PACELINE_SANDBOX"], sb);
  EXPECT_EQ(env["GREETING"], "hello world");
  EXPECT_EQ(env["PACELINE_VOLUME"], config_.work_dir + "/volumes/42/7");
  EXPECT_EQ(env["PACELINE_PEERS_FILE"], sb + "/peers.json");
  EXPECT_NE(ReadAll(sb + "/peers.json").find("host-a"), std::string::npos);
  std::vector<TaskEvent> ev = log_.For(r.run);
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(env["PACELINE_PORT_HTTP"], std::to_string(ev[0].ports.at("http")));
  EXPECT_EQ(env["PACELINE_PORT_ADMIN_API"], std::to_string(ev[0].ports.at("admin-api")));
  EXPECT_EQ(ev[0].sandbox, sb);
  EXPECT_FALSE(env.contains("CUDA_VISIBLE_DEVICES"));  // this test host has no GPUs
  if (::geteuid() == 0) {
    EXPECT_EQ(ReadAll(sb + "/uid.txt"), "65534\n");  // nobody
    struct stat st;
    ASSERT_EQ(::stat(sb.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 65534u);
  }
}

TEST_F(RuntimeTest, TwoLiveTasksNeverShareAPort) {
  std::set<uint16_t> ports;
  for (uint32_t i = 0; i < 30; ++i) {
    LaunchRequest r = Req(2, i, 1, "sleep 30");
    r.spec.ports = {"a", "b"};
    ASSERT_TRUE(rt_->Launch(r).ok());
  }
  ASSERT_TRUE(Until([&] { return log_.all().size() >= 30; }));
  for (const RunStatus& s : rt_->ListRuns()) {
    for (const auto& [name, port] : s.ports) {
      EXPECT_TRUE(ports.insert(port).second) << "port " << port << " given twice";
    }
  }
  EXPECT_EQ(ports.size(), 60u);
  // The range has 100 ports and 60 are taken: 41 more cannot be had, and the ports the rejected
  // launch took on the way are given back (40 still fit afterwards).
  LaunchRequest extra = Req(2, 99, 1, "true");
  for (int i = 0; i < 41; ++i) extra.spec.ports.push_back("p" + std::to_string(i));
  EXPECT_EQ(rt_->Launch(extra).code(), absl::StatusCode::kResourceExhausted);
  extra.spec.ports.pop_back();
  absl::Status fits = rt_->Launch(extra);
  EXPECT_TRUE(fits.ok()) << fits;
}

TEST_F(RuntimeTest, LaunchIsIdempotentAndKillOfUnknownIsAcknowledged) {
  LaunchRequest r = Req(3, 0, 1, "sleep 30");
  ASSERT_TRUE(rt_->Launch(r).ok());
  ASSERT_TRUE(rt_->Launch(r).ok());
  ASSERT_TRUE(Until([&] { return !log_.For(r.run).empty(); }));
  EXPECT_EQ(rt_->ListRuns().size(), 1u);
  EXPECT_TRUE(rt_->Kill(MakeRun(3, 0, 99)).ok());
  ASSERT_TRUE(rt_->Kill(r.run, absl::ZeroDuration()).ok());
  ASSERT_TRUE(WaitTerminal(*rt_, log_, r.run));
  // Exactly one process ran: one RUNNING event.
  int running = 0;
  for (const TaskEvent& e : log_.For(r.run)) running += e.type == TaskEventType::kRunning;
  EXPECT_EQ(running, 1);
  // A finished run is not started again (once its runner is gone, until then a launch is taken
  // for a retransmission).
  EXPECT_TRUE(Until([&] { return rt_->Launch(r).code() == absl::StatusCode::kAlreadyExists; }));
  EXPECT_EQ(rt_->Launch(Req(3, 0, 2, "")).code(), absl::StatusCode::kInvalidArgument);
}

// A task that writes nothing leaves no log file, yet its run is known to have started: the
// sandbox carries the started mark (wrapper_protocol.h), so it is never launched twice.
TEST_F(RuntimeTest, ASilentTaskLeavesNoLogFilesAndIsStillNeverLaunchedTwice) {
  LaunchRequest r = Req(3, 1, 1, "true");
  std::optional<TaskEvent> end = RunToEnd(r);
  ASSERT_TRUE(end);
  ASSERT_EQ(end->exit_code, 0);
  std::string sb = Sandbox(r.run);
  EXPECT_FALSE(PathExists(sb + "/stdout"));
  EXPECT_FALSE(PathExists(sb + "/stderr"));
  EXPECT_TRUE(wrapper::HasStarted(sb));
  absl::StatusOr<LogChunk> out = rt_->ReadLog({r.run, LogStream::kStdout, std::nullopt, 0});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(out->data.empty());
  EXPECT_TRUE(out->finished);
  EXPECT_EQ(rt_->Launch(r).code(), absl::StatusCode::kAlreadyExists);

  // What a launch leaves when the agent dies before the run request: a sandbox without the mark.
  // The run never started, so it is launched.
  LaunchRequest cut = Req(3, 2, 1, "echo ran");
  ASSERT_EQ(::mkdir(Sandbox(cut.run).c_str(), 0700), 0);
  end = RunToEnd(cut);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->exit_code, 0) << end->ToString();
  EXPECT_EQ(ReadAll(Sandbox(cut.run) + "/stdout"), "ran\n");
  // A sandbox from before the mark existed: its stdout file says the run started.
  LaunchRequest old = Req(3, 3, 1, "true");
  ASSERT_TRUE(MakeDirs(Sandbox(old.run), 0700).ok());
  ASSERT_TRUE(WriteFile(Sandbox(old.run) + "/stdout", "").ok());
  EXPECT_EQ(rt_->Launch(old).code(), absl::StatusCode::kAlreadyExists);
}

TEST_F(RuntimeTest, LogsCanBeTailedAndFollowed) {
  LaunchRequest r = Req(4, 0, 1, "for i in 1 2 3 4 5; do echo line $i; done; echo oops >&2");
  ASSERT_TRUE(RunToEnd(r));
  absl::StatusOr<LogChunk> tail = rt_->ReadLog({r.run, LogStream::kStdout, 2});
  ASSERT_TRUE(tail.ok()) << tail.status();
  EXPECT_EQ(tail->data, "line 4\nline 5\n");
  EXPECT_TRUE(tail->finished);
  absl::StatusOr<LogChunk> from = rt_->ReadLog({r.run, LogStream::kStdout, std::nullopt, 7});
  EXPECT_EQ(from->data, "line 2\nline 3\nline 4\nline 5\n");
  EXPECT_EQ(from->next_offset, 35);
  EXPECT_EQ(rt_->ReadLog({r.run, LogStream::kStderr, 10})->data, "oops\n");
  EXPECT_EQ(rt_->ReadLog({MakeRun(4, 0, 9), LogStream::kStdout, 1}).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(RuntimeTest, EveryDescendantIsReapedWhenTheTaskEnds) {
  std::string pid_file = Shared("daemon.pid");
  LaunchRequest r = Req(5, 0, 1, HelperPath() + " daemon " + pid_file);
  std::optional<TaskEvent> end = RunToEnd(r);
  ASSERT_TRUE(end);
  EXPECT_EQ(end->exit_code, 0);
  int daemon = std::atoi(ReadAll(pid_file).c_str());
  ASSERT_GT(daemon, 0);
  EXPECT_FALSE(PidAlive(daemon)) << "the daemonized child " << daemon << " survived its task";
}

TEST_F(RuntimeTest, UsageReportsRunningTasksAndTheHost) {
  LaunchRequest r = Req(6, 0, 1, "sleep 30");
  ASSERT_TRUE(rt_->Launch(r).ok());
  ASSERT_TRUE(Until([&] { return !log_.For(r.run).empty(); }));
  UsageSnapshot u = rt_->Usage(absl::Now());
  EXPECT_GT(u.host.cpu_total_usec, u.host.cpu_busy_usec);
  EXPECT_GT(u.host.memory_total_bytes, 0);
  ASSERT_EQ(u.tasks.size(), 1u);
  EXPECT_EQ(u.tasks[0].run, r.run);
  EXPECT_GT(u.tasks[0].memory_bytes, 0);
  EXPECT_EQ(u.tasks[0].from_cgroup, rt_->host().isolation != CgroupMode::kNone);
}

TEST_F(RuntimeTest, HttpHealthCheckGoesHealthyThenUnhealthy) {
  std::string fail_flag = dir_.Sub("fail");
  LaunchRequest r = Req(7, 0, 1, HelperPath() + " http $PACELINE_PORT_HTTP " + fail_flag);
  r.spec.ports = {"http"};
  HealthSpec h;
  h.check = HttpCheck{"http", "/health"};
  h.interval = absl::Milliseconds(50);
  h.timeout = absl::Seconds(2);
  h.failures = 3;
  r.spec.health = h;
  ASSERT_TRUE(rt_->Launch(r).ok());
  auto health = [&] {
    std::optional<TaskEvent> e = log_.Last(r.run, TaskEventType::kHealth);
    return e ? e->health : HealthState::kUnknown;
  };
  ASSERT_TRUE(Until([&] { return health() == HealthState::kHealthy; }))
      << ReadAll(Sandbox(r.run) + "/stderr");
  EXPECT_EQ(rt_->GetRun(r.run)->health, HealthState::kHealthy);
  ASSERT_TRUE(WriteFile(fail_flag, "").ok());
  ASSERT_TRUE(Until([&] { return health() == HealthState::kUnhealthy; }));
  // Exactly two transitions, in order, and no flapping events in between.
  std::vector<HealthState> seen;
  for (const TaskEvent& e : log_.For(r.run)) {
    if (e.type == TaskEventType::kHealth) seen.push_back(e.health);
  }
  EXPECT_EQ(seen, (std::vector<HealthState>{HealthState::kHealthy, HealthState::kUnhealthy}));
}

TEST_F(RuntimeTest, CommandHealthCheckRunsInTheTaskContext) {
  LaunchRequest r = Req(7, 1, 1, "sleep 30");
  HealthSpec h;
  h.check = CommandCheck{"test \"$(pwd)\" = \"$PACELINE_SANDBOX\""};
  h.interval = absl::Milliseconds(50);
  h.failures = 1;
  r.spec.health = h;
  ASSERT_TRUE(rt_->Launch(r).ok());
  ASSERT_TRUE(Until([&] { return log_.Last(r.run, TaskEventType::kHealth).has_value(); }));
  EXPECT_EQ(log_.Last(r.run, TaskEventType::kHealth)->health, HealthState::kHealthy);
}

TEST_F(RuntimeTest, ReadinessFollowsItsCheckAndNeverStopsTheTask) {
  // Ready while `flag` exists: NOT_READY at first (two failures), READY once it is there,
  // NOT_READY again when it goes, the task running throughout, its health checked apart.
  std::string flag = Shared("ready");
  LaunchRequest r = Req(7, 2, 1, "sleep 30");
  HealthSpec ready;
  ready.check = CommandCheck{"test -f " + flag};
  ready.interval = absl::Milliseconds(50);
  ready.timeout = absl::Seconds(2);
  ready.failures = 2;
  r.spec.readiness = ready;
  HealthSpec live;
  live.check = CommandCheck{"true"};
  live.interval = absl::Milliseconds(50);
  r.spec.health = live;
  ASSERT_TRUE(rt_->Launch(r).ok());
  auto readiness = [&] {
    std::optional<TaskEvent> e = log_.Last(r.run, TaskEventType::kReadiness);
    return e ? e->readiness : ReadinessState::kUnknown;
  };
  ASSERT_TRUE(Until([&] { return readiness() == ReadinessState::kNotReady; }));
  EXPECT_EQ(rt_->GetRun(r.run)->readiness, ReadinessState::kNotReady);
  const int pid = rt_->GetRun(r.run)->pid;
  ASSERT_TRUE(WriteFile(flag, "").ok());
  ASSERT_TRUE(Until([&] { return readiness() == ReadinessState::kReady; }));
  EXPECT_EQ(rt_->GetRun(r.run)->readiness, ReadinessState::kReady);
  ASSERT_EQ(::unlink(flag.c_str()), 0);
  ASSERT_TRUE(Until([&] { return readiness() == ReadinessState::kNotReady; }));

  std::optional<RunStatus> now = rt_->GetRun(r.run);
  ASSERT_TRUE(now);
  EXPECT_EQ(now->state, RunState::kRunning);
  EXPECT_EQ(now->pid, pid);
  EXPECT_TRUE(PidAlive(pid));
  EXPECT_EQ(now->health, HealthState::kHealthy);
  EXPECT_FALSE(log_.Terminal(r.run));
  std::vector<ReadinessState> seen;
  for (const TaskEvent& e : log_.For(r.run)) {
    if (e.type == TaskEventType::kReadiness) seen.push_back(e.readiness);
    if (e.type == TaskEventType::kHealth) {
      EXPECT_EQ(e.health, HealthState::kHealthy);
    }
  }
  EXPECT_EQ(seen, (std::vector<ReadinessState>{ReadinessState::kNotReady, ReadinessState::kReady,
                                               ReadinessState::kNotReady}));
  ASSERT_TRUE(log_.Last(r.run, TaskEventType::kHealth));
}

TEST_F(RuntimeTest, LaunchRejectionsLeaveNothingBehind) {
  LaunchRequest r = Req(8, 0, 1, "true");
  r.spec.user = "no-such-user-xyz";
  absl::Status s = rt_->Launch(r);
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(PathExists(Sandbox(r.run)));
  r.spec.user.clear();
  EXPECT_TRUE(rt_->Launch(r).ok());  // the same run can now be launched
  EXPECT_TRUE(WaitTerminal(*rt_, log_, r.run));
}

// An agent whose GPUs NVML finds (the fake library): an A100 in MIG mode with two instances.
class NvmlRuntimeTest : public RuntimeTest {
 protected:
  void Customize(AgentConfig& c) override {
    FakeGpu a100{"NVIDIA A100-SXM4-80GB", 81920, "GPU-a", 0, {}, true};
    a100.migs = {{1, 7, "NVIDIA A100-SXM4-80GB MIG 3g.40gb", 40192, "MIG-a-1"},
                 {2, 8, "NVIDIA A100-SXM4-80GB MIG 3g.40gb", 40192, "MIG-a-2"}};
    ASSERT_TRUE(WriteFakeNvmlDevices(dir_.Sub("devices"), {a100}).ok());
    UseFakeNvml(dir_.Sub("devices"), dir_.Sub("events"));
    c.gpus.reset();
    c.nvml_library = FakeNvmlPath();
  }
};

TEST_F(NvmlRuntimeTest, NvmlsDevicesAreTheHostsGpusAndTheirFaultsReachTheRuntime) {
  ASSERT_EQ(rt_->host().gpus.size(), 2u);
  EXPECT_EQ(rt_->host().gpus[1].model, "A100-3g.40gb");
  EXPECT_EQ(rt_->host().gpus[1].cdi_name, "0:2");
  EXPECT_TRUE(rt_->GpuFaults().empty());
  const uint64_t before = rt_->GpuHealthVersion();

  LaunchRequest r = Req(9, 0, 1, "echo \"$CUDA_VISIBLE_DEVICES\" > cuda.txt");
  const Resources& asked = r.spec.resources;
  r.spec.resources =
      Resources::Of(asked.cpu_milli(), asked.memory_bytes(), asked.disk_bytes(), 1000);
  r.gpu_devices = {1};
  std::optional<TaskEvent> end = RunToEnd(r);
  ASSERT_TRUE(end);
  ASSERT_EQ(end->exit_code, 0) << end->ToString();
  EXPECT_EQ(ReadAll(Sandbox(r.run) + "/cuda.txt"), "MIG-a-2\n");

  ASSERT_TRUE(InjectFakeNvmlEvent(dir_.Sub("events"), "xid 0 79 8").ok());
  absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (rt_->GpuFaults().empty() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(20));
  std::vector<GpuFault> faults = rt_->GpuFaults();
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].device, 1);
  EXPECT_EQ(faults[0].reason, "XID 79: GPU has fallen off the bus");
  EXPECT_GT(rt_->GpuHealthVersion(), before);
}

TEST_F(RuntimeTest, WithTheGpusOverrideNoHealthIsWatched) {
  EXPECT_TRUE(rt_->GpuFaults().empty());
  EXPECT_EQ(rt_->GpuHealthVersion(), 0u);
}

}  // namespace
}  // namespace paceline::agent::testing
