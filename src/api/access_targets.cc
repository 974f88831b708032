#include "api/access_targets.h"

#include "absl/strings/str_cat.h"
#include "api/grpc_status.h"

namespace paceline::api {

access::Target JobTargetIn(const scheduler::SchedulerCore& core, uint64_t job_id) {
  access::Target t{.pool = "/", .object = absl::StrCat("job ", job_id), .job = job_id};
  if (const jobmgr::Job* job = core.jobs().GetJob(JobId(job_id)); job != nullptr) {
    t.pool = job->pool();
    t.owner = job->origin().owner.user;
    t.owner_group = job->origin().owner.group;
  }
  return t;
}

access::Target JobTarget(Backend& cluster, uint64_t job_id) {
  return cluster.Read<access::Target>(
      [&](const scheduler::SchedulerCore& core) { return JobTargetIn(core, job_id); });
}

absl::Status CheckJob(AccessControl& access, const grpc::ServerContext* ctx,
                      const scheduler::SchedulerCore& core, uint64_t job_id) {
  return FromGrpcStatus(access.Check(ctx, JobTargetIn(core, job_id)));
}

bool MayRead(const std::optional<access::Principal>& caller, absl::string_view pool) {
  if (!caller.has_value() || caller->role == access::Role::kAdmin) return true;
  return caller->role != access::Role::kAgent && caller->role != access::Role::kTask &&
         access::InScope(caller->scope, pool);
}

}  // namespace paceline::api
