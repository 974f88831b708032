#include "jobmgr/instance_control.h"

#include "absl/strings/str_cat.h"
#include "jobmgr/effects.h"
#include "jobmgr/serving.h"

namespace paceline::jobmgr {

absl::Status InstanceControl::Kill(TaskId task, absl::Time now, Effects& fx) {
  MutableJob* job = jobs_.Find(task.job);
  if (job == nullptr || task.instance >= job->view().instances()) {
    return absl::NotFoundError(absl::StrCat("task ", task.ToString(), " not found"));
  }
  job->mutable_task(task.instance).restart_requested = false;
  life_.KillTask(*job, task.instance, TaskReason::kKilledByUser, now, fx);
  return absl::OkStatus();
}

absl::Status InstanceControl::Restart(JobId id, const std::vector<uint32_t>& instances,
                                      absl::Time now, Effects& fx) {
  MutableJob* job = jobs_.Find(id);
  if (job == nullptr) return absl::NotFoundError(absl::StrCat("job ", id.value(), " not found"));
  for (uint32_t i : instances) {
    if (i >= job->view().instances()) {
      return absl::InvalidArgumentError(absl::StrCat("instance ", i, " is out of range: job ",
                                                     id.value(), " has ", job->view().instances()));
    }
  }
  if (job->view().goal() != records::JobGoal::kRun) {
    job->set_goal(records::JobGoal::kRun);
    fx.batch.put_jobs.push_back(job->ToRecord());
  }
  for (uint32_t i : instances) {
    TaskRuntime& t = job->mutable_task(i);
    if (IsTerminal(t.state)) {
      t.failures = 0;
      life_.StartNewRun(*job, i, now, now, fx);
    } else if (MayHaveProcess(t.state)) {
      t.restart_requested = true;
      life_.KillTask(*job, i, TaskReason::kKilledByUser, now, fx);
    }  // PENDING / READY / PLACED: about to start anyway
  }
  return absl::OkStatus();
}

void InstanceControl::Stop(TaskId task, TaskReason reason, absl::Time now, Effects& fx) {
  MutableJob* job = jobs_.Find(task.job);
  if (job == nullptr || task.instance >= job->view().instances()) return;
  TaskRuntime& t = job->mutable_task(task.instance);
  if (IsTerminal(t.state) || t.state == TaskState::kKilling) return;
  t.restart_requested = false;
  life_.KillTask(*job, task.instance, reason, now, fx);
}

absl::Status InstanceControl::ReleaseVolume(TaskId task, absl::Time now, Effects& fx) {
  MutableJob* job = jobs_.Find(task.job);
  if (job == nullptr || task.instance >= job->view().instances()) {
    return absl::NotFoundError(absl::StrCat("task ", task.ToString(), " not found"));
  }
  TaskRuntime& t = job->mutable_task(task.instance);
  if (job->view().spec().type != JobType::kStateful) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", task.job.value(), " is not stateful: its instances own no volume"));
  }
  if (t.volume_host == kNoHost) return absl::OkStatus();
  if (MayHaveProcess(t.state)) {
    return absl::FailedPreconditionError(
        absl::StrCat("task ", task.ToString(), " is ", TaskStateName(t.state), " on ",
                     hosts_.Name(t.volume_host),
                     " with its volume; only a waiting instance's volume can be released"));
  }
  std::string old = hosts_.Name(t.volume_host);
  t.volume_host = kNoHost;
  fx.batch.put_tasks.push_back(life_.Record(
      job->view(), task.instance, absl::StrCat("volume on ", old, " released by the user")));
  (void)now;
  return absl::OkStatus();
}

void InstanceControl::Rerun(TaskId task, absl::Time now, Effects& fx) {
  MutableJob* job = jobs_.Find(task.job);
  if (job == nullptr || task.instance >= job->view().instances()) return;
  if (!IsTerminal(job->view().task(task.instance).state)) return;
  job->mutable_task(task.instance).failures = 0;
  life_.StartNewRun(*job, task.instance, now, now, fx);
}

void InstanceControl::Add(JobId id, uint32_t n, absl::Time now, Effects& fx) {
  MutableJob* job = jobs_.Find(id);
  if (job == nullptr || n == 0) return;
  uint32_t first = job->view().instances();
  job->Resize(first + n);
  fx.batch.put_jobs.push_back(job->ToRecord());
  for (uint32_t i = first; i < first + n; ++i) fx.enqueue.push_back(TaskId{id, i});
  (void)now;
}

void InstanceControl::Preempt(TaskId task, const std::string& why, absl::Time now, Effects& fx,
                              TaskReason reason) {
  MutableJob* job = jobs_.Find(task.job);
  if (job == nullptr || task.instance >= job->view().instances()) return;
  TaskRuntime& t = job->mutable_task(task.instance);
  switch (t.state) {
    case TaskState::kReady:
    case TaskState::kPlaced:
      life_.Transition(*job, task.instance, TaskState::kPending, reason, why, now, fx, false);
      fx.release.push_back(task);
      fx.enqueue.push_back(task);
      return;
    case TaskState::kLaunching:
    case TaskState::kRunning: {
      const absl::Duration delay = DeregistrationDelay(job->view(), task.instance);
      life_.Transition(*job, task.instance, TaskState::kPreempting, reason, why, now, fx, true);
      if (!why.empty()) life_.NotePreempting(task, why);
      fx.kills.push_back(KillCommand{RunId{task, t.run}, hosts_.Name(t.host),
                                     job->view().TaskFor(task.instance)->kill_grace, reason,
                                     delay});
      return;
    }
    default:
      return;
  }
}

}  // namespace paceline::jobmgr
