// RollingUpdates (see the contract in rolling_updates.h).

#include "jobmgr/rolling_updates.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status.h"
#include "jobmgr/dependencies.h"
#include "jobmgr/restart_policy.h"
#include "jobmgr/serving.h"
#include "jobmgr/update_plan.h"

namespace paceline::jobmgr {
namespace {

using records::UpdateRecord;
using records::UpdateState;

constexpr size_t kKeptUpdates = 10;  // update records kept per job
constexpr size_t kKeptVersions = 5;  // unused earlier versions kept for `job rollback --to`

uint32_t Count(const UpdateRecord& u, records::EntryProgress c) {
  return static_cast<uint32_t>(std::count(u.progress.begin(), u.progress.end(), c));
}

}  // namespace

std::vector<uint32_t> RollingUpdates::AdoptVersion(MutableJob& job,
                                                   std::shared_ptr<const JobSpec> spec,
                                                   absl::Time now, Effects& fx) {
  uint64_t version = job.view().version() + 1;
  job.SetSpec(spec, version);
  UpdatePlan plan = PlanUpdate(job.view(), *spec);
  for (uint32_t i : plan.unchanged) {
    TaskRuntime& t = job.mutable_task(i);
    t.spec_version = static_cast<uint32_t>(version);
    t.next_spec_version = 0;
    if (t.state != TaskState::kPending || t.run > 1) {
      fx.batch.put_tasks.push_back(life_.Record(job.view(), i, ""));
    }
  }
  (void)now;
  if (spec->instances > job.view().instances()) job.Resize(spec->instances);
  return plan.Order();
}

absl::StatusOr<uint64_t> RollingUpdates::Start(JobId id, UpdateRequest req, absl::Time now,
                                               Effects& fx) {
  MutableJob* job = jobs_.Find(id);
  if (job == nullptr) return absl::NotFoundError(absl::StrCat("job ", id.value(), " not found"));
  if (req.spec.type != job->view().spec().type) {
    return absl::InvalidArgumentError(absl::StrCat(
        "type: a job's type cannot change (job ", id.value(), " is ",
        JobTypeName(job->view().spec().type), ", the spec says ", JobTypeName(req.spec.type), ")"));
  }
  if (req.spec.depends_on != job->view().spec().depends_on) {
    return absl::InvalidArgumentError(absl::StrCat(
        "depends_on: a job's dependencies are set at creation and cannot change by an update "
        "(job ",
        id.value(), " has ", job->view().spec().depends_on.size(),
        " dependencies); give the depends_on that `paceline job get` shows, or create a new job"));
  }
  if (WaitsForDependencies(job->view())) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", id.value(),
        " waits for its dependencies (depends_on) and has not started; update it once they have "
        "ended, or kill it and create it anew"));
  }
  if (job->view().goal() == records::JobGoal::kKill) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", id.value(), " was killed; restart it (paceline job restart) before updating it"));
  }
  if (req.expected_version != job->view().version()) {
    return absl::AbortedError(absl::StrCat("job ", id.value(), " is at version ",
                                           job->view().version(), ", not ", req.expected_version,
                                           "; read it again and retry"));
  }
  if (req.options.batch_size == 0) {
    return absl::InvalidArgumentError("batch_size: 0; expected at least 1");
  }
  UpdateRecord* active = job->active_update();
  if (active != nullptr && !req.override_active) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", id.value(), " has update ", active->id, " in flight (",
                     records::UpdateStateName(active->state),
                     "); wait for it, pause or abort it, or override it (--override)"));
  }
  uint64_t uid = job->view().updates().empty() ? 1 : job->view().updates().back().id + 1;
  if (active != nullptr) {
    active->state = UpdateState::kAborted;
    active->finished_at = now;
    active->message = absl::StrCat("overridden by update ", uid);
  }
  UpdateRecord u;
  u.id = uid;
  u.from_version = job->view().version();
  u.options = req.options;
  u.paused = req.paused;
  u.from_instances = job->view().instances();
  u.to_instances = req.spec.instances;
  u.started_at = now;
  u.instances = AdoptVersion(*job, std::make_shared<const JobSpec>(std::move(req.spec)), now, fx);
  u.to_version = job->view().version();
  u.progress.assign(u.instances.size(), records::EntryProgress::kWaiting);
  auto& updates = job->mutable_updates();
  updates.push_back(std::move(u));
  if (updates.size() > kKeptUpdates) updates.erase(updates.begin());
  if (std::find(updating_.begin(), updating_.end(), id) == updating_.end()) {
    updating_.push_back(id);
  }
  fx.batch.put_jobs.push_back(job->ToRecord());
  Progress(*job, now, fx);
  return uid;
}

absl::StatusOr<MutableJob*> RollingUpdates::JobWithActiveUpdate(JobId id) {
  MutableJob* job = jobs_.Find(id);
  if (job == nullptr) return absl::NotFoundError(absl::StrCat("job ", id.value(), " not found"));
  if (job->active_update() == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", id.value(), " has no update in flight"));
  }
  return job;
}

absl::Status RollingUpdates::Pause(JobId id, bool paused, absl::Time now, Effects& fx) {
  ASSIGN_OR_RETURN(MutableJob * job, JobWithActiveUpdate(id));
  UpdateRecord* u = job->active_update();
  if (u->paused == paused) return absl::OkStatus();
  u->paused = paused;
  fx.batch.put_jobs.push_back(job->ToRecord());
  if (!paused) Progress(*job, now, fx);
  return absl::OkStatus();
}

absl::Status RollingUpdates::Abort(JobId id, absl::Time now, Effects& fx) {
  ASSIGN_OR_RETURN(MutableJob * job, JobWithActiveUpdate(id));
  UpdateRecord* u = job->active_update();
  u->message = "aborted by the user";
  FinishUpdate(*job, *u, UpdateState::kAborted, now, fx);
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> RollingUpdates::Rollback(JobId id, uint64_t version, UpdateSpec options,
                                                  absl::Time now, Effects& fx) {
  MutableJob* job = jobs_.Find(id);
  if (job == nullptr) return absl::NotFoundError(absl::StrCat("job ", id.value(), " not found"));
  if (version == 0) {
    if (job->old_specs().empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("job ", id.value(), " has no earlier version to roll back to"));
    }
    version = job->old_specs().rbegin()->first;
  }
  const JobSpec* spec = job->view().SpecOf(version);
  if (spec == nullptr || version == job->view().version()) {
    std::vector<std::string> kept;
    for (const auto& [v, _] : job->old_specs()) kept.push_back(absl::StrCat(v));
    return absl::NotFoundError(
        absl::StrCat("job ", id.value(), " has no earlier version ", version,
                     "; kept: ", kept.empty() ? "none" : absl::StrJoin(kept, ", ")));
  }
  UpdateRequest req{*spec, job->view().version(), options, false, /*override_active=*/true};
  return Start(id, std::move(req), now, fx);
}

void RollingUpdates::Track(JobId id) { updating_.push_back(id); }

void RollingUpdates::ProgressAll(absl::Time now, Effects& fx) {
  std::vector<JobId> updating = updating_;  // an update that ends leaves updating_
  for (JobId id : updating) {
    if (MutableJob* job = jobs_.Find(id); job != nullptr) Progress(*job, now, fx);
  }
}

void RollingUpdates::Progress(MutableJob& job, absl::Time now, Effects& fx) {
  UpdateRecord* u = job.active_update();
  if (u == nullptr) return;
  bool changed = false;
  for (size_t k = 0; k < u->instances.size(); ++k) {
    if (u->progress[k] != records::EntryProgress::kInFlight) continue;
    records::EntryProgress c = CheckEntry(job.view(), *u, k, now);
    if (c != u->progress[k]) {
      u->progress[k] = c;
      changed = true;
    }
  }
  uint32_t failed = Count(*u, records::EntryProgress::kFailed);
  if (failed > u->options.max_failures && u->state == UpdateState::kRollingForward) {
    std::string why = absl::StrCat(failed, " instances failed on version ", u->to_version,
                                   " (max_failures ", u->options.max_failures, ")");
    if (u->options.rollback_on_failure) {
      u->message = absl::StrCat(why, "; rolled back to version ", u->from_version);
      StartRollingBack(job, *u, now, fx);
    } else {
      u->message = why;
      FinishUpdate(job, *u, UpdateState::kFailed, now, fx);
    }
    return;
  }
  if (!u->paused) {
    uint32_t in_flight = Count(*u, records::EntryProgress::kInFlight);
    for (size_t k = 0; k < u->instances.size() && in_flight < u->options.batch_size; ++k) {
      if (u->progress[k] != records::EntryProgress::kWaiting) continue;
      BeginEntry(job, *u, k, now, fx);
      u->progress[k] = CheckEntry(job.view(), *u, k, now);
      if (u->progress[k] == records::EntryProgress::kInFlight) ++in_flight;
      changed = true;
    }
  }
  if (Count(*u, records::EntryProgress::kWaiting) + Count(*u, records::EntryProgress::kInFlight) ==
      0) {
    bool back = u->state == UpdateState::kRollingBack;
    FinishUpdate(job, *u, back ? UpdateState::kRolledBack : UpdateState::kSucceeded, now, fx);
    return;
  }
  if (changed) fx.batch.put_jobs.push_back(job.ToRecord());
}

void RollingUpdates::BeginEntry(MutableJob& job, UpdateRecord& u, size_t entry, absl::Time now,
                                Effects& fx) {
  uint32_t i = u.instances[entry];
  if (i >= job.view().instances()) return;
  TaskRuntime& t = job.mutable_task(i);
  TaskId id{job.view().id(), i};
  if (i >= u.to_instances) {  // removed
    t.restart_requested = false;
    life_.KillTask(job, i, TaskReason::kScaledDown, now, fx);
    return;
  }
  if (i >= u.from_instances) {  // added: first run, on the new version
    t.spec_version = static_cast<uint32_t>(u.to_version);
    fx.enqueue.push_back(id);
    return;
  }
  t.next_spec_version = static_cast<uint32_t>(u.to_version);
  if (MayHaveProcess(t.state)) {
    t.restart_requested = true;
    life_.KillTask(job, i, TaskReason::kUpdated, now, fx);
  } else if (IsLiveBeforeLaunch(t.state)) {
    life_.KillTask(job, i, TaskReason::kUpdated, now, fx);
    life_.StartNewRun(job, i, now, now, fx);
  } else if (job.view().spec().type != JobType::kBatch) {
    life_.StartNewRun(job, i, now, now, fx);
  } else {
    // A batch instance that has ended keeps its result; it runs the new version if it reruns.
    t.spec_version = t.next_spec_version;
    t.next_spec_version = 0;
    fx.batch.put_tasks.push_back(life_.Record(job.view(), i, ""));
  }
}

records::EntryProgress RollingUpdates::CheckEntry(const Job& job, const UpdateRecord& u,
                                                  size_t entry, absl::Time now) const {
  uint32_t i = u.instances[entry];
  if (i >= job.instances()) return records::EntryProgress::kDone;
  const TaskRuntime& t = job.task(i);
  if (i >= u.to_instances)
    return IsTerminal(t.state) ? records::EntryProgress::kDone : records::EntryProgress::kInFlight;
  if (t.spec_version != u.to_version)
    return records::EntryProgress::kInFlight;  // the old run is ending
  const JobSpec& spec = *job.SpecOf(u.to_version);
  RestartSpec restart = EffectiveRestart(spec, i);
  uint32_t allowed = restart.policy == RestartPolicy::kNever ? 0 : restart.max_failures;
  if (t.failures > allowed || t.state == TaskState::kFailed) return records::EntryProgress::kFailed;
  if (spec.type == JobType::kBatch) {
    bool started = t.state == TaskState::kRunning || IsTerminal(t.state);
    return started ? records::EntryProgress::kDone : records::EntryProgress::kInFlight;
  }
  if (t.state != TaskState::kRunning || now - t.started_at < u.options.min_healthy_time) {
    return records::EntryProgress::kInFlight;
  }
  // A new run counts once it serves: healthy and ready, so that it has joined its endpoints
  // before the next batch leaves them.
  return Serving(t) ? records::EntryProgress::kDone : records::EntryProgress::kInFlight;
}

void RollingUpdates::StartRollingBack(MutableJob& job, UpdateRecord& u, absl::Time now,
                                      Effects& fx) {
  std::shared_ptr<const JobSpec> from = job.SharedSpecOf(u.from_version);
  u.state = UpdateState::kRollingBack;
  u.from_instances = job.view().instances();  // from here on: what the rollback starts from
  u.to_instances = from->instances;
  u.instances = AdoptVersion(job, from, now, fx);
  u.to_version = job.view().version();
  u.progress.assign(u.instances.size(), records::EntryProgress::kWaiting);
  fx.batch.put_jobs.push_back(job.ToRecord());
  Progress(job, now, fx);
}

void RollingUpdates::FinishUpdate(MutableJob& job, UpdateRecord& u, UpdateState end, absl::Time now,
                                  Effects& fx) {
  u.state = end;
  u.finished_at = now;
  for (size_t k = 0; k < u.instances.size(); ++k) {
    uint32_t i = u.instances[k];
    // Instances an unfinished update added but never started: they start now.
    if (u.progress[k] == records::EntryProgress::kWaiting && i >= u.from_instances &&
        i < u.to_instances && i < job.view().instances()) {
      job.mutable_task(i).spec_version = static_cast<uint32_t>(u.to_version);
      fx.enqueue.push_back(TaskId{job.view().id(), i});
    }
  }
  // Removed instances that have ended leave the job. Their records stay in the store (with
  // their events): the last run of each is where an instance added back later continues.
  uint32_t keep = job.view().instances();
  while (keep > u.to_instances && IsTerminal(job.view().task(keep - 1).state)) --keep;
  job.Resize(keep);
  updating_.erase(std::remove(updating_.begin(), updating_.end(), job.view().id()),
                  updating_.end());
  job.PruneOldSpecs(kKeptVersions);
  fx.batch.put_jobs.push_back(job.ToRecord());
}

}  // namespace paceline::jobmgr
