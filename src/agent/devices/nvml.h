#pragma once
// GPU discovery and health through NVML (docs/agent.md "GPUs"). The NVIDIA Management Library,
// libnvidia-ml.so.1, is loaded at run time with dlopen, so the agent builds and runs on hosts
// without an NVIDIA driver; its few entry points are declared here (the NVML ABI is stable) and
// looked up with dlsym.
//
// Devices(): every GPU in NVML's order; a GPU in MIG mode is replaced by its MIG instances,
// each a device of its own with a model name of its own ("NVIDIA A100-SXM4-80GB MIG 1g.10gb"
// becomes "A100-1g.10gb": the GPU's family and the instance's profile), its UUID ("MIG-…", what
// CUDA_VISIBLE_DEVICES names it by) and its CDI name "GPU:MIG" (what `nvidia-ctk cdi generate`
// names it). Slots (GpuDevice::index) are numbered 0.. in that order.
//
// Health: WatchHealth registers for XID critical errors and double-bit ECC errors on each GPU;
// WaitForFaults turns the events into faults of the slots they touch (an XID of a MIG GPU names
// its GPU instance, or all of them). XIDs that an application causes rather than the hardware
// (kApplicationXids: 13, 31, 43, 45, 68, 109) are not faults, as in NVIDIA's Kubernetes device
// plugin. A device once unhealthy stays so until the agent restarts.
//
// GpuHealthWatch runs WaitForFaults (1 s at a time) on a thread of its own and keeps the first
// fault of each device; an NVML error is logged and retried a second later.
//
// Thread-safety: Nvml is used by one thread at a time (GpuHealthWatch's thread once it watches);
// GpuHealthWatch's accessors may be called from any thread.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/base/agent_config.h"

namespace paceline::agent {

// Where dlopen finds NVML by default (the driver installs it).
inline constexpr char kNvmlLibrary[] = "libnvidia-ml.so.1";
// XIDs caused by applications (bad memory access, a killed context...): not the device's fault.
inline constexpr int kApplicationXids[] = {13, 31, 43, 45, 68, 109};

// A device that is not healthy, and why.
struct GpuFault {
  int device = 0;      // its slot (GpuDevice::index)
  std::string reason;  // "XID 79: GPU has fallen off the bus", "double-bit ECC error"
  absl::Time since;
  friend bool operator==(const GpuFault&, const GpuFault&) = default;
};

class Nvml {
 public:
  // Loads `library` and initialises NVML. NotFound when the library cannot be loaded, or
  // nvmlInit_v2 finds no driver (NVML_ERROR_DRIVER_NOT_LOADED): the caller goes on without NVML.
  // A missing entry point is FailedPrecondition naming it; any other error names the NVML call
  // that failed and NVML's own message.
  static absl::StatusOr<std::unique_ptr<Nvml>> Open(const std::string& library = kNvmlLibrary);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  absl::StatusOr<std::vector<GpuDevice>> Devices();
  // Watches `devices` (from Devices()) for faults.
  absl::Status WatchHealth(const std::vector<GpuDevice>& devices);
  // Waits up to `timeout` for events; the faults they bring (empty when none came).
  absl::StatusOr<std::vector<GpuFault>> WaitForFaults(absl::Duration timeout);

 private:
  struct Api;
  explicit Nvml(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
};

// Watches for faults on a thread of its own until destroyed.
class GpuHealthWatch {
 public:
  // Starts watching; an error when NVML cannot watch these devices.
  static absl::StatusOr<std::unique_ptr<GpuHealthWatch>> Start(std::unique_ptr<Nvml> nvml,
                                                               std::vector<GpuDevice> devices);
  ~GpuHealthWatch();

  // The unhealthy devices (the first fault of each), by slot.
  std::vector<GpuFault> Faults() const;
  // Grows with every change of Faults(): a reader sends them again when it changed.
  uint64_t version() const { return version_.load(); }

 private:
  GpuHealthWatch(std::unique_ptr<Nvml> nvml, std::vector<GpuDevice> devices);
  void Loop();

  std::unique_ptr<Nvml> nvml_;
  std::vector<GpuDevice> devices_;
  mutable absl::Mutex mu_;
  std::vector<GpuFault> faults_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> version_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace paceline::agent
