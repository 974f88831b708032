#pragma once
// TaskUserHook: decides who the task runs as. When the agent runs as root, a task runs as its
// spec's `user`, or else as the configured default task user ("nobody"); root itself is refused
// unless allowed by the config. When the agent is not root it cannot switch users: tasks run as
// the agent's user, and a spec naming another user is rejected with a message saying so.
//
// Thread-safety: runtime thread only. User lookups are cached for the agent's lifetime.

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "agent/base/task_hook.h"

namespace paceline::agent {

class TaskUserHook final : public TaskHook {
 public:
  TaskUserHook(std::string default_user, bool switch_users, bool allow_root);
  absl::string_view name() const override { return "user"; }
  absl::Status Prepare(RunContext& ctx) override;

  // Looks a user up in the password database (uid, primary gid, supplementary groups, home).
  static absl::StatusOr<TaskUser> Lookup(const std::string& name);

 private:
  absl::StatusOr<TaskUser> Cached(const std::string& name);

  std::string default_user_;
  bool switch_users_;
  bool allow_root_;
  std::map<std::string, TaskUser> cache_;
};

}  // namespace paceline::agent
