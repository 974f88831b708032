#include "api/access_targets.h"

#include "absl/strings/str_cat.h"

namespace paceline::api {

access::Target JobTarget(Backend& cluster, uint64_t job_id) {
  access::Target t = cluster.Read<access::Target>([&](const scheduler::SchedulerCore& core) {
    access::Target found{.pool = "/"};
    if (const jobmgr::Job* job = core.jobs().GetJob(JobId(job_id)); job != nullptr) {
      found.pool = job->pool();
      found.owner = job->origin().owner.user;
      found.owner_group = job->origin().owner.group;
    }
    return found;
  });
  t.object = absl::StrCat("job ", job_id);
  return t;
}

bool MayRead(const std::optional<access::Principal>& caller, absl::string_view pool) {
  if (!caller.has_value() || caller->role == access::Role::kAdmin) return true;
  return caller->role != access::Role::kAgent && access::InScope(caller->scope, pool);
}

}  // namespace paceline::api
