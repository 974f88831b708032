#include "access/grant.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "access/role.h"

namespace paceline::access {
namespace {

bool IsNameChar(char c) {
  return absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '@' || c == '-';
}

absl::Status CheckScope(absl::string_view scope) {
  if (scope == "/") return absl::OkStatus();
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("scope: '", scope, "' ", why, "; expected a pool path such as /ads/train"));
  };
  if (scope.empty() || scope.front() != '/') return bad("does not start with /");
  for (absl::string_view seg : absl::StrSplit(scope.substr(1), '/')) {
    if (seg.empty()) return bad("has an empty segment");
    for (char c : seg) {
      if (!absl::ascii_isalnum(c) && c != '.' && c != '_' && c != '-') {
        return bad("has a character that no pool name has");
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool IsValidName(absl::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!IsNameChar(c)) return false;
  }
  return true;
}

absl::StatusOr<records::TokenRecord> CheckGrant(const GrantRequest& request) {
  std::optional<Role> role = RoleFromName(request.role);
  if (!role.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("role: '", request.role, "' is no role; expected one of ", RoleNames()));
  }
  const bool agent = *role == Role::kAgent;
  if (!(agent && request.user == "*") && !IsValidName(request.user)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "user: '", request.user, "' is not 1 to 64 of A-Z a-z 0-9 . _ @ -",
        agent ? " (an agent's user is the host it registers as, or * for any host)" : ""));
  }
  if (!request.group.empty() && !IsValidName(request.group)) {
    return absl::InvalidArgumentError(
        absl::StrCat("group: '", request.group, "' is not 1 to 64 of A-Z a-z 0-9 . _ @ -"));
  }
  std::string scope = request.scope;
  if (*role == Role::kAdmin && !scope.empty() && scope != "/") {
    return absl::InvalidArgumentError(
        absl::StrCat("scope: an admin acts on the whole tree; '", scope,
                     "' would not limit it (give pool-admin on ", scope, " instead)"));
  }
  if (agent && !request.group.empty()) {
    return absl::InvalidArgumentError("group: an agent's credential has no group");
  }
  if (agent) {
    if (!scope.empty() && scope != request.user) {
      return absl::InvalidArgumentError(
          "scope: an agent's credential is scoped to its host (the user); leave scope empty");
    }
    scope = request.user;
  } else {
    if (scope.empty()) scope = "/";
    if (absl::Status s = CheckScope(scope); !s.ok()) return s;
  }
  if (request.name.size() > 64) {
    return absl::InvalidArgumentError("name: longer than 64 characters");
  }
  for (char c : request.name) {
    if (!absl::ascii_isprint(c)) {
      return absl::InvalidArgumentError("name: has a character that is not printable");
    }
  }
  records::TokenRecord r;
  r.user = request.user;
  r.group = request.group;
  r.role = std::string(RoleName(*role));
  r.scope = scope;
  r.name = request.name;
  return r;
}

}  // namespace paceline::access
