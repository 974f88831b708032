// cgroup v2 driver: one unified hierarchy; see cgroup_driver.h for the layout.

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "agent/file_util.h"
#include "agent/isolation/cgroup_driver.h"
#include "agent/isolation/device_bpf.h"
#include "common/status.h"

namespace paceline::agent {
namespace {

using cgroup_internal::KeyedValue;
using cgroup_internal::ParsePids;

constexpr const char* kSupervisors = "supervisors";

class CgroupV2Driver final : public CgroupDriver {
 public:
  CgroupV2Driver(std::string dir, std::vector<std::string> controllers)
      : dir_(std::move(dir)), controllers_(std::move(controllers)) {}

  CgroupMode mode() const override { return CgroupMode::kV2; }
  std::string Describe() const override {
    return absl::StrCat("cgroup v2 at ", dir_, " (", absl::StrJoin(controllers_, " "), ")");
  }
  std::string AgentDir() const override { return dir_; }

  absl::StatusOr<std::string> Create(const std::string& name, const CgroupLimits& limits) override {
    absl::Status s = Apply(name, limits);
    if (!s.ok()) {
      Remove(name).IgnoreError();
      return s;
    }
    return name;
  }

  std::vector<std::string> ProcsFiles(const std::string& name) const override {
    return {absl::StrCat(Path(name), "/cgroup.procs")};
  }
  std::vector<std::string> SupervisorProcsFiles() const override {
    return {absl::StrCat(dir_, "/", kSupervisors, "/cgroup.procs")};
  }

  absl::StatusOr<std::vector<pid_t>> Pids(const std::string& name) const override {
    absl::StatusOr<std::string> text = ReadFile(absl::StrCat(Path(name), "/cgroup.procs"));
    if (!text.ok()) {
      if (absl::IsNotFound(text.status())) return std::vector<pid_t>{};
      return text.status();
    }
    return ParsePids(*text);
  }

  void KillAll(const std::string& name) override {
    if (WriteExisting(absl::StrCat(Path(name), "/cgroup.kill"), "1").ok()) return;
    absl::StatusOr<std::vector<pid_t>> pids = Pids(name);
    if (!pids.ok()) return;
    for (pid_t p : *pids) ::kill(p, SIGKILL);
  }

  absl::StatusOr<uint64_t> OomKills(const std::string& name) const override {
    absl::StatusOr<std::string> ev = ReadFile(absl::StrCat(Path(name), "/memory.events"));
    if (!ev.ok()) return ev.status();
    return static_cast<uint64_t>(KeyedValue(*ev, "oom_kill", 0));
  }

  absl::StatusOr<CgroupStats> Stats(const std::string& name) const override {
    std::string d = Path(name);
    CgroupStats s;
    if (absl::StatusOr<std::string> cpu = ReadFile(absl::StrCat(d, "/cpu.stat")); cpu.ok()) {
      s.cpu_usec = KeyedValue(*cpu, "usage_usec", 0);
    }
    absl::StatusOr<std::string> mem = ReadFile(absl::StrCat(d, "/memory.current"));
    if (!mem.ok()) return mem.status();
    s.memory_bytes = KeyedValue(absl::StrCat("v ", *mem), "v", 0);
    if (absl::StatusOr<std::string> st = ReadFile(absl::StrCat(d, "/memory.stat")); st.ok()) {
      s.memory_bytes = std::max<int64_t>(0, s.memory_bytes - KeyedValue(*st, "inactive_file", 0));
    }
    if (absl::StatusOr<std::string> ev = ReadFile(absl::StrCat(d, "/memory.events")); ev.ok()) {
      s.oom_kills = static_cast<uint64_t>(KeyedValue(*ev, "oom_kill", 0));
    }
    return s;
  }

  absl::Status Remove(const std::string& name) override {
    std::string d = Path(name);
    if (::rmdir(d.c_str()) == 0 || errno == ENOENT) return absl::OkStatus();
    if (errno == EBUSY) return absl::UnavailableError(absl::StrCat(d, " still has processes"));
    return ErrnoStatus(errno, absl::StrCat("rmdir ", d));
  }

  void RemoveAgentCgroupsIfEmpty() override {
    ::rmdir(absl::StrCat(dir_, "/", kSupervisors).c_str());  // EBUSY while wrappers live
    ::rmdir(dir_.c_str());                                   // EBUSY while task cgroups exist
  }

  std::vector<std::string> List() const override {
    std::vector<std::string> out;
    DIR* dir = ::opendir(dir_.c_str());
    if (dir == nullptr) return out;
    while (struct dirent* e = ::readdir(dir)) {
      std::string n = e->d_name;
      if (e->d_type == DT_DIR && n != "." && n != ".." && n != kSupervisors) out.push_back(n);
    }
    ::closedir(dir);
    return out;
  }

 private:
  // Makes the cgroup and writes the limits that differ from a new cgroup's defaults.
  absl::Status Apply(const std::string& name, const CgroupLimits& limits) {
    std::string d = Path(name);
    if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoStatus(errno, absl::StrCat("mkdir ", d));
    }
    // A new cgroup starts with the kernel defaults (no limits, weight 100): only what differs
    // is written, which keeps a launch cheap.
    if (Has("memory") && limits.memory_bytes > 0) {
      RETURN_IF_ERROR(
          WriteExisting(absl::StrCat(d, "/memory.max"), absl::StrCat(limits.memory_bytes)));
      // A task must not dodge its limit by swapping; absent when swap accounting is off.
      WriteExisting(absl::StrCat(d, "/memory.swap.max"), "0").IgnoreError();
    }
    if (Has("cpu")) {
      int64_t weight = cgroup_internal::CpuWeightV2(limits.cpu_milli);
      if (weight != 100) {
        RETURN_IF_ERROR(WriteExisting(absl::StrCat(d, "/cpu.weight"), absl::StrCat(weight)));
      }
      if (limits.cpu_hard_limit && limits.cpu_milli > 0) {
        RETURN_IF_ERROR(WriteExisting(absl::StrCat(d, "/cpu.max"),
                                      absl::StrCat(cgroup_internal::CpuQuotaUsec(limits.cpu_milli),
                                                   " ", cgroup_internal::kCpuPeriodUsec)));
      }
    }
    if (Has("pids") && limits.pids_max > 0) {
      RETURN_IF_ERROR(WriteExisting(absl::StrCat(d, "/pids.max"), absl::StrCat(limits.pids_max)));
    }
    // cgroup v2 has no devices.deny: the kernel asks a device program attached to the cgroup.
    if (!limits.deny_devices.empty()) {
      RETURN_IF_ERROR(AttachDeviceDenyProgram(d, limits.deny_devices));
    }
    return absl::OkStatus();
  }

  std::string Path(const std::string& name) const { return absl::StrCat(dir_, "/", name); }
  bool Has(absl::string_view c) const {
    for (const std::string& x : controllers_) {
      if (x == c) return true;
    }
    return false;
  }

  std::string dir_;
  std::vector<std::string> controllers_;
};

// Enables `wanted` controllers in dir/cgroup.subtree_control where not enabled yet.
absl::Status EnableControllers(const std::string& dir, const std::vector<std::string>& wanted) {
  absl::StatusOr<std::string> current = ReadFile(absl::StrCat(dir, "/cgroup.subtree_control"));
  if (!current.ok()) return current.status();
  std::vector<std::string> enabled =
      absl::StrSplit(*current, absl::ByAnyChar(" \n"), absl::SkipEmpty());
  std::string add;
  for (const std::string& c : wanted) {
    if (std::find(enabled.begin(), enabled.end(), c) == enabled.end()) {
      absl::StrAppend(&add, add.empty() ? "" : " ", "+", c);
    }
  }
  if (add.empty()) return absl::OkStatus();
  absl::Status s = WriteExisting(absl::StrCat(dir, "/cgroup.subtree_control"), add);
  if (absl::IsUnavailable(s) || absl::StrContains(s.message(), "busy")) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot enable ", add, " in ", dir,
        ": it holds processes (cgroup v2 'no internal processes' rule); set cgroup_parent to a "
        "cgroup without processes, or move the processes out"));
  }
  return s;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CgroupDriver>> CreateCgroupV2Driver(const AgentConfig& config) {
  std::string parent = config.cgroup_root;
  if (!config.cgroup_parent.empty()) absl::StrAppend(&parent, "/", config.cgroup_parent);
  absl::StatusOr<std::string> available = ReadFile(absl::StrCat(parent, "/cgroup.controllers"));
  if (!available.ok()) return available.status();
  std::vector<std::string> avail =
      absl::StrSplit(*available, absl::ByAnyChar(" \n"), absl::SkipEmpty());
  std::vector<std::string> controllers;
  for (const char* c : {"cpu", "memory", "pids"}) {
    if (std::find(avail.begin(), avail.end(), c) != avail.end()) controllers.push_back(c);
  }
  if (std::find(controllers.begin(), controllers.end(), "memory") == controllers.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the memory controller is not available in ", parent,
                     "/cgroup.controllers (it may be bound to a cgroup v1 hierarchy)"));
  }
  RETURN_IF_ERROR(EnableControllers(parent, controllers));
  std::string dir = absl::StrCat(parent, "/paceline.", config.name);
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, absl::StrCat("mkdir ", dir));
  }
  RETURN_IF_ERROR(EnableControllers(dir, controllers));
  std::string sup = absl::StrCat(dir, "/", kSupervisors);
  if (::mkdir(sup.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, absl::StrCat("mkdir ", sup));
  }
  return std::unique_ptr<CgroupDriver>(new CgroupV2Driver(dir, controllers));
}

}  // namespace paceline::agent
