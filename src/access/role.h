#pragma once
// Roles and principals: who a credential acts as (docs/security.md "Roles").
//
//   admin       everything, including hosts, tokens and the audit log; never the agent protocol
//   pool-admin  on a pool subtree: create, update and delete pools there and act on any job there
//   submitter   on a pool subtree: submit jobs there; act on its own jobs and its group's; read
//   viewer      read only, in its subtree
//   agent       the agent protocol only, as its host (or any host: scope "*")
//   task        a task's credential (access/task_credential.h): its own job only, and only
//               what permissions.cc opens to tasks; never given by a token of the store
//
// A scope is a pool path: a role on /ads applies to /ads and every pool below it; "/" is the
// whole tree.
//
// Thread-safety: value types and pure functions.

#include <cstdint>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"

namespace paceline::access {

enum class Role : uint8_t { kAdmin, kPoolAdmin, kSubmitter, kViewer, kAgent, kTask };

absl::string_view RoleName(Role role);  // "admin", "pool-admin", ..., "task"
// The roles a token of the store may hold (never "task").
std::optional<Role> RoleFromName(absl::string_view name);
// "admin, pool-admin, submitter, viewer, agent", for messages.
std::string RoleNames();

// Whether the subtree `scope` holds `pool` ("/" holds every pool; "/ads" holds "/ads" and
// "/ads/x" but not "/adsx").
bool InScope(absl::string_view scope, absl::string_view pool);

struct Principal {
  std::string user;
  std::string group;
  Role role = Role::kViewer;
  std::string scope = "/";  // a pool path; agents: a host name or "*"
  std::string token_id;     // the credential's id ("bootstrap" for a master's token file)
  // A task's credential: the run it was given to (its user is "task:JOB/INSTANCE/RUN").
  uint64_t job = 0;
  uint32_t instance = 0;
  uint32_t run = 0;

  // "alice (submitter on /ads)", "admin (admin)", "agent for host-1",
  // "task:12/0/1 (the credential of task 12/0, run 1)".
  std::string Describe() const;
};

}  // namespace paceline::access
