// The device-cgroup rules that keep a task off the GPUs it does not hold (gpu_fence.h).

#include "agent/devices/gpu_fence.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace paceline::agent {

std::vector<DeviceRule> GpuDenyRules(const CdiRegistry& cdi, const std::vector<int>& host_gpus,
                                     const std::vector<int>& held, const std::string& dev_dir) {
  std::vector<DeviceRule> rules;
  auto deny = [&](const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))) return;
    DeviceRule r{S_ISCHR(st.st_mode) ? 'c' : 'b', major(st.st_rdev), minor(st.st_rdev)};
    if (std::find(rules.begin(), rules.end(), r) == rules.end()) rules.push_back(r);
  };
  for (int gpu : host_gpus) {
    if (std::find(held.begin(), held.end(), gpu) != held.end()) continue;
    if (const CdiEdits* own = cdi.Device(kGpuCdiKind, std::to_string(gpu))) {
      for (const CdiDeviceNode& n : own->device_nodes) {
        deny(n.host_path.empty() ? n.path : n.host_path);
      }
    } else {
      deny(absl::StrCat(dev_dir, "/nvidia", gpu));
    }
  }
  return rules;
}

}  // namespace paceline::agent
