#pragma once
// The permission table: what every gRPC method and every HTTP route needs, in one place, and
// the decision for one principal (docs/security.md "Roles"). A call whose route has no entry is
// refused (deny by default); permissions_test.cc fails when a method of the API or a route of
// the HTTP server has none.
//
// Routes are named "paceline.v1.JobService/KillJob" (gRPC, and the JSON API that calls it) or
// "GET /metrics" (an HTTP route, by its pattern).
//
// Thread-safety: the table is immutable; Authorize is a pure function.

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "access/role.h"

namespace paceline::access {

enum class Need : uint8_t {
  kPublic,         // anyone, without a credential
  kViaRpc,         // the route calls a gRPC method, whose entry decides
  kSignedIn,       // any client credential (not an agent's)
  kReadPool,       // any client credential whose scope holds the pool (no pool: results filtered)
                   // ("/": an unknown job, which only a credential for the whole tree passes)
  kManagePool,     // admin, or pool-admin whose scope holds the pool strictly below its root
  kManageSecrets,  // admin, or pool-admin whose scope holds the pool (its root included)
  kSubmit,         // admin, or pool-admin or submitter whose scope holds the pool
  kActOnJob,       // kSubmit, and a submitter must own the job or share its owner's group
  kAdmin,          // admin only
  kAgent,          // an agent credential, for its own host
};

struct Permission {
  absl::string_view route;
  Need need;
  absl::string_view action;  // what the call does, for messages: "kill jobs"
  bool audited;              // a mutation: every call is written to the audit log
  // A read that a standby answers from its followed copy of the store (docs/operations.md
  // "Reads on standbys"); a standby refuses every other call, naming the leader.
  bool followed = false;
};

// What a call is about. Empty fields are unknown or do not apply.
struct Target {
  std::string pool;         // the pool acted on (the job's pool for a job)
  std::string owner;        // the job's submitting user
  std::string owner_group;  // and that user's group
  std::string host;         // an agent's host
  std::string object;       // for the audit log: "job 12", "token t-3f…"
  uint64_t job = 0;         // the job acted on (0: none, or unknown)
};

absl::Span<const Permission> Permissions();
// The entry of `route`, or nullptr.
const Permission* FindPermission(absl::string_view route);
// The route name of a gRPC method: "/paceline.v1.JobService/KillJob" (as gRPC names it) ->
// "paceline.v1.JobService/KillJob".
absl::string_view RpcRoute(absl::string_view grpc_method);

// The routes a task's credential may call (access/task_credential.h): ask who it is, read its
// job, its tasks, their events, logs and updates, its endpoints, change its job (UpdateJob: its
// instance count only, TaskMayUpdate), kill and exec into its instances. Every other route is
// refused to it, and these only on the task's own job.
bool OpenToTasks(absl::string_view route);

// OK when `who` may make a call of `what` about `target`; PERMISSION_DENIED otherwise, saying
// who, what and where: "alice (submitter on /ads) may not kill jobs in /search".
absl::Status Authorize(const Principal& who, const Permission& what, const Target& target);

}  // namespace paceline::access
