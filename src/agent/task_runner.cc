#include "agent/task_runner.h"

#include <signal.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "agent/file_util.h"
#include "agent/health/health_probe.h"
#include "agent/launch/wrapper_launcher.h"
#include "spdlog/spdlog.h"

namespace paceline::agent {
wrapper::ExitStatus TaskRunner::ReadStatusFile(const RunContext& c) {
  absl::StatusOr<std::string> text = ReadFile(absl::StrCat(c.run_state, wrapper::kStatusSuffix));
  return wrapper::ParseStatus(text.ok() ? *text : std::string());
}

TaskRunner::TaskRunner(RuntimeServices& services, RunContext ctx)
    : s_(services), ctx_(std::move(ctx)) {}

TaskRunner::~TaskRunner() {
  health_.reset();
  readiness_.reset();
  Unwatch();
}

void TaskRunner::Unwatch() {
  if (pidfd_watch_ != 0) s_.poller->Remove(pidfd_watch_);
  if (control_watch_ != 0) s_.poller->Remove(control_watch_);
  pidfd_watch_ = control_watch_ = 0;
  pidfd_.Reset();
  control_.Reset();
}

void TaskRunner::Checkpoint() {
  absl::Status s = s_.checkpoint->Put(ctx_);
  if (!s.ok()) spdlog::error("checkpoint of run {}: {}", ctx_.key, s.ToString());
}

absl::StatusOr<std::unique_ptr<TaskRunner>> TaskRunner::Start(RuntimeServices& s, RunContext& ctx) {
  std::unique_ptr<TaskRunner> r(new TaskRunner(s, std::move(ctx)));
  RunContext& c = r->ctx_;
  auto fail = [&](absl::Status status) {
    ctx = std::move(r->ctx_);
    return status;
  };
  WrapperArgs a;
  a.wrapper = s.wrapper_path;
  a.cwd = c.sandbox;
  a.user = c.user;
  a.cgroup_procs = c.cgroup_procs;
  a.state = c.run_state;
  a.stdout_path = absl::StrCat(c.sandbox, "/stdout");
  a.stderr_path = absl::StrCat(c.sandbox, "/stderr");
  a.log_max = s.config->log_max_bytes;
  a.command = c.request.spec.command;
  if (!c.argv.empty()) {
    // A container: the runtime starts as root and switches to the user in the OCI config.
    a.user = TaskUser{};
    a.argv = c.argv;
    a.unmounts = c.unmounts;
  }
  const std::vector<std::string> env = c.TaskEnv();
  a.env = &env;
  absl::StatusOr<Supervisor> w = s.supervisors->Take(c.cgroup);
  if (!w.ok()) return fail(w.status());
  c.wrapper_pid = w->pid;
  c.wrapper_start = w->start_ticks;
  c.started = s.now;
  // The record (with the supervisor's identity) exists before the supervisor may start the task.
  absl::Status put = s.checkpoint->Put(c);
  if (!put.ok()) {
    s.supervisors->Give(*std::move(w));  // it got no request: still free
    return fail(put);
  }
  absl::Status sent = SupervisorPool::Send(*w, a);
  if (!sent.ok()) {
    s.checkpoint->Remove(c.key).IgnoreError();
    s.supervisors->LetGo(*std::move(w));
    return fail(sent);
  }
  absl::Status watch = r->Watch(w->pidfd.Release(), w->control.Release());
  if (!watch.ok()) return watch;
  return r;
}

absl::Status TaskRunner::Watch(int pidfd, int control_fd) {
  pidfd_.Reset(pidfd);
  control_.Reset(control_fd);
  absl::StatusOr<uint64_t> id =
      s_.poller->Add(pidfd_.get(), EPOLLIN, [this](uint32_t) { OnWrapperExit(); });
  if (!id.ok()) return id.status();
  pidfd_watch_ = *id;
  if (control_.valid()) {
    id = s_.poller->Add(control_.get(), EPOLLIN, [this](uint32_t) { OnControlReadable(); });
    if (!id.ok()) return id.status();
    control_watch_ = *id;
  }
  return absl::OkStatus();
}

void TaskRunner::OnControlReadable() {
  char buf[1024];
  for (;;) {
    ssize_t n = ::read(control_.get(), buf, sizeof(buf));
    if (n > 0) {
      control_buf_.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
      s_.poller->Remove(control_watch_);
      control_watch_ = 0;
      control_.Reset();
    }
    break;
  }
  // The records of one read are checkpointed once, after all of them: a short task's RUNNING and
  // exit records usually come together, and its end removes its checkpoint record anyway.
  reading_control_ = true;
  size_t eol;
  while ((eol = control_buf_.find('\n')) != std::string::npos) {
    std::string line = control_buf_.substr(0, eol);
    control_buf_.erase(0, eol + 1);
    HandleControlLine(line);
  }
  reading_control_ = false;
  if (checkpoint_deferred_ && state_ != State::kDone) Checkpoint();
  checkpoint_deferred_ = false;
}

void TaskRunner::HandleControlLine(const std::string& line) {
  control_record_ += line;
  control_record_ += '\n';
  wrapper::ExitStatus st = wrapper::ParseStatus(control_record_);
  if (st.task_pid > 0 && state_ == State::kStarting) {
    MarkRunning(st.task_pid, st.task_start, /*live=*/true);
  }
  if (IsFinal(st) && state_ != State::kDraining && state_ != State::kDone) {
    status_ = st;
    EndOfTask();
  }
}

void TaskRunner::MarkRunning(int pid, uint64_t start_ticks, bool live) {
  if (state_ != State::kStarting) return;
  ctx_.task_pid = pid;
  ctx_.task_start = start_ticks;
  state_ = State::kRunning;
  retry_at_ = absl::InfiniteFuture();
  TaskEvent e;
  e.time = s_.now;
  e.run = ctx_.run();
  e.type = TaskEventType::kRunning;
  e.pid = pid;
  e.ports = ctx_.ports;
  e.sandbox = ctx_.sandbox;
  s_.emit(std::move(e));
  if (reading_control_) {
    checkpoint_deferred_ = true;
  } else {
    Checkpoint();
  }
  if (!live) return;  // it already ended: nothing to signal or check
  if (ctx_.kill_forced) {
    SignalTask(SIGKILL);
  } else if (ctx_.kill_requested) {
    // A kill that came while it was starting: SIGTERM now, or at the end of its delay (OnTimer).
    if (ctx_.kill_term_at == absl::InfinitePast()) SignalTask(SIGTERM);
  } else {
    StartChecks();
  }
  s_.reschedule(ctx_.run());
}

void TaskRunner::StartChecks() {
  const TaskSpec& spec = ctx_.request.spec;
  if (spec.health && !health_) health_ = StartMonitor(*spec.health, TaskEventType::kHealth);
  if (spec.readiness && !readiness_) {
    readiness_ = StartMonitor(*spec.readiness, TaskEventType::kReadiness);
  }
}

std::unique_ptr<HealthMonitor> TaskRunner::StartMonitor(const HealthSpec& spec,
                                                        TaskEventType type) {
  std::unique_ptr<HealthProbe> probe;
  if (auto* h = std::get_if<HttpCheck>(&spec.check)) {
    probe = MakeHttpProbe(ctx_.ports[h->port], h->path);
  } else if (auto* t = std::get_if<TcpCheck>(&spec.check)) {
    probe = MakeTcpProbe(ctx_.ports[t->port]);
  } else {
    WrapperArgs a;
    a.wrapper = s_.wrapper_path;
    a.exec_mode = true;
    a.cwd = ctx_.sandbox;
    a.user = ctx_.user;
    a.cgroup_procs = ctx_.cgroup_procs;
    a.command = std::get<CommandCheck>(spec.check).command;
    // Both checks' probes point at it: it is filled once and never changes.
    if (health_env_.empty()) health_env_ = ctx_.TaskEnv();
    if (!ctx_.container_id.empty() && s_.oci != nullptr) {
      // In the container: `crun exec` as the container's user, with the task's variables.
      a.user = TaskUser{};
      a.argv = s_.oci->ExecArgv(ctx_.container_id, ctx_.user.uid, ctx_.user.gid, ctx_.final_env,
                                a.command);
      a.unmounts = s_.oci->hide;
    }
    a.env = &health_env_;
    probe = MakeCommandProbe(std::move(a));
  }
  return std::make_unique<HealthMonitor>(
      spec, std::move(probe), *s_.poller, [this] { return s_.now; },
      [this, type](HealthState h) {
        TaskEvent e;
        e.time = s_.now;
        e.run = ctx_.run();
        e.type = type;
        if (type == TaskEventType::kReadiness) {
          e.readiness = ReadinessFromHealth(h);
        } else {
          e.health = h;
        }
        s_.emit(std::move(e));
      },
      [this] { s_.reschedule(ctx_.run()); }, s_.now);
}

void TaskRunner::SignalTask(int sig) {
  if (state_ != State::kRunning || ctx_.task_pid <= 0) return;
  ::kill(-ctx_.task_pid, sig);
  if (sig == SIGKILL && !ctx_.cgroup.empty()) s_.cgroups->KillAll(ctx_.cgroup);
}

void TaskRunner::EscalateKill() {
  ctx_.kill_forced = true;
  ctx_.kill_term_at = absl::InfinitePast();
  SignalTask(SIGKILL);  // while starting: sent as soon as the pid is known (MarkRunning)
  Checkpoint();
}

void TaskRunner::TerminateTask() {
  ctx_.kill_term_at = absl::InfinitePast();
  SignalTask(SIGTERM);  // while starting: sent as soon as the pid is known (MarkRunning)
  Checkpoint();
}

void TaskRunner::AdvanceKill(absl::Time now) {
  if (!ctx_.kill_requested || ctx_.kill_forced) return;
  if (now >= ctx_.kill_deadline) {
    EscalateKill();
  } else if (ctx_.kill_term_at != absl::InfinitePast() && now >= ctx_.kill_term_at) {
    TerminateTask();
  }
}

// The kill's times: SIGTERM at kill_term_at (now without a delay; InfinitePast once due),
// SIGKILL at kill_deadline = SIGTERM + grace. They live in the checkpoint record, so an agent
// restarted during the delay keeps them (TaskRunner::Recover): the task still gets its SIGTERM
// at the delay's end, or at once when the agent came back after it.
void TaskRunner::Kill(absl::Duration grace, absl::Duration delay) {
  if (state_ == State::kDraining || state_ == State::kDone) return;
  grace = std::max(grace, absl::ZeroDuration());
  if (ctx_.kill_requested) {
    // A repeat (the master re-sends kills it is not sure arrived): SIGTERM stays where the
    // first kill put it; only a shorter grace brings SIGKILL forward.
    absl::Time deadline = std::max(s_.now, ctx_.kill_term_at) + grace;
    if (deadline >= ctx_.kill_deadline) return;
    ctx_.kill_deadline = deadline;
  } else {
    ctx_.kill_requested = true;
    ctx_.kill_term_at = delay > absl::ZeroDuration() ? s_.now + delay : absl::InfinitePast();
    ctx_.kill_deadline = std::max(s_.now, ctx_.kill_term_at) + grace;
    health_.reset();  // a task being stopped is no longer checked
    readiness_.reset();
    if (ctx_.kill_term_at == absl::InfinitePast() && s_.now < ctx_.kill_deadline) {
      SignalTask(SIGTERM);
    }
  }
  if (s_.now >= ctx_.kill_deadline) {
    EscalateKill();
  } else {
    Checkpoint();
  }
  s_.reschedule(ctx_.run());
}

absl::Time TaskRunner::NextDeadline() const {
  absl::Time t = retry_at_;
  if ((state_ == State::kStarting || state_ == State::kRunning) && ctx_.kill_requested &&
      !ctx_.kill_forced) {
    t = std::min(t, ctx_.kill_deadline);
    if (ctx_.kill_term_at != absl::InfinitePast()) t = std::min(t, ctx_.kill_term_at);
  }
  if (state_ == State::kRunning && health_) t = std::min(t, health_->NextDeadline());
  if (state_ == State::kRunning && readiness_) t = std::min(t, readiness_->NextDeadline());
  return t;
}

void TaskRunner::OnTimer(absl::Time now) {
  switch (state_) {
    case State::kStarting:
      AdvanceKill(now);        // applied when the pid is known
      if (now >= retry_at_) {  // adopted while starting: learn the pid from the status file
        retry_at_ = now + absl::Milliseconds(50);
        status_ = ReadStatusFile(ctx_);
        if (status_.task_pid > 0) MarkRunning(status_.task_pid, status_.task_start, true);
      }
      break;
    case State::kRunning:
      AdvanceKill(now);
      if (health_) health_->OnTimer(now);
      if (readiness_) readiness_->OnTimer(now);
      break;
    case State::kDraining:
      if (now >= retry_at_) TryFinish();
      break;
    case State::kDone:
      break;
  }
}

}  // namespace paceline::agent
