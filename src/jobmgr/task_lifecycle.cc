#include "jobmgr/task_lifecycle.h"

#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "jobmgr/restart_policy.h"
#include "jobmgr/serving.h"

namespace paceline::jobmgr {

void TaskLifecycle::Transition(MutableJob& job, uint32_t instance, TaskState to, TaskReason reason,
                               const std::string& message, absl::Time now, Effects& fx,
                               bool persist) {
  job.SetState(instance, to);
  TaskRuntime& t = job.mutable_task(instance);
  t.reason = reason;
  if (reason == TaskReason::kStarted) {
    std::shared_ptr<const TaskSpec> task = job.view().TaskFor(instance);
    job.SetHealth(instance, task->health ? TaskHealth::kUnknown : TaskHealth::kNone);
    t.readiness = task->readiness ? TaskReadiness::kUnknown : TaskReadiness::kNone;
  } else if (!MayHaveProcess(to) || to == TaskState::kKilling || to == TaskState::kPreempting) {
    // A run being stopped serves no more: it is no longer counted as healthy or ready.
    job.SetHealth(instance, TaskHealth::kNone);
    t.readiness = TaskReadiness::kNone;
  }
  RunId run{TaskId{job.view().id(), instance}, t.run};
  fx.batch.events.push_back(records::TaskEvent{run, now, to,
                                               t.host == kNoHost ? "" : hosts_.Name(t.host),
                                               std::string(TaskReasonName(reason)), message});
  if (persist) fx.batch.put_tasks.push_back(Record(job.view(), instance, message));
  if (IsTerminal(to) && job.view().live() == 0) ended_jobs_.push_back(job.view().id());
}

void TaskLifecycle::EndRun(MutableJob& job, uint32_t instance, TaskState ended, TaskReason reason,
                           const std::string& message, absl::Time now, Effects& fx) {
  PL_CHECK(IsTerminal(ended)) << TaskStateName(ended);
  TaskRuntime& t = job.mutable_task(instance);
  t.finished_at = now;
  bool long_running = job.view().spec().type != JobType::kBatch;
  // A long-running instance that exits at all has failed to stay up: it counts towards its
  // backoff even when it exits 0.
  if (ended == TaskState::kFailed || (long_running && ended == TaskState::kSucceeded)) {
    ++t.failures;
  }
  TaskId id{job.view().id(), instance};
  fx.release.push_back(id);
  preempt_why_.erase(id);
  if (t.restart_requested) {
    t.restart_requested = false;
    std::string why = t.next_spec_version != 0
                          ? absl::StrCat("replaced by a run of version ", t.next_spec_version)
                          : std::string("restarted by the user");
    Transition(job, instance, ended, reason, why, now, fx, true);
    StartNewRun(job, instance, now, now, fx);
    return;
  }
  if (job.view().goal() == records::JobGoal::kKill) {
    Transition(job, instance, ended, reason, message, now, fx, true);
    return;
  }
  if (reason == TaskReason::kPreempted || reason == TaskReason::kHostDraining ||
      reason == TaskReason::kRevoked) {
    Transition(job, instance, ended, reason, message, now, fx, true);
    StartNewRun(job, instance, now, now, fx);
    return;
  }
  const RestartSpec policy = EffectiveRestart(job.view().spec(), instance);
  RestartDecision d = DecideRestart(policy, ended, t.failures, now);
  std::string detail = message;
  if (!d.restart && ended == TaskState::kFailed && policy.policy == RestartPolicy::kOnFailure) {
    detail = absl::StrCat(message.empty() ? "" : message + "; ", "no more restarts: ", t.failures,
                          " failed runs (max_failures ", policy.max_failures, ")");
  }
  Transition(job, instance, ended, reason, detail, now, fx, true);
  if (d.restart) StartNewRun(job, instance, d.not_before, now, fx);
}

void TaskLifecycle::StopRun(MutableJob& job, uint32_t instance, TaskState ended, TaskReason reason,
                            const std::string& message, absl::Time now, Effects& fx) {
  PL_CHECK(IsTerminal(ended)) << TaskStateName(ended);
  TaskRuntime& t = job.mutable_task(instance);
  t.finished_at = now;
  if (ended == TaskState::kFailed) ++t.failures;
  TaskId id{job.view().id(), instance};
  fx.release.push_back(id);
  preempt_why_.erase(id);
  t.restart_requested = false;
  Transition(job, instance, ended, reason, message, now, fx, true);
}

void TaskLifecycle::StartNewRun(MutableJob& job, uint32_t instance, absl::Time not_before,
                                absl::Time now, Effects& fx, const std::string& why) {
  TaskRuntime& t = job.mutable_task(instance);
  ++t.run;
  if (t.host != kNoHost) t.last_host = t.host;
  if (t.next_spec_version != 0) {  // an update's new version: its failures start from zero
    t.spec_version = t.next_spec_version;
    t.next_spec_version = 0;
    t.failures = 0;
  }
  t.host = kNoHost;
  t.exit_code = -1;
  t.signal = 0;
  t.started_at = absl::InfinitePast();
  t.finished_at = absl::InfinitePast();
  t.not_before = not_before;
  std::string msg =
      not_before > now
          ? absl::StrCat("backoff until ",
                         absl::FormatTime(absl::RFC3339_sec, not_before, absl::UTCTimeZone()))
          : why;
  Transition(job, instance, TaskState::kPending, TaskReason::kRestarting, msg, now, fx, true);
  TaskId id{job.view().id(), instance};
  if (not_before <= now) {
    fx.enqueue.push_back(id);
  } else {
    backoff_timers_.push(Timer{not_before, RunId{id, t.run}});
  }
}

void TaskLifecycle::KillTask(MutableJob& job, uint32_t instance, TaskReason reason, absl::Time now,
                             Effects& fx, const std::string& message) {
  TaskRuntime& t = job.mutable_task(instance);
  TaskId id{job.view().id(), instance};
  if (IsLiveBeforeLaunch(t.state)) {
    if (t.state != TaskState::kPending) fx.release.push_back(id);
    fx.withdraw.push_back(id);
    t.finished_at = now;
    Transition(job, instance, TaskState::kKilled, reason, message, now, fx, true);
    return;
  }
  if (t.state == TaskState::kLaunching || t.state == TaskState::kRunning ||
      t.state == TaskState::kPreempting) {
    const absl::Duration delay = DeregistrationDelay(job.view(), instance);  // before it leaves
    Transition(job, instance, TaskState::kKilling, reason, message, now, fx, true);
    fx.kills.push_back(KillCommand{RunId{id, t.run}, hosts_.Name(t.host),
                                   job.view().TaskFor(instance)->kill_grace, reason, delay});
  }
}

records::TaskRecord TaskLifecycle::Record(const Job& job, uint32_t instance,
                                          const std::string& message) const {
  const TaskRuntime& t = job.task(instance);
  records::TaskRecord r;
  r.id = TaskId{job.id(), instance};
  r.run = t.run;
  r.state = t.state;
  r.host = t.host == kNoHost ? "" : hosts_.Name(t.host);
  r.started_at = t.started_at;
  r.finished_at = t.finished_at;
  r.exit_code = t.exit_code;
  r.signal = t.signal;
  r.reason = std::string(TaskReasonName(t.reason));
  r.message = message;
  r.failures = t.failures;
  r.not_before = t.not_before;
  r.restart_requested = t.restart_requested;
  r.spec_version = t.spec_version;
  r.next_spec_version = t.next_spec_version;
  r.volume_host = t.volume_host == kNoHost ? "" : hosts_.Name(t.volume_host);
  r.gang_attempt = t.gang_attempt;
  r.health = std::string(TaskHealthName(t.health));
  r.readiness = std::string(TaskReadinessName(t.readiness));
  return r;
}

void TaskLifecycle::FireTimers(absl::Time now, Effects& fx) {
  while (!backoff_timers_.empty() && backoff_timers_.top().at <= now) {
    Timer timer = backoff_timers_.top();
    backoff_timers_.pop();
    MutableJob* job = jobs_.Find(timer.run.task.job);
    if (job == nullptr) continue;
    const TaskRuntime& t = job->view().task(timer.run.task.instance);
    if (t.run == timer.run.run && t.state == TaskState::kPending) {
      fx.enqueue.push_back(timer.run.task);
    }
  }
  while (!deadline_timers_.empty() && deadline_timers_.top().at <= now) {
    Timer timer = deadline_timers_.top();
    deadline_timers_.pop();
    MutableJob* job = jobs_.Find(timer.run.task.job);
    if (job == nullptr) continue;
    const TaskRuntime& t = job->view().task(timer.run.task.instance);
    if (t.run == timer.run.run && t.state == TaskState::kRunning) {
      KillTask(*job, timer.run.task.instance, TaskReason::kDeadlineExceeded, now, fx);
    }
  }
}

std::string TaskLifecycle::PreemptWhy(TaskId task) const {
  auto w = preempt_why_.find(task);
  return w == preempt_why_.end() ? std::string() : w->second;
}

}  // namespace paceline::jobmgr
