#include "agent/isolation/task_user_hook.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <vector>

#include "absl/strings/str_cat.h"

namespace paceline::agent {

TaskUserHook::TaskUserHook(std::string default_user, bool switch_users, bool allow_root)
    : default_user_(std::move(default_user)),
      switch_users_(switch_users),
      allow_root_(allow_root) {}

absl::StatusOr<TaskUser> TaskUserHook::Lookup(const std::string& name) {
  struct passwd pw;
  struct passwd* result = nullptr;
  std::vector<char> buf(16384);
  int rc = ::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &result);
  if (rc != 0 || result == nullptr) {
    return absl::NotFoundError(absl::StrCat("user '", name,
                                            "' does not exist on this host; create it or set "
                                            "another task user"));
  }
  TaskUser u;
  u.name = name;
  u.uid = static_cast<int>(pw.pw_uid);
  u.gid = static_cast<int>(pw.pw_gid);
  u.home = pw.pw_dir != nullptr ? pw.pw_dir : "";
  int n = 64;
  std::vector<gid_t> groups(n);
  if (::getgrouplist(name.c_str(), pw.pw_gid, groups.data(), &n) < 0) {
    groups.resize(n);
    ::getgrouplist(name.c_str(), pw.pw_gid, groups.data(), &n);
  }
  groups.resize(n > 0 ? n : 0);
  for (gid_t g : groups) u.groups.push_back(static_cast<uint32_t>(g));
  return u;
}

absl::StatusOr<TaskUser> TaskUserHook::Cached(const std::string& name) {
  auto it = cache_.find(name);
  if (it != cache_.end()) return it->second;
  absl::StatusOr<TaskUser> u = Lookup(name);
  if (u.ok()) cache_.emplace(name, *u);
  return u;
}

absl::Status TaskUserHook::Prepare(RunContext& ctx) {
  const std::string& wanted = ctx.request.spec.user;
  if (!switch_users_) {
    struct passwd* pw = ::getpwuid(::geteuid());
    std::string me = pw != nullptr ? pw->pw_name : absl::StrCat(::geteuid());
    if (!wanted.empty() && wanted != me) {
      return absl::FailedPreconditionError(
          absl::StrCat("the task asks to run as '", wanted, "' but the agent runs as '", me,
                       "' without root privileges and cannot switch users"));
    }
    ctx.user = TaskUser{me, -1, -1, {}, ""};
    return absl::OkStatus();
  }
  const std::string& name = wanted.empty() ? default_user_ : wanted;
  absl::StatusOr<TaskUser> u = Cached(name);
  if (!u.ok()) return u.status();
  if (u->uid == 0 && !allow_root_) {
    return absl::PermissionDeniedError(absl::StrCat("tasks may not run as root (user '", name,
                                                    "'); set another user in the task spec"));
  }
  ctx.user = *u;
  return absl::OkStatus();
}

}  // namespace paceline::agent
