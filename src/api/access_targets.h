#pragma once
// What a call is about, read from the core for AccessControl::Check (access_control.h), and
// the filter of listings by what the caller may read.
//
// Thread-safety: the functions read the core on the master's loop (Backend::Read).

#include <optional>

#include "absl/strings/string_view.h"
#include "access/permissions.h"
#include "access/role.h"
#include "api/access_control.h"
#include "api/backend.h"

namespace paceline::api {

// Job `job_id`'s pool, owner and owner's group, and the object ("job 12"). When there is no
// such job the pool is "/", the whole tree: only a caller who may act everywhere passes, and
// then learns NOT_FOUND from the handler. (The job may be created between this check and the
// handler's read, with the next id: a caller scoped to a subtree must not see it then.)
access::Target JobTarget(Backend& cluster, uint64_t job_id);
// The same, read from `core` by a caller already on the loop.
access::Target JobTargetIn(const scheduler::SchedulerCore& core, uint64_t job_id);
// AccessControl::Check against job `job_id` as `core` has it, from inside a Backend::Read or
// Mutate function: the check and the call see the same job, in one turn of the loop.
absl::Status CheckJob(AccessControl& access, const grpc::ServerContext* ctx,
                      const scheduler::SchedulerCore& core, uint64_t job_id);

// Whether `caller` may read what is in `pool` (nullopt: authentication is off).
bool MayRead(const std::optional<access::Principal>& caller, absl::string_view pool);

}  // namespace paceline::api
