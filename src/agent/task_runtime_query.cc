// TaskRuntime: read-only queries — run list, usage, logs.

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "agent/file_util.h"
#include "agent/host/proc_stat.h"
#include "agent/launch/sandbox_hook.h"
#include "agent/launch/wrapper_protocol.h"
#include "agent/task_runtime.h"

namespace paceline::agent {

RunStatus TaskRuntime::StatusOf(const TaskRunner& r) const {
  const RunContext& c = r.context();
  RunStatus s;
  s.run = c.run();
  switch (r.state()) {
    case TaskRunner::State::kStarting:
      s.state = RunState::kStarting;
      break;
    case TaskRunner::State::kRunning:
      s.state = c.kill_requested ? RunState::kStopping : RunState::kRunning;
      break;
    default:
      s.state = RunState::kEnding;
      break;
  }
  s.pid = c.task_pid;
  s.health = r.health();
  s.readiness = r.readiness();
  s.ports = c.ports;
  s.gpus = c.gpus;
  s.sandbox = c.sandbox;
  s.started = c.started;
  return s;
}

std::vector<RunStatus> TaskRuntime::ListRuns() const {
  std::vector<RunStatus> out;
  out.reserve(runners_.size());
  for (const auto& [run, r] : runners_) {
    if (!r->done()) out.push_back(StatusOf(*r));
  }
  if (pulls_) {
    for (const RunId& run : pulls_->WaitingRuns()) out.push_back(RunStatus{.run = run});
  }
  std::sort(out.begin(), out.end(),
            [](const RunStatus& a, const RunStatus& b) { return a.run < b.run; });
  return out;
}

std::optional<RunStatus> TaskRuntime::GetRun(const RunId& run) const {
  auto it = runners_.find(run);
  if (it == runners_.end() || it->second->done()) return std::nullopt;
  return StatusOf(*it->second);
}

UsageSnapshot TaskRuntime::Usage(absl::Time now) const {
  UsageSnapshot u;
  u.time = now;
  const int64_t tck = ClockTicksPerSecond();
  if (absl::StatusOr<std::string> t = ReadFile("/proc/stat"); t.ok()) {
    if (absl::StatusOr<HostCpuTimes> c = ParseProcStat(*t); c.ok()) {
      u.host.cpu_busy_usec = static_cast<int64_t>(c->busy_ticks) * 1000000 / tck;
      u.host.cpu_total_usec = static_cast<int64_t>(c->total_ticks) * 1000000 / tck;
    }
  }
  if (absl::StatusOr<std::string> t = ReadFile("/proc/meminfo"); t.ok()) {
    if (absl::StatusOr<MemInfo> m = ParseMeminfo(*t); m.ok()) {
      u.host.memory_total_bytes = m->total_bytes;
      u.host.memory_available_bytes = m->available_bytes;
    }
  }
  static const int64_t page = ::sysconf(_SC_PAGESIZE);
  for (const auto& [run, r] : runners_) {
    const RunContext& c = r->context();
    if (r->state() != TaskRunner::State::kRunning) continue;
    TaskUsage t;
    t.run = run;
    if (!c.cgroup.empty()) {
      if (absl::StatusOr<CgroupStats> st = cgroups_->Stats(c.cgroup); st.ok()) {
        t.cpu_usec = st->cpu_usec;
        t.memory_bytes = st->memory_bytes;
        t.from_cgroup = true;
      }
    }
    if (!t.from_cgroup && c.task_pid > 0) {
      if (absl::StatusOr<PidStat> p = ReadPidStat(c.task_pid); p.ok()) {
        t.cpu_usec = static_cast<int64_t>(p->utime_ticks + p->stime_ticks) * 1000000 / tck;
        t.memory_bytes = p->rss_pages * page;
      }
    }
    u.tasks.push_back(t);
  }
  std::sort(u.tasks.begin(), u.tasks.end(),
            [](const TaskUsage& a, const TaskUsage& b) { return a.run < b.run; });
  return u;
}

absl::StatusOr<LogChunk> TaskRuntime::ReadLog(const LogRequest& req) const {
  std::string state = SandboxHook::RunStatePath(config_.work_dir, req.run);
  auto it = runners_.find(req.run);
  // A live run's own path (a run recovered from an earlier agent may use the nested layout).
  std::string sandbox = it != runners_.end() ? it->second->context().sandbox
                                             : SandboxHook::FindSandbox(config_.work_dir, req.run);
  bool finished = it == runners_.end() || it->second->state() == TaskRunner::State::kDraining ||
                  it->second->done();
  if (sandbox.empty() || !PathExists(sandbox)) {
    if (!finished) {  // a run being launched has no sandbox yet: no output so far, no error
      LogChunk empty;
      empty.offset = empty.next_offset = req.offset;
      return empty;
    }
    return absl::NotFoundError(absl::StrCat("run ", req.run.ToString(),
                                            " has no logs on this agent (never ran here, or "
                                            "its sandbox was removed after the retention)"));
  }
  const char* name = req.stream == LogStream::kStdout ? "stdout" : "stderr";
  LogFiles f;
  f.current = absl::StrCat(sandbox, "/", name);
  f.rotated = absl::StrCat(f.current, ".1");
  f.base_file = absl::StrCat(state, req.stream == LogStream::kStdout ? wrapper::kStdoutBaseSuffix
                                                                     : wrapper::kStderrBaseSuffix);
  absl::StatusOr<LogChunk> c = req.tail_lines ? ReadLogTail(f, *req.tail_lines, req.max_bytes)
                                              : ReadLogFrom(f, req.offset, req.max_bytes);
  if (!c.ok()) {
    if (absl::IsNotFound(c.status())) {
      LogChunk empty;  // the task has written nothing to this stream (so far): no file
      empty.offset = empty.next_offset = req.offset;
      empty.finished = finished;
      return empty;
    }
    return c;
  }
  c->finished = finished;
  return c;
}

absl::StatusOr<ExecCommand> TaskRuntime::ExecCommandFor(const RunId& run,
                                                        const std::vector<std::string>& argv,
                                                        bool tty, uint64_t session) const {
  auto it = runners_.find(run);
  if (it == runners_.end() || it->second->done()) {
    return absl::NotFoundError(absl::StrCat("run ", run.ToString(), " is not on this host"));
  }
  const TaskRunner& r = *it->second;
  if (r.state() != TaskRunner::State::kRunning || r.context().kill_requested) {
    return absl::FailedPreconditionError(
        absl::StrCat("run ", run.ToString(), " is not running (it is starting or stopping)"));
  }
  const RunContext& c = r.context();
  return agent::ExecCommandFor(c, services_.wrapper_path, &oci_, argv, tty,
                               absl::StrCat(c.run_state, ".exec-", session, ".pid"));
}

}  // namespace paceline::agent
