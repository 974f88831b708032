#pragma once
// What a new token grants, checked field by field before it is made (AccessService.CreateToken,
// `paceline token create`).
//
//   user   1 to 64 of [A-Za-z0-9._@-]; for an agent, the host it may register as, or "*"
//   group  empty, or like a user
//   role   admin, pool-admin, submitter, viewer or agent
//   scope  a pool path ("/", "/ads", "/ads/train"); empty = "/". An agent's scope is its user.
//   name   a label: at most 64 printable characters
//
// Thread-safety: pure functions.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "records/records.h"

namespace paceline::access {

struct GrantRequest {
  std::string user;
  std::string group;
  std::string role;
  std::string scope;
  std::string name;
};

// A record with user, group, role, scope and name filled in, or INVALID_ARGUMENT naming the
// field and what was expected.
absl::StatusOr<records::TokenRecord> CheckGrant(const GrantRequest& request);

// Whether `name` may be a user, group or agent host: 1 to 64 of [A-Za-z0-9._@-].
bool IsValidName(absl::string_view name);

}  // namespace paceline::access
