#include "jobmgr/job_manager.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/check.h"
#include "common/status.h"
#include "jobmgr/dependency_names.h"
#include "jobmgr/restart_policy.h"

namespace paceline::jobmgr {
namespace {

// A live run's health and readiness as stored. A row written before they were stored says
// only its last reason: that one check is known, the other starts over as UNKNOWN.
void RestoreChecks(MutableJob& job, const records::TaskRecord& r) {
  std::shared_ptr<const TaskSpec> task = job.view().TaskFor(r.id.instance);
  TaskRuntime& t = job.mutable_task(r.id.instance);
  if (task->health) {
    TaskHealth h = TaskHealthFromName(r.health).value_or(TaskHealth::kNone);
    if (h == TaskHealth::kNone) {
      h = t.reason == TaskReason::kHealthy     ? TaskHealth::kHealthy
          : t.reason == TaskReason::kUnhealthy ? TaskHealth::kUnhealthy
                                               : TaskHealth::kUnknown;
    }
    job.SetHealth(r.id.instance, h);
  }
  if (task->readiness) {
    TaskReadiness ready = TaskReadinessFromName(r.readiness).value_or(TaskReadiness::kNone);
    if (ready == TaskReadiness::kNone) {
      ready = t.reason == TaskReason::kReady      ? TaskReadiness::kReady
              : t.reason == TaskReason::kNotReady ? TaskReadiness::kNotReady
                                                  : TaskReadiness::kUnknown;
    }
    t.readiness = ready;
  }
}

}  // namespace

absl::StatusOr<JobId> JobManager::CreateJob(JobSpec spec, std::string pool, absl::Time now,
                                            Effects& fx, JobOwner owner) {
  RETURN_IF_ERROR(ResolveDependencies(spec, pool, *this));
  JobId id(next_job_id_++);
  auto shared = std::make_shared<const JobSpec>(std::move(spec));
  auto job = std::make_unique<MutableJob>(id, std::move(pool), shared, 1, records::JobGoal::kRun,
                                          JobOrigin{now, std::move(owner)});
  fx.batch.put_jobs.push_back(job->ToRecord());
  fx.batch.next_job_id = next_job_id_;
  MutableJob& created = *job;
  jobs_.Put(std::move(job));
  if (!created.view().spec().depends_on.empty()) {
    deps_.Hold(created, now, fx);
    return id;
  }
  fx.enqueue.reserve(fx.enqueue.size() + created.view().instances());
  for (uint32_t i = 0; i < created.view().instances(); ++i) fx.enqueue.push_back(TaskId{id, i});
  return id;
}

absl::Status JobManager::KillJob(JobId id, absl::Time now, Effects& fx) {
  MutableJob* job = jobs_.Find(id);
  if (job == nullptr) return absl::NotFoundError(absl::StrCat("job ", id.value(), " not found"));
  if (job->view().goal() != records::JobGoal::kKill) {
    job->set_goal(records::JobGoal::kKill);
    fx.batch.put_jobs.push_back(job->ToRecord());
  }
  for (uint32_t i = 0; i < job->view().instances(); ++i) {
    job->mutable_task(i).restart_requested = false;
    life_.KillTask(*job, i, TaskReason::kKilledByUser, now, fx);
  }
  return absl::OkStatus();
}

absl::Status JobManager::DeleteJob(JobId id, Effects& fx) {
  MutableJob* job = jobs_.Find(id);
  if (job == nullptr) return absl::NotFoundError(absl::StrCat("job ", id.value(), " not found"));
  if (job->view().live() > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", id.value(), " has ", job->view().live(),
                     " live tasks; kill it first (paceline job kill ", id.value(), ")"));
  }
  if (std::vector<JobId> held = deps_.HeldOn(id); !held.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", id.value(), " is a dependency of job ", held.front().value(),
                     held.size() > 1 ? absl::StrCat(" and ", held.size() - 1, " more") : "",
                     ", which waits for it; delete it once they have started"));
  }
  fx.batch.delete_jobs.push_back(id);
  jobs_.Erase(id);
  return absl::OkStatus();
}

void JobManager::OnAdmitted(TaskId task, absl::Time now, Effects& fx, absl::string_view note) {
  MutableJob* job = jobs_.Find(task.job);
  if (job == nullptr || task.instance >= job->view().instances()) return;
  if (job->view().task(task.instance).state != TaskState::kPending) return;
  life_.Transition(*job, task.instance, TaskState::kReady, TaskReason::kAdmitted, std::string(note),
                   now, fx, false);
}

void JobManager::OnPlaced(TaskId task, Placement placed, absl::Time now, Effects& fx) {
  MutableJob* job = jobs_.Find(task.job);
  if (job == nullptr || task.instance >= job->view().instances()) return;
  TaskRuntime& t = job->mutable_task(task.instance);
  if (t.state != TaskState::kReady) return;
  t.host = hosts_.Intern(placed.host);
  hosts_.NoteOnHost(t.host, task);
  if (job->view().spec().type == JobType::kStateful && t.volume_host == kNoHost) {
    t.volume_host = t.host;  // the volume is created there at launch; the instance stays
  }
  life_.Transition(*job, task.instance, TaskState::kPlaced, TaskReason::kPlaced, "", now, fx,
                   false);
  life_.Transition(*job, task.instance, TaskState::kLaunching, TaskReason::kLaunchSent, "", now, fx,
                   true);
  fx.launches.push_back(LaunchCommand{RunId{task, t.run}, std::move(placed)});
}

void JobManager::OnStatus(const StatusReport& r, absl::Time now, Effects& fx) {
  MutableJob* job = jobs_.Find(r.run.task.job);
  uint32_t i = r.run.task.instance;
  if (job == nullptr || i >= job->view().instances() || r.run.run != job->view().task(i).run) {
    // A run this master does not own (an old run, or a deleted job): if it still runs, stop it.
    if (r.state == TaskState::kRunning) {
      fx.kills.push_back(KillCommand{r.run, r.host, absl::Seconds(10), TaskReason::kOrphaned});
    }
    return;
  }
  TaskRuntime& t = job->mutable_task(i);
  if (t.host != kNoHost && !r.host.empty() && hosts_.Name(t.host) != r.host) {
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
    job->SetHealth(i, h);  // before the transition, which stores it
    life_.Transition(*job, i, TaskState::kRunning, r.reason, r.message, now, fx, true);
    return;
  }
  if (r.state == TaskState::kRunning && r.reason == TaskReason::kGpuUnhealthy) {
    // A device the run holds failed: the run is told (an event, and the reason stored with
    // the run), and goes on as it can. Told once: the same fault reported again to a master
    // that restarted since (it keeps the run's reason, not the hosts' faults) is not news, nor
    // is a second device of the same run failing.
    if (t.state == TaskState::kRunning && t.reason != TaskReason::kGpuUnhealthy) {
      life_.Transition(*job, i, TaskState::kRunning, r.reason, r.message, now, fx, true);
    }
    return;
  }
  if (r.state == TaskState::kRunning &&
      (r.reason == TaskReason::kReady || r.reason == TaskReason::kNotReady)) {
    // A readiness change: the run joins or leaves its service's endpoints, and stays RUNNING.
    TaskReadiness ready =
        r.reason == TaskReason::kReady ? TaskReadiness::kReady : TaskReadiness::kNotReady;
    if (t.state != TaskState::kRunning || t.readiness == ready) return;
    t.readiness = ready;
    life_.Transition(*job, i, TaskState::kRunning, r.reason, r.message, now, fx, true);
    return;
  }
  if (r.state == TaskState::kRunning) {
    if (t.state == TaskState::kKilling || t.state == TaskState::kPreempting) {
      // The agent still runs a run this master is stopping: the kill may have been sent while
      // the agent was away (e.g. during a failover) and never reached it. Send it again; the
      // agent ignores a repeat.
      fx.kills.push_back(
          KillCommand{r.run, hosts_.Name(t.host), job->view().TaskFor(i)->kill_grace, t.reason});
      return;
    }
    if (t.state != TaskState::kLaunching) return;
    t.started_at = now;
    life_.Transition(*job, i, TaskState::kRunning, TaskReason::kStarted, "", now, fx, true);
    if (const absl::Time at = DeadlineFrom(job->view(), now); at != absl::InfiniteFuture()) {
      life_.ArmDeadline(at, r.run);
    }
    return;
  }
  t.exit_code = r.exit_code;
  t.signal = r.signal;
  if (t.state == TaskState::kKilling) {
    ends_.EndRun(*job, i, TaskState::kKilled, t.reason, r.message, now, fx);
    return;
  }
  if (t.state == TaskState::kPreempting) {
    // The run ends with the reason it was preempted for, so that its history says why.
    std::string why = life_.PreemptWhy(r.run.task);
    if (!r.message.empty()) why = why.empty() ? r.message : absl::StrCat(why, "; ", r.message);
    ends_.EndRun(*job, i, TaskState::kKilled, t.reason, why, now, fx);
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
  ends_.EndRun(*job, i, ended, reason, r.message, now, fx);
}

void JobManager::OnHostLost(const std::string& host, absl::Time now, Effects& fx) {
  std::optional<uint32_t> h = hosts_.Find(host);
  if (!h.has_value()) return;
  const std::vector<TaskId> on_host = hosts_.TasksOnHost(*h);  // EndRun changes the list
  for (const TaskId& task : on_host) {
    MutableJob* job = jobs_.Find(task.job);
    if (job != nullptr && MayHaveProcess(job->view().task(task.instance).state)) {
      ends_.EndRun(*job, task.instance, TaskState::kLost, TaskReason::kHostLost,
                   absl::StrCat("host ", host, " was lost"), now, fx);
    }
  }
}

void JobManager::Tick(absl::Time now, Effects& fx) {
  life_.FireTimers(now, fx);
  updates_.ProgressAll(now, fx);
  deps_.Settle(now, fx);
}

absl::Status JobManager::Restore(const records::StoreContents& contents, absl::Time now,
                                 Effects& fx, const records::TaskBatches& more) {
  next_job_id_ = std::max<uint64_t>(next_job_id_, contents.next_job_id);
  for (const records::JobRecord& r : contents.jobs) {
    auto spec = std::make_shared<const JobSpec>(r.spec);
    auto job = std::make_unique<MutableJob>(r.id, r.pool, spec, r.version, r.goal,
                                            JobOrigin{r.created_at, {r.owner, r.owner_group}});
    job->RestoreHistory(r);
    if (job->active_update() != nullptr) updates_.Track(r.id);
    jobs_.Put(std::move(job));
    next_job_id_ = std::max(next_job_id_, r.id.value() + 1);
  }
  RETURN_IF_ERROR(RestoreTasks(contents.tasks));
  if (more) RETURN_IF_ERROR(more([this](const auto& batch) { return RestoreTasks(batch); }));
  FinishRestore(now, fx);
  return absl::OkStatus();
}

absl::Status JobManager::RestoreTasks(const std::vector<records::TaskRecord>& tasks) {
  MutableJob* job = nullptr;  // a job's tasks come together: one lookup per job, not per task
  for (const records::TaskRecord& r : tasks) {
    if (job == nullptr || job->view().id() != r.id.job) job = jobs_.Find(r.id.job);
    if (job == nullptr) {
      return absl::DataLossError(
          absl::StrCat("stored task ", r.id.ToString(), " belongs to no stored job"));
    }
    if (r.id.instance >= job->view().instances()) {  // removed by a scale-down
      job->NoteRetired(r.id.instance, r.run);
      continue;
    }
    TaskRuntime& t = job->mutable_task(r.id.instance);
    t.run = r.run;
    t.failures = r.failures;
    t.host = r.host.empty() ? kNoHost : hosts_.Intern(r.host);
    if (t.host != kNoHost) hosts_.NoteOnHost(t.host, r.id);
    t.exit_code = r.exit_code;
    t.signal = r.signal;
    t.started_at = r.started_at;
    t.finished_at = r.finished_at;
    t.not_before = r.not_before;
    t.restart_requested = r.restart_requested;
    t.spec_version =
        static_cast<uint32_t>(r.spec_version != 0 ? r.spec_version : job->view().version());
    t.next_spec_version = static_cast<uint32_t>(r.next_spec_version);
    t.volume_host = r.volume_host.empty() ? kNoHost : hosts_.Intern(r.volume_host);
    t.gang_attempt = r.gang_attempt;
    t.reason = TaskReasonFromName(r.reason).value_or(TaskReason::kNone);
    ends_.NoteRestored(job->view(), r);
    job->SetState(r.id.instance, r.state);
    if (MayHaveProcess(r.state)) RestoreChecks(*job, r);
    if (r.state == TaskState::kRunning) {
      if (const absl::Time at = DeadlineFrom(job->view(), r.started_at);
          at != absl::InfiniteFuture()) {
        life_.ArmDeadline(at, RunId{r.id, r.run});
      }
    }
  }
  return absl::OkStatus();
}

void JobManager::FinishRestore(absl::Time now, Effects& fx) {
  for (JobId id : jobs_.ids()) {  // by id: the same order every time, whatever the hash map's
    MutableJob* job = jobs_.Find(id);
    // Instances an update added but has not started yet wait for it.
    absl::flat_hash_set<uint32_t> waiting;
    if (const records::UpdateRecord* u = job->active_update(); u != nullptr) {
      for (size_t k = 0; k < u->instances.size(); ++k) {
        if (u->progress[k] == records::EntryProgress::kWaiting) waiting.insert(u->instances[k]);
      }
    }
    for (uint32_t i = 0; i < job->view().instances(); ++i) {
      TaskRuntime& t = job->mutable_task(i);
      if (t.run == 1 && t.state == TaskState::kPending && waiting.contains(i)) continue;
      if (t.state == TaskState::kReady || t.state == TaskState::kPlaced) {
        job->SetState(i, TaskState::kPending);  // never persisted; admission starts over
      }
      if (t.state != TaskState::kPending) continue;
      if (t.reason == TaskReason::kWaitingForDependencies &&
          job->view().goal() != records::JobGoal::kKill) {
        if (i == 0) deps_.NoteRestoredHeld(id);  // held: settled below, once every job is back
        continue;
      }
      if (job->view().goal() == records::JobGoal::kKill) {
        life_.Transition(*job, i, TaskState::kKilled, TaskReason::kKilledByUser, "", now, fx, true);
      } else if (t.not_before > now) {
        life_.ArmBackoff(t.not_before, RunId{TaskId{id, i}, t.run});
      } else {
        fx.enqueue.push_back(TaskId{id, i});
      }
    }
    ends_.Resume(*job, now, fx);  // a gang restart whose members all stopped
  }
  deps_.SettleAll(now, fx);
}

std::vector<RunId> JobManager::LiveRunsOnHost(const std::string& host) const {
  std::vector<RunId> out;
  std::optional<uint32_t> h = hosts_.Find(host);
  if (!h.has_value()) return out;
  for (const TaskId& task : hosts_.TasksOnHost(*h)) {
    const TaskRuntime& t = GetJob(task.job)->task(task.instance);
    if (MayHaveProcess(t.state)) out.push_back(RunId{task, t.run});
  }
  std::sort(out.begin(), out.end());
  return out;
}

const Job* JobManager::GetJob(JobId id) const { return jobs_.Get(id); }

}  // namespace paceline::jobmgr
