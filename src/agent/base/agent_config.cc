#include "agent/base/agent_config.h"

#include "absl/strings/str_cat.h"

namespace paceline::agent {

absl::Status ValidateConfig(const AgentConfig& c) {
  if (c.name.empty() || c.name.size() > 64) {
    return absl::InvalidArgumentError("agent name must be 1 to 64 characters");
  }
  for (char ch : c.name) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '-' || ch == '.';
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "agent name '", c.name, "' may only contain letters, digits, '_', '-' and '.'"));
    }
  }
  if (c.work_dir.empty() || c.work_dir[0] != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("work_dir must be an absolute path, got '", c.work_dir, "'"));
  }
  if (c.port_min == 0 || c.port_min > c.port_max) {
    return absl::InvalidArgumentError(
        absl::StrCat("port range [", c.port_min, ", ", c.port_max, "] is empty or starts at 0"));
  }
  if (c.reserved_cpu_milli < 0 || c.reserved_memory_bytes < 0 || c.reserved_disk_bytes < 0) {
    return absl::InvalidArgumentError("reserved resources must not be negative");
  }
  if (c.log_max_bytes < 2 * 4096) {
    return absl::InvalidArgumentError("log_max_bytes must be at least 8192");
  }
  if (c.pids_max < 0) return absl::InvalidArgumentError("pids_max must not be negative");
  if (c.cgroup_parent.find("..") != std::string::npos) {
    return absl::InvalidArgumentError("cgroup_parent must not contain '..'");
  }
  return absl::OkStatus();
}

}  // namespace paceline::agent
