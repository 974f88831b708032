#pragma once
// HostInfo: what this host offers, detected once at agent start and overridable by the config.
//
//   cpu     cores this process may run on (sched_getaffinity) x 1000
//   memory  MemTotal of /proc/meminfo
//   disk    size of the file system holding the work dir (statvfs)
//   gpus    the config's `gpus` when set; else NVML's devices (devices/nvml.h: whole GPUs and
//           MIG instances, with their UUIDs and CDI names) when the caller opened NVML; else
//           `nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader`, when the
//           tool is installed (parsed by ParseNvidiaSmiCsv)
// allocatable = total - reserved (config), never negative: what the master may place here.
//
// Thread-safety: value type; DetectHostInfo runs once on the caller's thread.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/base/agent_config.h"
#include "agent/devices/nvml.h"
#include "agent/isolation/cgroup_driver.h"
#include "common/resources.h"

namespace paceline::agent {

struct HostInfo {
  std::string agent_name;
  std::string hostname;
  Resources total;
  Resources reserved;
  Resources allocatable;
  std::vector<GpuDevice> gpus;
  uint16_t port_min = 0;
  uint16_t port_max = 0;
  std::map<std::string, std::string> labels;
  CgroupMode isolation = CgroupMode::kNone;
  std::string isolation_detail;  // CgroupDriver::Describe()
  bool switches_users = false;   // the agent runs as root and runs tasks as task users
};

// Parses nvidia-smi CSV lines "0, NVIDIA A100-SXM4-40GB, 40960 MiB"; skips blank lines.
absl::StatusOr<std::vector<GpuDevice>> ParseNvidiaSmiCsv(absl::string_view text);

// Detects the host and applies the config's overrides and reservations. `nvml`: NVML opened by
// the caller (null: none on this host, or not to be used); its errors name the NVML call.
absl::StatusOr<HostInfo> DetectHostInfo(const AgentConfig& config, const CgroupDriver& cgroups,
                                        Nvml* nvml = nullptr);

// Runs `argv` (no shell) and returns its stdout; DeadlineExceeded after `timeout`.
absl::StatusOr<std::string> RunAndCapture(const std::vector<std::string>& argv,
                                          absl::Duration timeout);

// The absolute path of `name` found in PATH (or `name` itself when it contains '/'); "" if none.
std::string FindInPath(const std::string& name);

}  // namespace paceline::agent
