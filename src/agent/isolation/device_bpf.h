#pragma once
// The device fence on cgroup v2 (docs/agent.md "GPUs"), where the kernel filters device
// access through a BPF_PROG_TYPE_CGROUP_DEVICE program attached to the cgroup instead of
// devices.allow/deny: AttachDeviceDenyProgram builds one that refuses the devices `deny` names
// (any access: read, write, mknod) and allows every other, loads it (bpf(2), no library) and
// attaches it to the cgroup directory, replacing the program attached there before. The
// program is a straight list of comparisons: per rule, the device type, major and minor; a
// match returns 0 (refused, EPERM to the task), the end returns 1.
//
// Needs CAP_SYS_ADMIN (or CAP_BPF) and a kernel with cgroup BPF; an error says which call
// failed. Thread-safety: a function of its arguments and the kernel.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "agent/devices/gpu_fence.h"

namespace paceline::agent {

absl::Status AttachDeviceDenyProgram(const std::string& cgroup_dir,
                                     const std::vector<DeviceRule>& deny);

}  // namespace paceline::agent
