// TaskRunner: the end of a run (exit record or wrapper exit, draining the cgroup, the terminal
// event, cleanup) and the re-adoption of a run after an agent restart.

#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "agent/host/proc_stat.h"
#include "agent/launch/wrapper_launcher.h"
#include "agent/task_runner.h"
#include "spdlog/spdlog.h"

namespace paceline::agent {

void TaskRunner::OnWrapperExit() {
  if (control_.valid()) OnControlReadable();  // the last records may still be buffered
  if (state_ == State::kDraining || state_ == State::kDone) return;
  if (pidfd_.valid()) {
    ReapPidfd(pidfd_.get());  // when it is our child
  }
  Unwatch();
  // Without a connected agent the wrapper wrote its records to the status file.
  wrapper::ExitStatus from_file = ReadStatusFile(ctx_);
  if (from_file.kind != wrapper::ExitStatus::Kind::kUnknown) status_ = from_file;
  if (state_ == State::kStarting && status_.task_pid > 0 &&
      status_.kind != wrapper::ExitStatus::Kind::kLaunchError) {
    MarkRunning(status_.task_pid, status_.task_start, /*live=*/false);
  }
  EndOfTask();
}

bool TaskRunner::IsFinal(const wrapper::ExitStatus& s) {
  using Kind = wrapper::ExitStatus::Kind;
  return s.kind == Kind::kExited || s.kind == Kind::kSignaled || s.kind == Kind::kLaunchError;
}

void TaskRunner::EndOfTask() {
  health_.reset();
  readiness_.reset();
  state_ = State::kDraining;
  retry_at_ = absl::InfiniteFuture();
  TryFinish();
}

void TaskRunner::TryFinish() {
  if (!ctx_.cgroup.empty()) {
    absl::StatusOr<std::vector<pid_t>> pids = s_.cgroups->Pids(ctx_.cgroup);
    if (pids.ok() && !pids->empty() && drain_attempts_ < 1000) {
      // Leftovers (e.g. a daemonized child that left the process group): kill and retry.
      s_.cgroups->KillAll(ctx_.cgroup);
      ++drain_attempts_;
      retry_at_ = s_.now + absl::Milliseconds(std::min(5 * drain_attempts_, 200));
      s_.reschedule(ctx_.run());
      return;
    }
  }
  uint64_t oom_kills = 0;
  if (!ctx_.cgroup.empty()) {
    absl::StatusOr<uint64_t> kills = s_.cgroups->OomKills(ctx_.cgroup);
    if (kills.ok()) oom_kills = *kills;
  }
  TaskEvent e = TerminalEvent(oom_kills);
  s_.lifecycle->Cleanup(ctx_, CleanupKind::kFinished);
  s_.emit(std::move(e));
  absl::Status s = s_.checkpoint->Remove(ctx_.key);
  if (!s.ok()) spdlog::error("checkpoint removal of run {}: {}", ctx_.key, s.ToString());
  // The exit is recorded: acknowledge it. The supervisor is then free for another run (unless it
  // said this was its last); one that is gone or done is left to the runtime to reap.
  bool reusable = false;
  if (control_.valid()) {
    char ack = wrapper::kAckByte;
    if (::write(control_.get(), &ack, 1) == 1) {
      reusable = !status_.last_run;
    } else {
      spdlog::warn("run {}: could not release supervisor {}", ctx_.key, ctx_.wrapper_pid);
    }
  }
  if (pidfd_watch_ != 0) s_.poller->Remove(pidfd_watch_);
  if (control_watch_ != 0) s_.poller->Remove(control_watch_);
  pidfd_watch_ = control_watch_ = 0;
  if (reusable) {
    s_.supervisors->Give(Supervisor{ctx_.wrapper_pid, ctx_.wrapper_start, std::move(pidfd_),
                                    std::move(control_), ctx_.cgroup});
  } else if (pidfd_.valid()) {
    s_.reap(std::move(pidfd_));
  }
  Unwatch();
  state_ = State::kDone;
  retry_at_ = absl::InfiniteFuture();
}

TaskEvent TaskRunner::TerminalEvent(uint64_t oom_kills) const {
  using Kind = wrapper::ExitStatus::Kind;
  TaskEvent e;
  e.time = s_.now;
  e.run = ctx_.run();
  switch (status_.kind) {
    case Kind::kLaunchError:
      e.type = TaskEventType::kFailed;
      e.reason = TerminationReason::kLaunchFailed;
      e.message = status_.error;
      return e;
    case Kind::kExited:
    case Kind::kSignaled: {
      bool signaled = status_.kind == Kind::kSignaled;
      if (signaled) {
        e.signal = status_.value;
      } else {
        e.exit_code = status_.value;
      }
      bool failed = signaled || status_.value != 0;
      if (oom_kills > 0 && failed) {
        e.type = TaskEventType::kExited;
        e.reason = TerminationReason::kOomKilled;
        e.message = absl::StrCat("out of memory: the task exceeded its memory limit of ",
                                 ctx_.request.spec.resources.memory_bytes(), " bytes");
      } else if (ctx_.kill_requested && ctx_.kill_term_at == absl::InfinitePast()) {
        // (A run that ended by itself while its kill waited for the deregistration delay was
        // sent no signal: it is reported as it ended, below.)
        e.type = TaskEventType::kKilled;
        e.reason = ctx_.kill_forced ? TerminationReason::kKilledForcibly
                                    : TerminationReason::kKilledGracefully;
      } else {
        e.type = TaskEventType::kExited;
        e.reason = signaled ? TerminationReason::kSignaled : TerminationReason::kExited;
      }
      return e;
    }
    default:
      e.type = TaskEventType::kLost;
      e.reason = TerminationReason::kLost;
      e.message = ctx_.boot_id != s_.boot_id
                      ? std::string("the host restarted while the task ran")
                      : absl::StrCat("the task's supervisor (pid ", ctx_.wrapper_pid,
                                     ") ended without recording an exit status");
      return e;
  }
}

std::unique_ptr<TaskRunner> TaskRunner::Recover(RuntimeServices& s, RunContext ctx) {
  std::unique_ptr<TaskRunner> r(new TaskRunner(s, std::move(ctx)));
  RunContext& c = r->ctx_;
  r->status_ = ReadStatusFile(c);
  bool same_boot = c.boot_id == s.boot_id;
  if (same_boot && c.wrapper_pid > 0) {
    absl::StatusOr<PidStat> st = ReadPidStat(c.wrapper_pid);
    int pidfd = (st.ok() && st->start_ticks == c.wrapper_start) ? PidfdOpen(c.wrapper_pid) : -1;
    if (pidfd >= 0 && r->Watch(pidfd, -1).ok()) {
      if (c.task_pid > 0) {
        r->state_ = State::kRunning;
        // A kill in progress continues from its checkpointed times (AdvanceKill).
        if (!c.kill_requested) r->StartChecks();
      } else if (r->status_.task_pid > 0) {
        r->MarkRunning(r->status_.task_pid, r->status_.task_start, /*live=*/true);
      } else {
        r->retry_at_ = s.now;  // poll the status file for the pid
      }
      return r;  // a zombie wrapper's pidfd is readable at once: it drains on the next Poll
    }
  }
  // The wrapper is gone. Its status file says how the task ended; if it says nothing, the task
  // may still be running unsupervised: kill it, its exit code can no longer be observed.
  if (same_boot && r->status_.kind == wrapper::ExitStatus::Kind::kRunning &&
      ProcessAlive(r->status_.task_pid, r->status_.task_start)) {
    ::kill(-r->status_.task_pid, SIGKILL);
  }
  if (r->status_.task_pid > 0 && c.task_pid == 0 &&
      r->status_.kind != wrapper::ExitStatus::Kind::kLaunchError) {
    r->MarkRunning(r->status_.task_pid, r->status_.task_start, /*live=*/false);
  }
  r->state_ = State::kDraining;
  r->TryFinish();
  return r;
}

}  // namespace paceline::agent
