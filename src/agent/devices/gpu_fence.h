#pragma once
// GPU fencing by the device cgroup (docs/agent.md "GPUs"): a task may open only its own GPUs'
// device nodes. What it must not open are the nodes of the host's other GPU devices — each
// device's own nodes as its CDI device names them (nvidia.com/gpu=NAME, cdi.h: NAME is the
// device's cdi_name, "0" or a MIG instance's "0:1", else its slot; never the spec's global
// edits, which hold the control nodes every GPU task needs, such as /dev/nvidiactl), else
// /dev/nvidia<minor> (the slot when the minor is unknown) — and GpuDenyRules turns them into
// device-cgroup rules (type, major, minor) that the cgroup driver writes for the task
// (cgroup_driver.h). A node that a held device also needs is never denied: the MIG instances of
// one GPU share its /dev/nvidiaN. Nodes that do not exist are skipped. A task with no GPU is
// denied every GPU's nodes.
//
// Thread-safety: a pure function of the registry and the file system's nodes.

#include <cstdint>
#include <string>
#include <vector>

#include "agent/base/agent_config.h"
#include "agent/devices/cdi.h"

namespace paceline::agent {

struct DeviceRule {
  char type = 'c';  // 'c' or 'b'
  int64_t major = 0;
  int64_t minor = 0;
  friend bool operator==(const DeviceRule&, const DeviceRule&) = default;
};

// The rules that deny the device nodes of every device of `host_gpus` whose slot is not in
// `held`, but those a held device needs too; `dev_dir` is where /dev/nvidiaN is looked for when
// no CDI device names the device.
std::vector<DeviceRule> GpuDenyRules(const CdiRegistry& cdi,
                                     const std::vector<GpuDevice>& host_gpus,
                                     const std::vector<int>& held,
                                     const std::string& dev_dir = "/dev");

}  // namespace paceline::agent
