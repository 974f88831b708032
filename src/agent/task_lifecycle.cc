#include "agent/task_lifecycle.h"

#include <map>

#include "absl/strings/str_cat.h"

namespace paceline::agent {

std::string RunKey(const RunId& run) {
  return absl::StrCat(run.task.job.value(), "_", run.task.instance, "_", run.run);
}

absl::Status TaskLifecycle::Prepare(RunContext& ctx) {
  for (size_t i = 0; i < hooks_.size(); ++i) {
    absl::Status s = hooks_[i]->Prepare(ctx);
    if (!s.ok()) {
      for (size_t j = i; j-- > 0;) hooks_[j]->Cleanup(ctx, CleanupKind::kRollback);
      return absl::Status(s.code(), absl::StrCat("launch of ", ctx.run().ToString(), " (",
                                                 hooks_[i]->name(), "): ", s.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status TaskLifecycle::Finish(RunContext& ctx) {
  for (auto& hook : hooks_) {
    absl::Status s = hook->Finish(ctx);
    if (!s.ok()) {
      Cleanup(ctx, CleanupKind::kRollback);
      return absl::Status(s.code(), absl::StrCat("launch of ", ctx.run().ToString(), " (",
                                                 hook->name(), "): ", s.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status TaskLifecycle::Recover(RunContext& ctx) {
  absl::Status first = absl::OkStatus();
  for (auto& hook : hooks_) {
    absl::Status s = hook->Recover(ctx);
    if (!s.ok() && first.ok()) {
      first = absl::Status(s.code(), absl::StrCat("recover ", ctx.run().ToString(), " (",
                                                  hook->name(), "): ", s.message()));
    }
  }
  return first;
}

void TaskLifecycle::Cleanup(RunContext& ctx, CleanupKind kind) {
  for (size_t j = hooks_.size(); j-- > 0;) hooks_[j]->Cleanup(ctx, kind);
}

std::vector<std::string> TaskLifecycle::BuildEnv(const RunContext& ctx) const {
  std::map<std::string, std::string> env = config_.base_env;
  env["HOME"] = ctx.sandbox;
  if (!ctx.user.name.empty()) {
    env["USER"] = ctx.user.name;
    env["LOGNAME"] = ctx.user.name;
  }
  for (const auto& [k, v] : ctx.request.spec.env) env[k] = v;
  const RunId& run = ctx.run();
  env["PACELINE_JOB_ID"] = absl::StrCat(run.task.job.value());
  env["PACELINE_INSTANCE_ID"] = absl::StrCat(run.task.instance);
  env["PACELINE_RUN_ID"] = run.ToString();
  env["PACELINE_TASK_ID"] = run.task.ToString();
  for (const auto& [k, v] : ctx.env) env[k] = v;
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [k, v] : env) out.push_back(absl::StrCat(k, "=", v));
  return out;
}

}  // namespace paceline::agent
