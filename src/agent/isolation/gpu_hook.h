#pragma once
// GpuAllocator + GpuHook: which GPU devices a task sees.
//
// A task asks for N whole GPUs (gpu = N * 1000 milli-GPUs) or a share of one GPU (< 1000). The
// master may choose the device indexes (LaunchRequest::gpu_devices); otherwise the agent picks:
// whole GPUs go to fully free devices (lowest index first), a share goes to the device with the
// least room that still fits it (best fit, so whole devices stay free). The allocator counts
// milli-GPUs per device so shares never over-commit a device.
//
// GpuHook exports CUDA_VISIBLE_DEVICES, the task's devices comma-separated, each by the name
// CUDA knows it by: a MIG instance by its UUID ("MIG-…"), a whole GPU by its NVML index (its
// CDI name, when NVML found it), else by its slot. On a host with GPUs, a task that asked for
// none gets CUDA_VISIBLE_DEVICES="" so it does not grab a device by accident (the device cgroup
// fences the rest: devices/gpu_fence.h).
//
// Thread-safety: runtime thread only.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/base/agent_config.h"
#include "agent/base/task_hook.h"

namespace paceline::agent {

class GpuAllocator {
 public:
  explicit GpuAllocator(const std::vector<GpuDevice>& devices);

  // Picks devices for `milli` milli-GPUs; ResourceExhausted when they are not free.
  absl::StatusOr<std::vector<int>> Allocate(int64_t milli);
  // Marks given devices used by a task of `milli` milli-GPUs (master-chosen, or recovered).
  absl::Status Reserve(const std::vector<int>& devices, int64_t milli);
  void Release(const std::vector<int>& devices, int64_t milli);

  bool empty() const { return used_.empty(); }
  int64_t used_milli(int device) const;
  // The device in slot `index`; null when there is none.
  const GpuDevice* device(int index) const;

 private:
  // milli-GPUs that `milli` puts on each of `n` devices.
  static int64_t PerDevice(int64_t milli, size_t n);
  std::map<int, int64_t> used_;  // device index -> milli-GPUs in use
  std::vector<GpuDevice> devices_;
};

class GpuHook final : public TaskHook {
 public:
  explicit GpuHook(GpuAllocator& gpus) : gpus_(gpus) {}
  absl::string_view name() const override { return "gpu"; }
  absl::Status Prepare(RunContext& ctx) override;
  absl::Status Recover(RunContext& ctx) override;
  void Cleanup(RunContext& ctx, CleanupKind kind) override;

 private:
  GpuAllocator& gpus_;
};

}  // namespace paceline::agent
