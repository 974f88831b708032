#include "scheduler/job_control.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "common/status.h"
#include "common/units.h"
#include "jobmgr/dependency_names.h"

namespace paceline::scheduler {

template <typename Command>
auto JobControl::Run(absl::Time now, Actions& out, Command command) {
  jobmgr::Effects fx;
  auto result = command(fx);
  // The job manager validates before it changes anything: a refused command has no effects.
  if (result.ok()) absorber_.Absorb(fx, now, out);
  return result;
}

absl::StatusOr<JobId> JobControl::CreateJob(JobSpec spec, const std::string& pool, absl::Time now,
                                            Actions& out, jobmgr::JobOwner owner) {
  ASSIGN_OR_RETURN(PoolId pool_id, rm_.tree().Lookup(pool));
  if (!rm_.tree().children(pool_id).empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("pool ", pool, " has child pools; jobs run only in leaf pools"));
  }
  RETURN_IF_ERROR(CheckGangFits(spec, pool_id, pool));
  bool daemon = spec.type == JobType::kDaemon;
  jobmgr::Effects fx;
  ASSIGN_OR_RETURN(JobId id, jobs_.CreateJob(std::move(spec), pool, now, fx, std::move(owner)));
  absorber_.Absorb(fx, now, out);
  if (daemon) {
    upkeep_.AddDaemonJob(id);
    upkeep_.MarkDirty();
    upkeep_.ReconcileDaemons(now, out);
  }
  return id;
}

absl::Status JobControl::CheckGangFits(const JobSpec& spec, PoolId pool_id,
                                       const std::string& pool) const {
  uint32_t gang = std::max<uint32_t>(1, std::min(spec.sla.min_running_instances, spec.instances));
  std::optional<Resources> gang_total;
  if (spec.roles.empty() && spec.instance_overrides.empty()) {
    gang_total = CheckedMultiply(spec.task.resources, gang);
  } else {  // the first gang's own tasks: roles and overrides ask for different amounts
    gang_total = Resources();
    for (uint32_t i = 0; i < gang && gang_total; ++i) {
      gang_total = CheckedAdd(*gang_total, spec.TaskRef(i).resources);
    }
  }
  Resources limit = rm_.tree().spec(pool_id).Limit();
  if (!gang_total || !gang_total->FitsIn(limit)) {
    Dim d = gang_total ? *gang_total->FirstExceeding(limit) : Dim::kCpu;
    return absl::FailedPreconditionError(absl::StrCat(
        "a gang of ", gang, " instances needs ", DimName(d), " ",
        gang_total ? FormatQuantity(d, (*gang_total)[d]) : "beyond range", ", above pool ", pool,
        "'s ", DimName(d), " limit ", FormatQuantity(d, limit[d]), "; it could never run"));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> JobControl::UpdateJob(JobId id, jobmgr::UpdateRequest req, absl::Time now,
                                               Actions& out) {
  const jobmgr::Job* job = jobs_.GetJob(id);
  if (job == nullptr) return absl::NotFoundError(absl::StrCat("job ", id.value(), " not found"));
  if (req.spec.schedule.has_value() != job->spec().schedule.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("schedule: a job is a cron job or not from its creation (job ", id.value(),
                     job->spec().schedule ? " is one: keep schedule" : " is not: remove schedule",
                     "); create a new job instead"));
  }
  ASSIGN_OR_RETURN(PoolId pool_id, rm_.tree().Lookup(job->pool()));
  RETURN_IF_ERROR(CheckGangFits(req.spec, pool_id, job->pool()));
  // An update may repeat depends_on as it was written (names) or as stored (ids).
  RETURN_IF_ERROR(jobmgr::ResolveDependencies(req.spec, job->pool(), jobs_, &job->spec()));
  return Run(now, out, [&](jobmgr::Effects& fx) {
    return jobs_.updates().Start(id, std::move(req), now, fx);
  });
}

absl::Status JobControl::PauseUpdate(JobId id, bool paused, absl::Time now, Actions& out) {
  return Run(now, out,
             [&](jobmgr::Effects& fx) { return jobs_.updates().Pause(id, paused, now, fx); });
}

absl::Status JobControl::AbortUpdate(JobId id, absl::Time now, Actions& out) {
  return Run(now, out, [&](jobmgr::Effects& fx) { return jobs_.updates().Abort(id, now, fx); });
}

absl::StatusOr<uint64_t> JobControl::RollbackJob(JobId id, uint64_t version, UpdateSpec options,
                                                 absl::Time now, Actions& out) {
  return Run(now, out, [&](jobmgr::Effects& fx) {
    return jobs_.updates().Rollback(id, version, options, now, fx);
  });
}

absl::Status JobControl::KillJob(JobId id, absl::Time now, Actions& out) {
  return Run(now, out, [&](jobmgr::Effects& fx) { return jobs_.KillJob(id, now, fx); });
}

absl::Status JobControl::ReleaseVolume(TaskId task, absl::Time now, Actions& out) {
  jobmgr::Effects fx;
  RETURN_IF_ERROR(jobs_.instances().ReleaseVolume(task, now, fx));
  why_.Erase(task);
  absorber_.Absorb(fx, now, out);
  return absl::OkStatus();
}

absl::Status JobControl::KillInstance(TaskId task, absl::Time now, Actions& out) {
  return Run(now, out, [&](jobmgr::Effects& fx) { return jobs_.instances().Kill(task, now, fx); });
}

absl::Status JobControl::RestartInstances(JobId id, const std::vector<uint32_t>& instances,
                                          absl::Time now, Actions& out) {
  return Run(now, out, [&](jobmgr::Effects& fx) {
    return jobs_.instances().Restart(id, instances, now, fx);
  });
}

absl::Status JobControl::DeleteJob(JobId id, Actions& out) {
  if (cron_.IsNewestRun(id)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job ", id.value(),
        " is the newest run of its cron job, which it tells which tick ran last; it is purged "
        "once a newer run finishes (schedule.keep_succeeded, keep_failed) or with its cron job"));
  }
  jobmgr::Effects fx;
  RETURN_IF_ERROR(jobs_.DeleteJob(id, fx));
  ForgetJobs({id});
  absorber_.Absorb(fx, absl::InfinitePast(), out);
  return absl::OkStatus();
}

std::vector<JobId> JobControl::PurgeExpired(const std::vector<JobId>& jobs, absl::Time now,
                                            Actions& out) {
  jobmgr::Effects fx;
  absl::flat_hash_set<JobId> purged;
  std::vector<JobId> done;
  for (JobId id : jobs) {
    if (!retention_.IsExpired(id, now) || !jobs_.DeleteJob(id, fx).ok()) continue;
    purged.insert(id);
    done.push_back(id);
  }
  if (!purged.empty()) ForgetJobs(purged);
  absorber_.Absorb(fx, now, out);
  return done;
}

void JobControl::ForgetJobs(const absl::flat_hash_set<JobId>& jobs) {
  for (JobId id : jobs) upkeep_.ForgetJob(id);
  shapes_.ForgetJobs(jobs);
  why_.ForgetJobs(jobs);
}

}  // namespace paceline::scheduler
