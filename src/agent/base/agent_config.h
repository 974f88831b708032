#pragma once
// AgentConfig: everything the host agent's task runtime is configured with. Built by `main`
// (flags / config file) and passed to TaskRuntime::Create; never read from globals.
//
// Several agents may share one machine as long as each has its own `name`, `work_dir` and a
// disjoint port range: all state lives under the work dir and the cgroups are named after the
// agent ("paceline.<name>").
//
// Thread-safety: a value type.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace paceline::agent {

// One GPU device the host offers (from NVML, nvidia-smi or the configuration): a whole GPU, or
// one MIG instance of a GPU in MIG mode (devices/nvml.h). `index` is its slot: its position in
// HostInfo::gpus, the device number the master places tasks on.
struct GpuDevice {
  int index = 0;
  std::string model;  // e.g. "NVIDIA A100-SXM4-40GB"; a MIG instance's e.g. "A100-1g.10gb"
  int64_t memory_bytes = 0;
  // From NVML; empty / -1 when unknown (nvidia-smi, the configuration).
  std::string uuid;       // "GPU-…" or "MIG-…"; a MIG instance's is its CUDA_VISIBLE_DEVICES
  std::string cdi_name;   // its CDI device name (nvidia.com/gpu=NAME): "0", "0:1"; "" = index
  int minor = -1;         // /dev/nvidia<minor> of the (parent) GPU; -1 = index
  int parent = -1;        // a MIG instance: its GPU's NVML index; -1 = a whole GPU
  int gpu_instance = -1;  // a MIG instance: its GPU instance id (XID events name it)
  // The name its CDI spec gives it: cdi_name, else its index.
  std::string CdiName() const { return cdi_name.empty() ? std::to_string(index) : cdi_name; }
  friend bool operator==(const GpuDevice&, const GpuDevice&) = default;
};

enum class CgroupPreference { kAuto, kV1, kV2, kNone };

struct AgentConfig {
  // Names the agent's cgroups and appears in HostInfo; [A-Za-z0-9_.-]+.
  std::string name = "agent";
  // Root of all state: checkpoint, outbox, sandboxes, volumes. Created when missing. Its parents
  // must be traversable (o+x) by the task user when tasks run as another user.
  std::string work_dir;
  std::map<std::string, std::string> labels;

  // Detected capacity, overridden per dimension when set.
  std::optional<int64_t> cpu_milli;
  std::optional<int64_t> memory_bytes;
  std::optional<int64_t> disk_bytes;
  std::optional<std::vector<GpuDevice>> gpus;  // set = do not ask NVML or nvidia-smi
  // NVML, loaded with dlopen to discover the GPUs and watch their health (devices/nvml.h,
  // kNvmlLibrary); not loadable = no NVML; "" = do not use NVML.
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string nvidia_smi = "nvidia-smi";  // without NVML; looked up in PATH; absent = no GPUs
  // Kept for the system and never offered.
  int64_t reserved_cpu_milli = 0;
  int64_t reserved_memory_bytes = 0;
  int64_t reserved_disk_bytes = 0;

  // Dynamic ports are allocated from [port_min, port_max].
  uint16_t port_min = 31000;
  uint16_t port_max = 32999;

  // When the agent runs as root, tasks run as this user unless their spec names another.
  std::string task_user = "nobody";
  // Whether a spec may ask to run as root (uid 0).
  bool allow_root_tasks = false;

  CgroupPreference cgroup = CgroupPreference::kAuto;
  std::string cgroup_root = "/sys/fs/cgroup";  // where cgroupfs is mounted
  std::string cgroup_parent;                   // relative parent of the agent's cgroup; "" = top
  bool cpu_hard_limit = true;                  // cpu quota = the cpu request (else weight only)
  int64_t pids_max = 4096;                     // per task; 0 = unlimited

  // Per stream (stdout, stderr): the bytes kept on disk, across the current file and one
  // rotated ".1" file (each at most half of this).
  int64_t log_max_bytes = 64LL << 20;

  // The supervising wrapper executable; empty = "paceline-task-wrapper" beside the running
  // executable, then in PATH.
  std::string wrapper_path;
  // Start wrappers by forking a long-lived wrapper "zygote" instead of an exec per task (cheaper;
  // falls back to a direct spawn when the zygote is unavailable).
  bool wrapper_zygote = true;

  // How long finished runs' sandboxes are kept for `task logs`; zero = forever.
  absl::Duration sandbox_retention = absl::Hours(24 * 7);

  // Containers (docs/containers.md). The OCI runtime: "crun" is looked up in PATH; "" = this
  // host runs no containers (their launches fail saying so).
  std::string container_runtime = "crun";
  // Where the CDI specs of the host's devices are (devices/cdi.h), lowest priority first.
  std::vector<std::string> cdi_dirs = {"/etc/cdi", "/var/run/cdi"};
  // The image cache: its directory ("" = <work_dir>/images) and its size limit, beyond which
  // unpinned images are removed, least recently used first.
  std::string image_dir;
  int64_t image_cache_bytes = int64_t{20} << 30;
  // A PEM bundle the agent trusts for registries besides the system's CAs ("" = none).
  std::string registry_ca_file;
  // How long a registry may send nothing before a pull fails.
  absl::Duration registry_stall_timeout = absl::Seconds(30);
  // Host directories a container may mount (task.container.mounts source), by prefix.
  std::vector<std::string> container_host_paths;

  // What a task with an identity gets besides its token (launch/identity_hook.h): the masters'
  // gRPC addresses as this agent reaches them, and the cluster's CA (PEM; "" = plain text). Set
  // by the agent daemon from its own master address and CA.
  std::string master_addr;
  std::string master_ca_pem;

  // Added to every task's environment before the spec's env (e.g. PATH).
  std::map<std::string, std::string> base_env = {
      {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}};
};

// Checks names, ranges and paths; the message says which field to fix.
absl::Status ValidateConfig(const AgentConfig& config);

}  // namespace paceline::agent
