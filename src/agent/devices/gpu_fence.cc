// The device-cgroup rules that keep a task off the GPUs it does not hold (gpu_fence.h).

#include "agent/devices/gpu_fence.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace paceline::agent {
namespace {

void AddUnique(std::vector<DeviceRule>& rules, const DeviceRule& r) {
  if (std::find(rules.begin(), rules.end(), r) == rules.end()) rules.push_back(r);
}

// The nodes of device `d` that exist: its CDI device's own nodes, else /dev/nvidia<minor>.
std::vector<DeviceRule> NodesOf(const CdiRegistry& cdi, const GpuDevice& d,
                                const std::string& dev_dir) {
  std::vector<DeviceRule> nodes;
  auto add = [&](const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))) return;
    AddUnique(nodes,
              DeviceRule{S_ISCHR(st.st_mode) ? 'c' : 'b', major(st.st_rdev), minor(st.st_rdev)});
  };
  if (const CdiEdits* own = cdi.Device(kGpuCdiKind, d.CdiName())) {
    for (const CdiDeviceNode& n : own->device_nodes)
      add(n.host_path.empty() ? n.path : n.host_path);
  } else {
    add(absl::StrCat(dev_dir, "/nvidia", d.minor >= 0 ? d.minor : d.index));
  }
  return nodes;
}

}  // namespace

std::vector<DeviceRule> GpuDenyRules(const CdiRegistry& cdi,
                                     const std::vector<GpuDevice>& host_gpus,
                                     const std::vector<int>& held, const std::string& dev_dir) {
  auto is_held = [&](const GpuDevice& d) {
    return std::find(held.begin(), held.end(), d.index) != held.end();
  };
  std::vector<DeviceRule> needed;  // by the held devices
  for (const GpuDevice& d : host_gpus) {
    if (!is_held(d)) continue;
    for (const DeviceRule& r : NodesOf(cdi, d, dev_dir)) AddUnique(needed, r);
  }
  std::vector<DeviceRule> rules;
  for (const GpuDevice& d : host_gpus) {
    if (is_held(d)) continue;
    for (const DeviceRule& r : NodesOf(cdi, d, dev_dir)) {
      if (std::find(needed.begin(), needed.end(), r) == needed.end()) AddUnique(rules, r);
    }
  }
  return rules;
}

}  // namespace paceline::agent
