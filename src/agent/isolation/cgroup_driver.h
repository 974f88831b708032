#pragma once
// CgroupDriver: per-task cgroups behind one interface, for cgroup v2 (unified), v1 (memory, cpu,
// cpuacct, pids hierarchies) or none (no writable hierarchy: tasks run without isolation and
// HostInfo says so). Chosen once at agent start by CreateCgroupDriver().
//
// Layout (v2; v1 repeats it under each controller's mount):
//   <cgroup_root>/<cgroup_parent>/paceline.<agent name>/        controllers enabled, no process
//   <cgroup_root>/<cgroup_parent>/paceline.<agent name>/supervisors/   task wrappers (v2 only)
//   <cgroup_root>/<cgroup_parent>/paceline.<agent name>/<run key>/     one task (leaf; v2)
//   <cgroup_root>/<controller>/<cgroup_parent>/paceline.<agent name>/task.<n>/   one task (v1)
// A run's cgroup name is in its checkpoint record (RunContext::cgroup).
// cgroup v2's "no internal processes" rule: we write subtree_control only in the parent (the
// top of the hierarchy by default, which is exempt) and in paceline.<name>, which never holds a
// process; the agent process itself never moves.
//
// Limits: memory.max / memory.limit_in_bytes = the memory request (swap off where the knob
// exists); cpu.weight / cpu.shares from the cpu request; cpu.max / cfs quota = the cpu request
// when cpu_hard_limit; pids.max; the device nodes the task may not open (v1: devices.deny; v2:
// a device program, device_bpf.h).
//
// Thread-safety: not thread-safe; owned and used by the runtime's thread.

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/base/agent_config.h"
#include "agent/devices/gpu_fence.h"

namespace paceline::agent {

enum class CgroupMode : uint8_t { kNone, kV1, kV2 };
absl::string_view CgroupModeName(CgroupMode m);  // "none", "v1", "v2"

struct CgroupLimits {
  int64_t memory_bytes = 0;  // 0 = unlimited
  int64_t cpu_milli = 0;     // 0 = default weight, no quota
  bool cpu_hard_limit = true;
  int64_t pids_max = 0;  // 0 = unlimited
  // Device nodes the task may not open (GPUs it does not hold, devices/gpu_fence.h); every
  // other device as without it. cgroup v1: devices.deny, where the devices hierarchy is
  // mounted and writable; v2: a device program attached to the cgroup (device_bpf.h).
  std::vector<DeviceRule> deny_devices;
};

struct CgroupStats {
  int64_t cpu_usec = 0;  // cumulative CPU time of the cgroup
  // Current usage: the working set (usage minus the inactive file cache, which the kernel
  // reclaims first), as the memory limit sees it under pressure.
  int64_t memory_bytes = 0;
  uint64_t oom_kills = 0;  // processes killed by the OOM killer in this cgroup
};

class CgroupDriver {
 public:
  virtual ~CgroupDriver() = default;
  virtual CgroupMode mode() const = 0;
  // For logs and `host list`: "cgroup v2 at /sys/fs/cgroup/paceline.a (cpu memory pids)" or
  // "none: <why isolation is not possible>".
  virtual std::string Describe() const = 0;
  // The agent's own cgroup directory (paceline.<name>; v1: the memory hierarchy's), which the
  // agent locks while it runs; "" when there is none.
  virtual std::string AgentDir() const { return ""; }

  // Creates a task cgroup for the run `name` with the limits and returns the cgroup's name, which
  // every other call takes: `name` itself (cgroup v2; reused when it exists), or a name of the
  // driver's own ("task.<n>", cgroup v1), possibly a finished run's cgroup kept for reuse.
  // On error nothing of it is left.
  virtual absl::StatusOr<std::string> Create(const std::string& name,
                                             const CgroupLimits& limits) = 0;
  // The cgroup.procs files a process writes its pid into to join the task cgroup.
  virtual std::vector<std::string> ProcsFiles(const std::string& name) const = 0;
  // The cgroup.procs files task wrappers join (may be empty).
  virtual std::vector<std::string> SupervisorProcsFiles() const = 0;
  // Processes in the task cgroup.
  virtual absl::StatusOr<std::vector<pid_t>> Pids(const std::string& name) const = 0;
  // SIGKILLs every process in the task cgroup (cgroup.kill where available).
  virtual void KillAll(const std::string& name) = 0;
  virtual absl::StatusOr<CgroupStats> Stats(const std::string& name) const = 0;
  // Processes of the task cgroup killed by the OOM killer (the cheap part of Stats()).
  virtual absl::StatusOr<uint64_t> OomKills(const std::string& name) const = 0;
  // Removes the task cgroup: OK when gone, Unavailable while processes remain.
  virtual absl::Status Remove(const std::string& name) = 0;
  // The task cgroup's run is over and it is empty: the driver may keep it for a later Create
  // (cgroup v1 does: see cgroup_v1_driver.cc) instead of removing it. Default: Remove.
  virtual absl::Status Release(const std::string& name) { return Remove(name); }
  // Removes the kept cgroups that no Create took since the previous call (every minute).
  virtual void TrimReleased() {}
  // Names of the task cgroups that exist now (leftovers are cleaned up at recovery).
  virtual std::vector<std::string> List() const = 0;
  // Removes the agent's own cgroups (paceline.<name> and its supervisors/) where nothing is
  // left in them — no task cgroup, no process; leaves busy ones alone. For a clean agent exit.
  virtual void RemoveAgentCgroupsIfEmpty() {}
};

// A driver that isolates nothing; Describe() returns "none: <reason>".
std::unique_ptr<CgroupDriver> MakeNullCgroupDriver(std::string reason);
// Detects the cgroup version under config.cgroup_root (v2 when cgroup.controllers exists,
// else v1 controller directories), sets up the agent's cgroup, and falls back to the null
// driver (with the reason) when nothing is writable. Errors only when the config forces a
// version that cannot be used.
absl::StatusOr<std::unique_ptr<CgroupDriver>> CreateCgroupDriver(const AgentConfig& config);

// Factories used by CreateCgroupDriver and by tests on a fake cgroupfs tree.
absl::StatusOr<std::unique_ptr<CgroupDriver>> CreateCgroupV2Driver(const AgentConfig& config);
absl::StatusOr<std::unique_ptr<CgroupDriver>> CreateCgroupV1Driver(const AgentConfig& config);

// Helpers shared by the drivers.
namespace cgroup_internal {
// Parses a cgroup.procs listing.
std::vector<pid_t> ParsePids(absl::string_view text);
// The value of `key` in a "key value" per line file (cpu.stat, memory.events, oom_control).
int64_t KeyedValue(absl::string_view text, absl::string_view key, int64_t fallback);
// cpu.weight (1..10000, 100 per core) and cpu.shares (2.., 1024 per core) for a request.
int64_t CpuWeightV2(int64_t cpu_milli);
int64_t CpuSharesV1(int64_t cpu_milli);
inline constexpr int64_t kCpuPeriodUsec = 100000;
// The quota for a request over kCpuPeriodUsec (at least 1 ms).
int64_t CpuQuotaUsec(int64_t cpu_milli);
}  // namespace cgroup_internal

}  // namespace paceline::agent
