#include "access/role.h"

#include <array>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace paceline::access {
namespace {

constexpr std::array<std::pair<Role, absl::string_view>, 5> kNames = {{
    {Role::kAdmin, "admin"},
    {Role::kPoolAdmin, "pool-admin"},
    {Role::kSubmitter, "submitter"},
    {Role::kViewer, "viewer"},
    {Role::kAgent, "agent"},
}};

}  // namespace

absl::string_view RoleName(Role role) {
  if (role == Role::kTask) return "task";
  for (const auto& [r, name] : kNames) {
    if (r == role) return name;
  }
  return "unknown";
}

std::optional<Role> RoleFromName(absl::string_view name) {
  for (const auto& [r, n] : kNames) {
    if (n == name) return r;
  }
  return std::nullopt;
}

std::string RoleNames() {
  std::string out;
  for (const auto& [r, name] : kNames) absl::StrAppend(&out, out.empty() ? "" : ", ", name);
  return out;
}

bool InScope(absl::string_view scope, absl::string_view pool) {
  if (scope == "/") return absl::StartsWith(pool, "/");
  if (!absl::StartsWith(pool, scope)) return false;
  return pool.size() == scope.size() || pool[scope.size()] == '/';
}

std::string Principal::Describe() const {
  switch (role) {
    case Role::kAdmin:
      return absl::StrCat(user, " (admin)");
    case Role::kAgent:
      return absl::StrCat("the agent credential for ", scope == "*" ? "any host" : scope);
    case Role::kTask:
      return absl::StrCat(user, " (the credential of task ", job, "/", instance, ", run ", run,
                          ")");
    default:
      return absl::StrCat(user, " (", RoleName(role), " on ", scope, ")");
  }
}

}  // namespace paceline::access
