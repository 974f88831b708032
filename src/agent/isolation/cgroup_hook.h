#pragma once
// CgroupHook: puts the task in its own cgroup with limits from its resource request (memory,
// cpu weight + quota, pids), through the CgroupDriver (v1, v2 or none). Prepare creates the
// cgroup "<run key>" and records the cgroup.procs files the task joins before exec (the wrapper's
// child writes its own pid there, then execs). Cleanup releases it after a finished run (the
// runner calls it only once the cgroup is empty; the driver may keep it for a later task) and
// removes it after a rolled-back launch.
//
// Thread-safety: runtime thread only.

#include "agent/base/task_hook.h"
#include "agent/isolation/cgroup_driver.h"

namespace paceline::agent {

class CgroupHook final : public TaskHook {
 public:
  CgroupHook(CgroupDriver& driver, bool cpu_hard_limit, int64_t pids_max)
      : driver_(driver), cpu_hard_limit_(cpu_hard_limit), pids_max_(pids_max) {}
  absl::string_view name() const override { return "cgroup"; }
  absl::Status Prepare(RunContext& ctx) override;
  void Cleanup(RunContext& ctx, CleanupKind kind) override;

 private:
  CgroupDriver& driver_;
  bool cpu_hard_limit_;
  int64_t pids_max_;
};

}  // namespace paceline::agent
