#pragma once
// GPU fencing by the device cgroup (docs/agent.md "GPUs"): a task may open only its own GPUs'
// device nodes. What it must not open are the nodes of the host's other GPUs — each GPU's
// own nodes as its CDI device names them (devices nvidia.com/gpu=INDEX, cdi.h; not the spec's
// global edits, which hold the control nodes every GPU task needs, such as /dev/nvidiactl),
// else /dev/nvidiaINDEX — and GpuDenyRules turns them into device-cgroup rules (type, major,
// minor) that the cgroup driver writes for the task (cgroup_driver.h). Nodes that do not
// exist are skipped. A task with no GPU is denied every GPU's nodes.
//
// Thread-safety: a pure function of the registry and the file system's nodes.

#include <cstdint>
#include <string>
#include <vector>

#include "agent/devices/cdi.h"

namespace paceline::agent {

struct DeviceRule {
  char type = 'c';  // 'c' or 'b'
  int64_t major = 0;
  int64_t minor = 0;
  friend bool operator==(const DeviceRule&, const DeviceRule&) = default;
};

// The rules that deny the device nodes of every GPU of `host_gpus` not in `held`; `dev_dir`
// is where /dev/nvidiaINDEX is looked for when no CDI device names the GPU.
std::vector<DeviceRule> GpuDenyRules(const CdiRegistry& cdi, const std::vector<int>& host_gpus,
                                     const std::vector<int>& held,
                                     const std::string& dev_dir = "/dev");

}  // namespace paceline::agent
