#pragma once
// CgroupHook: puts the task in its own cgroup with limits from its resource request (memory,
// cpu weight + quota, pids), through the CgroupDriver (v1, v2 or none). Prepare creates the
// cgroup "<run key>" and records the cgroup.procs files the task joins before exec (the wrapper's
// child writes its own pid there, then execs). Cleanup releases it after a finished run (the
// runner calls it only once the cgroup is empty; the driver may keep it for a later task) and
// removes it after a rolled-back launch. On a GPU host the cgroup denies the device nodes of
// the GPUs the task does not hold (devices/gpu_fence.h; v1: the devices controller, v2: a
// device program).
//
// Thread-safety: runtime thread only.

#include <string>
#include <utility>
#include <vector>

#include "agent/base/agent_config.h"
#include "agent/base/task_hook.h"
#include "agent/devices/cdi.h"
#include "agent/isolation/cgroup_driver.h"

namespace paceline::agent {

class CgroupHook final : public TaskHook {
 public:
  // `host_gpus`: the host's GPU devices; a task is denied the device nodes of those it does
  // not hold (devices/gpu_fence.h, found through the CDI specs of `cdi`, which must outlive
  // the hook when there are GPUs).
  CgroupHook(CgroupDriver& driver, bool cpu_hard_limit, int64_t pids_max,
             std::vector<GpuDevice> host_gpus = {}, CdiSpecDirs* cdi = nullptr)
      : driver_(driver),
        cpu_hard_limit_(cpu_hard_limit),
        pids_max_(pids_max),
        host_gpus_(std::move(host_gpus)),
        cdi_(cdi) {}
  absl::string_view name() const override { return "cgroup"; }
  absl::Status Prepare(RunContext& ctx) override;
  void Cleanup(RunContext& ctx, CleanupKind kind) override;

 private:
  CgroupDriver& driver_;
  bool cpu_hard_limit_;
  int64_t pids_max_;
  std::vector<GpuDevice> host_gpus_;
  CdiSpecDirs* cdi_;
};

}  // namespace paceline::agent
