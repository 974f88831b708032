#include "agent/isolation/cgroup_hook.h"

#include "absl/strings/str_cat.h"

namespace paceline::agent {

absl::Status CgroupHook::Prepare(RunContext& ctx) {
  if (driver_.mode() == CgroupMode::kNone) return absl::OkStatus();
  CgroupLimits limits;
  limits.memory_bytes = ctx.request.spec.resources.memory_bytes();
  limits.cpu_milli = ctx.request.spec.resources.cpu_milli();
  limits.cpu_hard_limit = cpu_hard_limit_;
  limits.pids_max = pids_max_;
  if (!host_gpus_.empty() && cdi_ != nullptr) {
    limits.deny_devices = GpuDenyRules(cdi_->Get(), host_gpus_, ctx.gpus);
  }
  absl::StatusOr<std::string> name = driver_.Create(ctx.key, limits);
  if (!name.ok()) {
    return absl::Status(name.status().code(),
                        absl::StrCat("cgroup for ", ctx.key, ": ", name.status().message()));
  }
  ctx.cgroup = *std::move(name);
  ctx.cgroup_procs = driver_.ProcsFiles(ctx.cgroup);
  return absl::OkStatus();
}

void CgroupHook::Cleanup(RunContext& ctx, CleanupKind kind) {
  if (ctx.cgroup.empty()) return;
  if (kind == CleanupKind::kFinished) {
    driver_.Release(ctx.cgroup).IgnoreError();
  } else {
    driver_.Remove(ctx.cgroup).IgnoreError();
  }
}

}  // namespace paceline::agent
