// JobServiceImpl: rolling updates — UpdateJob (with dry runs), Get/ListUpdates, Pause/Resume/Abort,
// RollbackJob. The work happens in the job manager (jobmgr/job_manager.h).

#include "absl/strings/str_cat.h"
#include "access/task_credential.h"
#include "api/access_targets.h"
#include "api/grpc_status.h"
#include "api/job_not_found.h"
#include "api/job_service_impl.h"
#include "api/secret_service.h"
#include "common/status.h"
#include "jobmgr/update_plan.h"
#include "spec/spec_validation.h"
#include "spec/yaml_spec.h"
#include "wire/agent_protocol.h"
#include "wire/core.h"
#include "wire/job_info.h"

namespace paceline::api {
namespace {

using scheduler::SchedulerCore;

// The spec's update defaults with the request's options on top.
absl::StatusOr<UpdateSpec> MergeOptions(UpdateSpec base, const v1::UpdateOptions& o) {
  if (o.has_batch_size()) {
    if (o.batch_size() == 0) {
      return absl::InvalidArgumentError("options.batch_size: 0; expected at least 1");
    }
    base.batch_size = o.batch_size();
  }
  if (o.has_max_failures()) base.max_failures = o.max_failures();
  if (o.has_rollback_on_failure()) base.rollback_on_failure = o.rollback_on_failure();
  if (o.has_in_place()) base.in_place = o.in_place();
  if (o.has_min_healthy_time_ms()) {
    if (o.min_healthy_time_ms() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("options.min_healthy_time_ms: ", o.min_healthy_time_ms(),
                       " is negative; expected 0 or more"));
    }
    base.min_healthy_time = absl::Milliseconds(o.min_healthy_time_ms());
  }
  return base;
}

}  // namespace

grpc::Status JobServiceImpl::UpdateJob(grpc::ServerContext* ctx, const v1::UpdateJobRequest* req,
                                       v1::UpdateJobResponse* resp) {
  if (grpc::Status a = access_->Check(ctx, JobTarget(*cluster_, req->job_id())); !a.ok()) {
    return a;
  }
  if (std::optional<access::Principal> who = access_->Caller(ctx); who.has_value()) {
    absl::Status may = access::TaskMayUpdate(*who, !req->spec_yaml().empty(), req->instances() > 0);
    if (!may.ok()) return ToGrpcStatus(may);
  }
  std::optional<JobSpec> parsed;
  if (!req->spec_yaml().empty()) {
    absl::StatusOr<JobSpec> spec =
        ParseJobSpec(req->spec_yaml(), req->spec_name().empty() ? "request" : req->spec_name());
    if (!spec.ok()) return ToGrpcStatus(spec.status());
    parsed = *std::move(spec);
  }
  if (req->version() == 0 && !req->dry_run()) {
    return ToGrpcStatus(absl::InvalidArgumentError(
        "version: missing; name the job version this update replaces (see `job get`)"));
  }
  return ToGrpcStatus(
      cluster_->Mutate([&](SchedulerCore& core, absl::Time now, scheduler::Actions& out) {
        const jobmgr::Job* job = core.jobs().GetJob(JobId(req->job_id()));
        if (job == nullptr) return JobNotFound(req->job_id());
        JobSpec spec = parsed ? *parsed : job->spec();
        // With roles, the last role grows or shrinks.
        if (req->instances() > 0) RETURN_IF_ERROR(ResizeInstances(spec, req->instances()));
        RETURN_IF_ERROR(ToStatus(ValidateJobSpec(spec)));
        RETURN_IF_ERROR(CheckSecretRefs(secrets_, job->pool(), spec));
        ASSIGN_OR_RETURN(UpdateSpec options, MergeOptions(spec.update, req->options()));
        jobmgr::UpdatePlan plan = jobmgr::PlanUpdate(*job, spec);
        if (spec.type == JobType::kBatch && !req->options().has_batch_size()) {
          // A batch job grows or shrinks at once (a driver asking for executors).
          options.batch_size = std::max<uint32_t>(1, plan.Order().size());
        }
        resp->mutable_added()->Add(plan.added.begin(), plan.added.end());
        resp->mutable_removed()->Add(plan.removed.begin(), plan.removed.end());
        resp->mutable_updated()->Add(plan.updated.begin(), plan.updated.end());
        resp->mutable_unchanged()->Add(plan.unchanged.begin(), plan.unchanged.end());
        resp->set_version(job->version() + 1);
        if (req->dry_run()) return absl::OkStatus();
        jobmgr::UpdateRequest update{std::move(spec), req->version(), options, req->paused(),
                                     req->override()};
        ASSIGN_OR_RETURN(uint64_t id, core.job_control().UpdateJob(JobId(req->job_id()),
                                                                   std::move(update), now, out));
        resp->set_update_id(id);
        return absl::OkStatus();
      }));
}

grpc::Status JobServiceImpl::GetUpdate(grpc::ServerContext* ctx, const v1::GetUpdateRequest* req,
                                       v1::GetUpdateResponse* resp) {
  if (grpc::Status a = access_->Check(ctx, JobTarget(*cluster_, req->job_id())); !a.ok()) {
    return a;
  }
  return ToGrpcStatus(cluster_->Read<absl::Status>([&](const SchedulerCore& core) {
    const jobmgr::Job* job = core.jobs().GetJob(JobId(req->job_id()));
    if (job == nullptr) return JobNotFound(req->job_id());
    for (auto it = job->updates().rbegin(); it != job->updates().rend(); ++it) {
      if (req->update_id() == 0 || it->id == req->update_id()) {
        *resp->mutable_update() = wire::UpdateInfoOf(job->id(), *it);
        return absl::OkStatus();
      }
    }
    return absl::NotFoundError(
        req->update_id() == 0 ? absl::StrCat("job ", req->job_id(), " has never been updated")
                              : absl::StrCat("job ", req->job_id(), " has no update ",
                                             req->update_id(), " (only the latest few are kept)"));
  }));
}

grpc::Status JobServiceImpl::ListUpdates(grpc::ServerContext* ctx,
                                         const v1::ListUpdatesRequest* req,
                                         v1::ListUpdatesResponse* resp) {
  if (grpc::Status a = access_->Check(ctx, JobTarget(*cluster_, req->job_id())); !a.ok()) {
    return a;
  }
  return ToGrpcStatus(cluster_->Read<absl::Status>([&](const SchedulerCore& core) {
    const jobmgr::Job* job = core.jobs().GetJob(JobId(req->job_id()));
    if (job == nullptr) return JobNotFound(req->job_id());
    for (const records::UpdateRecord& u : job->updates()) {
      *resp->add_updates() = wire::UpdateInfoOf(job->id(), u);
    }
    return absl::OkStatus();
  }));
}

grpc::Status JobServiceImpl::SetPaused(grpc::ServerContext* ctx, uint64_t job, bool paused) {
  return ToGrpcStatus(
      cluster_->Mutate([&](SchedulerCore& core, absl::Time now, scheduler::Actions& out) {
        RETURN_IF_ERROR(CheckJob(*access_, ctx, core, job));
        return core.job_control().PauseUpdate(JobId(job), paused, now, out);
      }));
}

grpc::Status JobServiceImpl::PauseUpdate(grpc::ServerContext* ctx,
                                         const v1::PauseUpdateRequest* req,
                                         v1::PauseUpdateResponse*) {
  return SetPaused(ctx, req->job_id(), true);
}

grpc::Status JobServiceImpl::ResumeUpdate(grpc::ServerContext* ctx,
                                          const v1::ResumeUpdateRequest* req,
                                          v1::ResumeUpdateResponse*) {
  return SetPaused(ctx, req->job_id(), false);
}

grpc::Status JobServiceImpl::AbortUpdate(grpc::ServerContext* ctx,
                                         const v1::AbortUpdateRequest* req,
                                         v1::AbortUpdateResponse*) {
  return ToGrpcStatus(
      cluster_->Mutate([&](SchedulerCore& core, absl::Time now, scheduler::Actions& out) {
        RETURN_IF_ERROR(CheckJob(*access_, ctx, core, req->job_id()));
        return core.job_control().AbortUpdate(JobId(req->job_id()), now, out);
      }));
}

grpc::Status JobServiceImpl::RollbackJob(grpc::ServerContext* ctx,
                                         const v1::RollbackJobRequest* req,
                                         v1::RollbackJobResponse* resp) {
  return ToGrpcStatus(cluster_->Mutate([&](SchedulerCore& core, absl::Time now,
                                           scheduler::Actions& out) {
    RETURN_IF_ERROR(CheckJob(*access_, ctx, core, req->job_id()));
    const jobmgr::Job* job = core.jobs().GetJob(JobId(req->job_id()));
    if (job == nullptr) return JobNotFound(req->job_id());
    ASSIGN_OR_RETURN(UpdateSpec options, MergeOptions(job->spec().update, req->options()));
    ASSIGN_OR_RETURN(uint64_t id, core.job_control().RollbackJob(
                                      JobId(req->job_id()), req->to_version(), options, now, out));
    resp->set_update_id(id);
    resp->set_version(core.jobs().GetJob(JobId(req->job_id()))->version());
    return absl::OkStatus();
  }));
}

}  // namespace paceline::api
