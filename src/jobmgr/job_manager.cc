#include "jobmgr/job_manager.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/status.h"
#include "jobmgr/restart_policy.h"

namespace paceline::jobmgr {
absl::StatusOr<JobId> JobManager::CreateJob(JobSpec spec, std::string pool, absl::Time now,
                                            Effects& fx, JobOwner owner) {
  JobId id(next_job_id_++);
  auto shared = std::make_shared<const JobSpec>(std::move(spec));
  auto job = std::make_unique<Job>(id, std::move(pool), shared, 1, records::JobGoal::kRun,
                                   JobOrigin{now, std::move(owner)});
  fx.batch.put_jobs.push_back(job->ToRecord());
  fx.batch.next_job_id = next_job_id_;
  fx.enqueue.reserve(fx.enqueue.size() + job->instances());
  for (uint32_t i = 0; i < job->instances(); ++i) fx.enqueue.push_back(TaskId{id, i});
  jobs_.emplace(id, std::move(job));
  ids_.insert(id);
  return id;
}

absl::Status JobManager::KillJob(JobId id, absl::Time now, Effects& fx) {
  Job* job = FindJob(id);
  if (job == nullptr) return absl::NotFoundError(absl::StrCat("job ", id.value(), " not found"));
  if (job->goal() != records::JobGoal::kKill) {
    job->set_goal(records::JobGoal::kKill);
    fx.batch.put_jobs.push_back(job->ToRecord());
  }
  for (uint32_t i = 0; i < job->instances(); ++i) {
    job->mutable_task(i).restart_requested = false;
    KillTask(*job, i, TaskReason::kKilledByUser, now, fx);
  }
  return absl::OkStatus();
}

absl::Status JobManager::DeleteJob(JobId id, Effects& fx) {
  Job* job = FindJob(id);
  if (job == nullptr) return absl::NotFoundError(absl::StrCat("job ", id.value(), " not found"));
  if (job->live() > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", id.value(), " has ", job->live(),
                     " live tasks; kill it first (paceline job kill ", id.value(), ")"));
  }
  fx.batch.delete_jobs.push_back(id);
  jobs_.erase(id);
  ids_.erase(id);
  return absl::OkStatus();
}

void JobManager::OnAdmitted(TaskId task, absl::Time now, Effects& fx) {
  Job* job = FindJob(task.job);
  if (job == nullptr || task.instance >= job->instances()) return;
  if (job->task(task.instance).state != TaskState::kPending) return;
  Transition(*job, task.instance, TaskState::kReady, TaskReason::kAdmitted, "", now, fx, false);
}

void JobManager::OnPlaced(TaskId task, Placement placed, absl::Time now, Effects& fx) {
  Job* job = FindJob(task.job);
  if (job == nullptr || task.instance >= job->instances()) return;
  TaskRuntime& t = job->mutable_task(task.instance);
  if (t.state != TaskState::kReady) return;
  t.host = InternHost(placed.host);
  NoteOnHost(t.host, task);
  if (job->spec().type == JobType::kStateful && t.volume_host == kNoHost) {
    t.volume_host = t.host;  // the volume is created there at launch; the instance stays
  }
  Transition(*job, task.instance, TaskState::kPlaced, TaskReason::kPlaced, "", now, fx, false);
  Transition(*job, task.instance, TaskState::kLaunching, TaskReason::kLaunchSent, "", now, fx,
             true);
  fx.launches.push_back(LaunchCommand{RunId{task, t.run}, std::move(placed)});
}

void JobManager::OnStatus(const StatusReport& r, absl::Time now, Effects& fx) {
  Job* job = FindJob(r.run.task.job);
  uint32_t i = r.run.task.instance;
  if (job == nullptr || i >= job->instances() || r.run.run != job->task(i).run) {
    // A run this master does not own (an old run, or a deleted job): if it still runs, stop it.
    if (r.state == TaskState::kRunning) {
      fx.kills.push_back(KillCommand{r.run, r.host, absl::Seconds(10), TaskReason::kOrphaned});
    }
    return;
  }
  TaskRuntime& t = job->mutable_task(i);
  if (t.host != kNoHost && !r.host.empty() && hosts_[t.host] != r.host) {
    // A host vouches only for the runs placed on it: a report about another host's run is not
    // believed (a compromised agent must not end or fake other hosts' tasks). A process it
    // runs anyway is stopped.
    if (r.state == TaskState::kRunning) {
      fx.kills.push_back(KillCommand{r.run, r.host, absl::Seconds(10), TaskReason::kOrphaned});
    }
    return;
  }
  if (!MayHaveProcess(t.state)) return;  // duplicate report of a run already over
  if (r.state == TaskState::kRunning &&
      (r.reason == TaskReason::kHealthy || r.reason == TaskReason::kUnhealthy)) {
    // A health change of a running run: an event, the state stays RUNNING. A repeat (e.g. the
    // agent re-checks after its own restart) changes nothing.
    TaskHealth h = r.reason == TaskReason::kHealthy ? TaskHealth::kHealthy : TaskHealth::kUnhealthy;
    if (t.state != TaskState::kRunning || t.health == h) return;
    Transition(*job, i, TaskState::kRunning, r.reason, r.message, now, fx, true);
    job->SetHealth(i, h);
    return;
  }
  if (r.state == TaskState::kRunning) {
    if (t.state == TaskState::kKilling || t.state == TaskState::kPreempting) {
      // The agent still runs a run this master is stopping: the kill may have been sent while
      // the agent was away (e.g. during a failover) and never reached it. Send it again; the
      // agent ignores a repeat.
      fx.kills.push_back(KillCommand{r.run, hosts_[t.host], job->TaskFor(i)->kill_grace, t.reason});
      return;
    }
    if (t.state != TaskState::kLaunching) return;
    t.started_at = now;
    Transition(*job, i, TaskState::kRunning, TaskReason::kStarted, "", now, fx, true);
    absl::Duration limit = job->spec().sla.max_running_time;
    if (limit > absl::ZeroDuration()) deadline_timers_.push(Timer{now + limit, r.run});
    return;
  }
  t.exit_code = r.exit_code;
  t.signal = r.signal;
  if (t.state == TaskState::kKilling) {
    EndRun(*job, i, TaskState::kKilled, t.reason, r.message, now, fx);
    return;
  }
  if (t.state == TaskState::kPreempting) {
    // The run ends with the reason it was preempted for, so that its history says why.
    std::string why;
    auto w = preempt_why_.find(r.run.task);
    if (w != preempt_why_.end()) why = w->second;
    if (!r.message.empty()) why = why.empty() ? r.message : absl::StrCat(why, "; ", r.message);
    EndRun(*job, i, TaskState::kKilled, t.reason, why, now, fx);
    return;
  }
  TaskState ended = r.state;
  TaskReason reason = r.reason;
  if (ended == TaskState::kSucceeded) {
    reason = TaskReason::kExitedZero;
  } else if (ended == TaskState::kLost) {
    reason = TaskReason::kHostLost;
  } else {
    ended = TaskState::kFailed;  // FAILED, or KILLED that nobody asked for
    if (reason == TaskReason::kNone) {
      reason = r.signal != 0 ? TaskReason::kSignaled : TaskReason::kExitNonzero;
    }
  }
  EndRun(*job, i, ended, reason, r.message, now, fx);
}

void JobManager::OnHostLost(const std::string& host, absl::Time now, Effects& fx) {
  auto it = host_index_.find(host);
  if (it == host_index_.end()) return;
  const std::vector<TaskId> on_host = TasksOnHost(it->second);  // EndRun changes the list
  for (const TaskId& task : on_host) {
    Job* job = FindJob(task.job);
    if (job != nullptr && MayHaveProcess(job->task(task.instance).state)) {
      EndRun(*job, task.instance, TaskState::kLost, TaskReason::kHostLost,
             absl::StrCat("host ", host, " was lost"), now, fx);
    }
  }
}

void JobManager::Tick(absl::Time now, Effects& fx) {
  while (!backoff_timers_.empty() && backoff_timers_.top().at <= now) {
    Timer timer = backoff_timers_.top();
    backoff_timers_.pop();
    Job* job = FindJob(timer.run.task.job);
    if (job == nullptr) continue;
    const TaskRuntime& t = job->task(timer.run.task.instance);
    if (t.run == timer.run.run && t.state == TaskState::kPending) {
      fx.enqueue.push_back(timer.run.task);
    }
  }
  while (!deadline_timers_.empty() && deadline_timers_.top().at <= now) {
    Timer timer = deadline_timers_.top();
    deadline_timers_.pop();
    Job* job = FindJob(timer.run.task.job);
    if (job == nullptr) continue;
    const TaskRuntime& t = job->task(timer.run.task.instance);
    if (t.run == timer.run.run && t.state == TaskState::kRunning) {
      KillTask(*job, timer.run.task.instance, TaskReason::kDeadlineExceeded, now, fx);
    }
  }
  updates_.ProgressAll(now, fx);
}

absl::Status JobManager::Restore(const records::StoreContents& contents, absl::Time now,
                                 Effects& fx, const records::TaskBatches& more) {
  next_job_id_ = std::max<uint64_t>(next_job_id_, contents.next_job_id);
  for (const records::JobRecord& r : contents.jobs) {
    auto spec = std::make_shared<const JobSpec>(r.spec);
    auto job = std::make_unique<Job>(r.id, r.pool, spec, r.version, r.goal,
                                     JobOrigin{r.created_at, {r.owner, r.owner_group}});
    job->RestoreHistory(r);
    if (job->active_update() != nullptr) updates_.updating_.push_back(r.id);
    jobs_[r.id] = std::move(job);
    ids_.insert(r.id);
    next_job_id_ = std::max(next_job_id_, r.id.value() + 1);
  }
  RETURN_IF_ERROR(RestoreTasks(contents.tasks));
  if (more) RETURN_IF_ERROR(more([this](const auto& batch) { return RestoreTasks(batch); }));
  FinishRestore(now, fx);
  return absl::OkStatus();
}

absl::Status JobManager::RestoreTasks(const std::vector<records::TaskRecord>& tasks) {
  Job* job = nullptr;  // a job's tasks come together: one lookup per job, not per task
  for (const records::TaskRecord& r : tasks) {
    if (job == nullptr || job->id() != r.id.job) job = FindJob(r.id.job);
    if (job == nullptr || r.id.instance >= job->instances()) {
      return absl::DataLossError(
          absl::StrCat("stored task ", r.id.ToString(), " belongs to no stored job"));
    }
    TaskRuntime& t = job->mutable_task(r.id.instance);
    t.run = r.run;
    t.failures = r.failures;
    t.host = r.host.empty() ? kNoHost : InternHost(r.host);
    if (t.host != kNoHost) NoteOnHost(t.host, r.id);
    t.exit_code = r.exit_code;
    t.signal = r.signal;
    t.started_at = r.started_at;
    t.finished_at = r.finished_at;
    t.not_before = r.not_before;
    t.restart_requested = r.restart_requested;
    t.spec_version = static_cast<uint32_t>(r.spec_version != 0 ? r.spec_version : job->version());
    t.next_spec_version = static_cast<uint32_t>(r.next_spec_version);
    t.volume_host = r.volume_host.empty() ? kNoHost : InternHost(r.volume_host);
    t.reason = TaskReasonFromName(r.reason).value_or(TaskReason::kNone);
    job->SetState(r.id.instance, r.state);
    if (MayHaveProcess(r.state) && job->TaskFor(r.id.instance)->health) {
      job->SetHealth(r.id.instance, t.reason == TaskReason::kHealthy     ? TaskHealth::kHealthy
                                    : t.reason == TaskReason::kUnhealthy ? TaskHealth::kUnhealthy
                                                                         : TaskHealth::kUnknown);
    }
    if (r.state == TaskState::kRunning && job->spec().sla.max_running_time > absl::ZeroDuration()) {
      deadline_timers_.push(
          Timer{r.started_at + job->spec().sla.max_running_time, RunId{r.id, r.run}});
    }
  }
  return absl::OkStatus();
}

void JobManager::FinishRestore(absl::Time now, Effects& fx) {
  for (JobId id : ids_) {  // by id: the same order every time, whatever the hash map's
    Job* job = jobs_.at(id).get();
    // Instances an update added but has not started yet wait for it.
    absl::flat_hash_set<uint32_t> waiting;
    if (const records::UpdateRecord* u = job->active_update(); u != nullptr) {
      for (size_t k = 0; k < u->instances.size(); ++k) {
        if (u->progress[k] == records::EntryProgress::kWaiting) waiting.insert(u->instances[k]);
      }
    }
    for (uint32_t i = 0; i < job->instances(); ++i) {
      TaskRuntime& t = job->mutable_task(i);
      if (t.run == 1 && t.state == TaskState::kPending && waiting.contains(i)) continue;
      if (t.state == TaskState::kReady || t.state == TaskState::kPlaced) {
        job->SetState(i, TaskState::kPending);  // never persisted; admission starts over
      }
      if (t.state != TaskState::kPending) continue;
      if (job->goal() == records::JobGoal::kKill) {
        Transition(*job, i, TaskState::kKilled, TaskReason::kKilledByUser, "", now, fx, true);
      } else if (t.not_before > now) {
        backoff_timers_.push(Timer{t.not_before, RunId{TaskId{id, i}, t.run}});
      } else {
        fx.enqueue.push_back(TaskId{id, i});
      }
    }
  }
}

std::vector<RunId> JobManager::LiveRunsOnHost(const std::string& host) const {
  std::vector<RunId> out;
  auto it = host_index_.find(host);
  if (it == host_index_.end()) return out;
  for (const TaskId& task : TasksOnHost(it->second)) {
    const TaskRuntime& t = GetJob(task.job)->task(task.instance);
    if (MayHaveProcess(t.state)) out.push_back(RunId{task, t.run});
  }
  std::sort(out.begin(), out.end());
  return out;
}

void JobManager::NoteOnHost(uint32_t h, TaskId task) {
  if (h >= on_host_.size()) {
    on_host_.resize(h + 1);
    on_host_compacted_.resize(h + 1, 0);
  }
  on_host_[h].push_back(task);
  if (on_host_[h].size() >= 2 * size_t{on_host_compacted_[h]} + 16) CompactHost(h);
}

const std::vector<TaskId>& JobManager::TasksOnHost(uint32_t h) const {
  static const std::vector<TaskId>* const kNone = new std::vector<TaskId>();
  if (h >= on_host_.size()) return *kNone;
  CompactHost(h);
  return on_host_[h];
}

void JobManager::CompactHost(uint32_t h) const {
  std::vector<TaskId>& list = on_host_[h];
  std::sort(list.begin(), list.end());
  list.erase(std::unique(list.begin(), list.end()), list.end());
  std::erase_if(list, [&](const TaskId& task) {
    const Job* job = GetJob(task.job);
    return job == nullptr || task.instance >= job->instances() ||
           job->task(task.instance).host != h;
  });
  on_host_compacted_[h] = static_cast<uint32_t>(list.size());
}

const Job* JobManager::GetJob(JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

Job* JobManager::FindJob(JobId id) {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

uint32_t JobManager::InternHost(const std::string& host) {
  auto [it, inserted] = host_index_.try_emplace(host, static_cast<uint32_t>(hosts_.size()));
  if (inserted) hosts_.push_back(host);
  return it->second;
}

void JobManager::Transition(Job& job, uint32_t instance, TaskState to, TaskReason reason,
                            const std::string& message, absl::Time now, Effects& fx, bool persist) {
  job.SetState(instance, to);
  TaskRuntime& t = job.mutable_task(instance);
  t.reason = reason;
  if (reason == TaskReason::kStarted) {
    job.SetHealth(instance,
                  job.TaskFor(instance)->health ? TaskHealth::kUnknown : TaskHealth::kNone);
  } else if (!MayHaveProcess(to) || to == TaskState::kKilling || to == TaskState::kPreempting) {
    // A run being stopped serves no more: it is no longer counted as healthy.
    job.SetHealth(instance, TaskHealth::kNone);
  }
  RunId run{TaskId{job.id(), instance}, t.run};
  fx.batch.events.push_back(records::TaskEvent{run, now, to,
                                               t.host == kNoHost ? "" : hosts_[t.host],
                                               std::string(TaskReasonName(reason)), message});
  if (persist) fx.batch.put_tasks.push_back(Record(job, instance, message));
}

void JobManager::EndRun(Job& job, uint32_t instance, TaskState ended, TaskReason reason,
                        const std::string& message, absl::Time now, Effects& fx) {
  PL_CHECK(IsTerminal(ended)) << TaskStateName(ended);
  TaskRuntime& t = job.mutable_task(instance);
  t.finished_at = now;
  bool long_running = job.spec().type != JobType::kBatch;
  // A long-running instance that exits at all has failed to stay up: it counts towards its
  // backoff even when it exits 0.
  if (ended == TaskState::kFailed || (long_running && ended == TaskState::kSucceeded)) {
    ++t.failures;
  }
  TaskId id{job.id(), instance};
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
  if (job.goal() == records::JobGoal::kKill) {
    Transition(job, instance, ended, reason, message, now, fx, true);
    return;
  }
  if (reason == TaskReason::kPreempted || reason == TaskReason::kHostDraining ||
      reason == TaskReason::kRevoked) {
    Transition(job, instance, ended, reason, message, now, fx, true);
    StartNewRun(job, instance, now, now, fx);
    return;
  }
  const RestartSpec policy = EffectiveRestart(job.spec());
  RestartDecision d = DecideRestart(policy, ended, t.failures, now);
  std::string detail = message;
  if (!d.restart && ended == TaskState::kFailed && policy.policy == RestartPolicy::kOnFailure) {
    detail = absl::StrCat(message.empty() ? "" : message + "; ", "no more restarts: ", t.failures,
                          " failed runs (max_failures ", policy.max_failures, ")");
  }
  Transition(job, instance, ended, reason, detail, now, fx, true);
  if (d.restart) StartNewRun(job, instance, d.not_before, now, fx);
}

void JobManager::StartNewRun(Job& job, uint32_t instance, absl::Time not_before, absl::Time now,
                             Effects& fx) {
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
          : "";
  Transition(job, instance, TaskState::kPending, TaskReason::kRestarting, msg, now, fx, true);
  TaskId id{job.id(), instance};
  if (not_before <= now) {
    fx.enqueue.push_back(id);
  } else {
    backoff_timers_.push(Timer{not_before, RunId{id, t.run}});
  }
}

void JobManager::KillTask(Job& job, uint32_t instance, TaskReason reason, absl::Time now,
                          Effects& fx) {
  TaskRuntime& t = job.mutable_task(instance);
  TaskId id{job.id(), instance};
  if (IsLiveBeforeLaunch(t.state)) {
    if (t.state != TaskState::kPending) fx.release.push_back(id);
    fx.withdraw.push_back(id);
    t.finished_at = now;
    Transition(job, instance, TaskState::kKilled, reason, "", now, fx, true);
    return;
  }
  if (t.state == TaskState::kLaunching || t.state == TaskState::kRunning ||
      t.state == TaskState::kPreempting) {
    Transition(job, instance, TaskState::kKilling, reason, "", now, fx, true);
    fx.kills.push_back(
        KillCommand{RunId{id, t.run}, hosts_[t.host], job.TaskFor(instance)->kill_grace, reason});
  }
}

records::TaskRecord JobManager::Record(const Job& job, uint32_t instance,
                                       const std::string& message) const {
  const TaskRuntime& t = job.task(instance);
  records::TaskRecord r;
  r.id = TaskId{job.id(), instance};
  r.run = t.run;
  r.state = t.state;
  r.host = t.host == kNoHost ? "" : hosts_[t.host];
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
  r.volume_host = t.volume_host == kNoHost ? "" : hosts_[t.volume_host];
  return r;
}

}  // namespace paceline::jobmgr
