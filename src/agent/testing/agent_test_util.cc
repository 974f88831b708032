#include "agent/testing/agent_test_util.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "agent/file_util.h"
#include "agent/host/proc_stat.h"
#include "common/check.h"

namespace paceline::agent::testing {

TempDir::TempDir() {
  char tmpl[] = "/tmp/paceline-agent-test-XXXXXX";
  char* p = ::mkdtemp(tmpl);
  PL_CHECK(p != nullptr) << "mkdtemp failed";
  path_ = p;
  ::chmod(path_.c_str(), 0755);
}

TempDir::~TempDir() { RemoveTree(path_).IgnoreError(); }

std::string WrapperPath() { return PACELINE_TEST_WRAPPER; }
std::string HelperPath() { return PACELINE_TEST_HELPER; }

AgentConfig TestConfig(const std::string& work_dir) {
  static std::atomic<int> counter{0};
  AgentConfig c;
  c.name = absl::StrCat("test", ::getpid(), "-", counter++);
  c.work_dir = work_dir;
  c.wrapper_path = WrapperPath();
  c.gpus = std::vector<GpuDevice>{};  // never ask NVML or nvidia-smi in tests
  // Below Linux's ephemeral range (32768-60999): the agent skips ports it cannot bind, and the
  // outgoing connections of tests running beside this one must not take ports from its range.
  int slot = ::getpid() % 200;
  c.port_min = static_cast<uint16_t>(10000 + slot * 100);
  c.port_max = static_cast<uint16_t>(c.port_min + 99);
  return c;
}

void RemoveAgentCgroups(const AgentConfig& config) {
  for (const char* h : {"", "/memory", "/cpu", "/cpuacct", "/pids"}) {
    std::string dir = absl::StrCat(config.cgroup_root, h, "/paceline.", config.name);
    ::rmdir(absl::StrCat(dir, "/supervisors").c_str());
    ::rmdir(dir.c_str());
  }
}

LaunchRequest Req(uint64_t job, uint32_t instance, uint32_t run, const std::string& command) {
  LaunchRequest r;
  r.run = MakeRun(job, instance, run);
  r.spec.command = command;
  r.spec.kill_grace = absl::Seconds(5);
  return r;
}

void EventLog::Drain() {
  std::vector<TaskEvent> events = rt_->PendingEvents();
  if (events.empty()) return;
  PL_CHECK(rt_->Ack(events.back().seq).ok());
  for (TaskEvent& e : events) all_.push_back(std::move(e));
}

std::vector<TaskEvent> EventLog::For(const RunId& run) const {
  std::vector<TaskEvent> out;
  for (const TaskEvent& e : all_) {
    if (e.run == run) out.push_back(e);
  }
  return out;
}

std::optional<TaskEvent> EventLog::Terminal(const RunId& run) const {
  for (const TaskEvent& e : all_) {
    if (e.run == run && e.terminal()) return e;
  }
  return std::nullopt;
}

std::optional<TaskEvent> EventLog::Last(const RunId& run, TaskEventType type) const {
  std::optional<TaskEvent> last;
  for (const TaskEvent& e : all_) {
    if (e.run == run && e.type == type) last = e;
  }
  return last;
}

bool RunUntil(TaskRuntime& rt, EventLog& log, const std::function<bool()>& pred,
              absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    log.Drain();
    if (pred()) return true;
    if (absl::Now() >= deadline) return false;
    rt.RunOnce(absl::Milliseconds(20));
  }
}

std::optional<TaskEvent> WaitTerminal(TaskRuntime& rt, EventLog& log, const RunId& run,
                                      absl::Duration timeout) {
  RunUntil(
      rt, log, [&] { return log.Terminal(run).has_value(); }, timeout);
  return log.Terminal(run);
}

void KillAllAndWait(TaskRuntime& rt, EventLog& log) {
  for (const RunStatus& s : rt.ListRuns()) rt.Kill(s.run, absl::ZeroDuration()).IgnoreError();
  RunUntil(rt, log, [&] { return rt.ListRuns().empty(); });
}

std::string ReadAll(const std::string& path) {
  absl::StatusOr<std::string> s = ReadFile(path);
  return s.ok() ? *s : std::string();
}

bool PidAlive(int pid) {
  absl::StatusOr<PidStat> st = ReadPidStat(pid);
  return st.ok() && st->state != 'Z' && st->state != 'X';
}

}  // namespace paceline::agent::testing
