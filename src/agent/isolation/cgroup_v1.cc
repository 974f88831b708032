// cgroup v1 driver: the memory, cpu, cpuacct and pids controllers, each on its own mount (or
// co-mounted, e.g. "cpu,cpuacct"); the task cgroup is created in every hierarchy and the task
// joins all of them. See cgroup_driver.h for the layout.

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/file_util.h"
#include "agent/isolation/cgroup_driver.h"
#include "common/status.h"

namespace paceline::agent {
namespace {

using cgroup_internal::KeyedValue;
using cgroup_internal::ParsePids;

struct Hierarchy {
  std::string dir;  // the agent's cgroup in this hierarchy
  std::set<std::string> controllers;
  bool Has(const char* c) const { return controllers.count(c) > 0; }
};

class CgroupV1Driver final : public CgroupDriver {
 public:
  explicit CgroupV1Driver(std::vector<Hierarchy> h) : hierarchies_(std::move(h)) {}

  CgroupMode mode() const override { return CgroupMode::kV1; }
  std::string Describe() const override {
    std::vector<std::string> parts;
    for (const Hierarchy& h : hierarchies_) {
      parts.push_back(absl::StrCat(h.dir, " (", absl::StrJoin(h.controllers, ","), ")"));
    }
    return absl::StrCat("cgroup v1 at ", absl::StrJoin(parts, ", "));
  }

  absl::Status Create(const std::string& name, const CgroupLimits& limits) override {
    for (const Hierarchy& h : hierarchies_) {
      std::string d = absl::StrCat(h.dir, "/", name);
      if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) {
        return ErrnoStatus(errno, absl::StrCat("mkdir ", d));
      }
      // A new cgroup starts with the kernel defaults (no limits, 1024 shares, 100 ms period):
      // only what differs is written, which keeps a launch cheap.
      if (h.Has("memory") && limits.memory_bytes > 0) {
        std::string limit = absl::StrCat(limits.memory_bytes);
        RETURN_IF_ERROR(WriteExisting(absl::StrCat(d, "/memory.limit_in_bytes"), limit));
        // memory+swap = memory: no swapping past the limit (absent without swap accounting).
        if (swap_accounting_) {
          swap_accounting_ =
              WriteExisting(absl::StrCat(d, "/memory.memsw.limit_in_bytes"), limit).ok();
        }
      }
      if (h.Has("cpu")) {
        int64_t shares = cgroup_internal::CpuSharesV1(limits.cpu_milli);
        if (shares != 1024) {
          RETURN_IF_ERROR(WriteExisting(absl::StrCat(d, "/cpu.shares"), absl::StrCat(shares)));
        }
        if (limits.cpu_hard_limit && limits.cpu_milli > 0) {
          RETURN_IF_ERROR(
              WriteExisting(absl::StrCat(d, "/cpu.cfs_quota_us"),
                            absl::StrCat(cgroup_internal::CpuQuotaUsec(limits.cpu_milli))));
        }
      }
      if (h.Has("pids") && limits.pids_max > 0) {
        RETURN_IF_ERROR(WriteExisting(absl::StrCat(d, "/pids.max"), absl::StrCat(limits.pids_max)));
      }
    }
    return absl::OkStatus();
  }

  std::vector<std::string> ProcsFiles(const std::string& name) const override {
    std::vector<std::string> out;
    for (const Hierarchy& h : hierarchies_)
      out.push_back(absl::StrCat(h.dir, "/", name, "/cgroup.procs"));
    return out;
  }
  std::vector<std::string> SupervisorProcsFiles() const override { return {}; }

  // Every task process joins all hierarchies (and only root could move it out of one), so the
  // first hierarchy (memory) lists them all.
  absl::StatusOr<std::vector<pid_t>> Pids(const std::string& name) const override {
    absl::StatusOr<std::string> text =
        ReadFile(absl::StrCat(hierarchies_.front().dir, "/", name, "/cgroup.procs"));
    if (!text.ok()) {
      if (absl::IsNotFound(text.status())) return std::vector<pid_t>{};
      return text.status();
    }
    return ParsePids(*text);
  }

  absl::StatusOr<uint64_t> OomKills(const std::string& name) const override {
    for (const Hierarchy& h : hierarchies_) {
      if (!h.Has("memory")) continue;
      std::string d = absl::StrCat(h.dir, "/", name);
      absl::StatusOr<std::string> oc = ReadFile(absl::StrCat(d, "/memory.oom_control"));
      if (!oc.ok()) return oc.status();
      int64_t kills = KeyedValue(*oc, "oom_kill", -1);
      if (kills >= 0) return static_cast<uint64_t>(kills);
      // Before Linux 4.13 there is no counter: a failed charge is the best hint.
      absl::StatusOr<std::string> fc = ReadFile(absl::StrCat(d, "/memory.failcnt"));
      return fc.ok() && KeyedValue(absl::StrCat("v ", *fc), "v", 0) > 0 ? 1u : 0u;
    }
    return absl::NotFoundError("no memory hierarchy");
  }

  void KillAll(const std::string& name) override {
    absl::StatusOr<std::vector<pid_t>> pids = Pids(name);
    if (!pids.ok()) return;
    for (pid_t p : *pids) ::kill(p, SIGKILL);
  }

  absl::StatusOr<CgroupStats> Stats(const std::string& name) const override {
    CgroupStats s;
    bool any = false;
    for (const Hierarchy& h : hierarchies_) {
      std::string d = absl::StrCat(h.dir, "/", name);
      if (h.Has("cpuacct")) {
        if (absl::StatusOr<std::string> t = ReadFile(absl::StrCat(d, "/cpuacct.usage")); t.ok()) {
          s.cpu_usec = KeyedValue(absl::StrCat("v ", *t), "v", 0) / 1000;
          any = true;
        }
      }
      if (h.Has("memory")) {
        absl::StatusOr<std::string> t = ReadFile(absl::StrCat(d, "/memory.usage_in_bytes"));
        if (!t.ok()) return t.status();
        s.memory_bytes = KeyedValue(absl::StrCat("v ", *t), "v", 0);
        if (absl::StatusOr<std::string> st = ReadFile(absl::StrCat(d, "/memory.stat")); st.ok()) {
          s.memory_bytes =
              std::max<int64_t>(0, s.memory_bytes - KeyedValue(*st, "total_inactive_file", 0));
        }
        any = true;
        // "oom_kill N" (Linux >= 4.13); older kernels: any failed charge counts as a hint.
        if (absl::StatusOr<std::string> oc = ReadFile(absl::StrCat(d, "/memory.oom_control"));
            oc.ok()) {
          int64_t kills = KeyedValue(*oc, "oom_kill", -1);
          if (kills < 0) {
            absl::StatusOr<std::string> fc = ReadFile(absl::StrCat(d, "/memory.failcnt"));
            kills = fc.ok() && KeyedValue(absl::StrCat("v ", *fc), "v", 0) > 0 ? 1 : 0;
          }
          s.oom_kills = static_cast<uint64_t>(kills);
        }
      }
    }
    if (!any) return absl::NotFoundError(absl::StrCat("cgroup ", name, " not found"));
    return s;
  }

  absl::Status Remove(const std::string& name) override {
    absl::Status result = absl::OkStatus();
    for (const Hierarchy& h : hierarchies_) {
      std::string d = absl::StrCat(h.dir, "/", name);
      if (::rmdir(d.c_str()) == 0 || errno == ENOENT) continue;
      if (errno == EBUSY) {
        result = absl::UnavailableError(absl::StrCat(d, " still has processes"));
      } else {
        result = ErrnoStatus(errno, absl::StrCat("rmdir ", d));
      }
    }
    return result;
  }

  void RemoveAgentCgroupsIfEmpty() override {
    for (const Hierarchy& h : hierarchies_) ::rmdir(h.dir.c_str());  // EBUSY while in use
  }

  std::vector<std::string> List() const override {
    std::set<std::string> out;
    for (const Hierarchy& h : hierarchies_) {
      DIR* dir = ::opendir(h.dir.c_str());
      if (dir == nullptr) continue;
      while (struct dirent* e = ::readdir(dir)) {
        std::string n = e->d_name;
        if (e->d_type == DT_DIR && n != "." && n != "..") out.insert(n);
      }
      ::closedir(dir);
    }
    return std::vector<std::string>(out.begin(), out.end());
  }

 private:
  std::vector<Hierarchy> hierarchies_;  // the memory hierarchy first
  bool swap_accounting_ = true;         // memory.memsw.* exists
};

}  // namespace

absl::StatusOr<std::unique_ptr<CgroupDriver>> CreateCgroupV1Driver(const AgentConfig& config) {
  // Each controller's mount: <root>/<controller> (co-mounted controllers resolve to one path).
  std::vector<std::pair<std::string, Hierarchy>> by_mount;  // real mount path -> hierarchy
  for (const char* c : {"memory", "cpu", "cpuacct", "pids"}) {
    std::string mount = absl::StrCat(config.cgroup_root, "/", c);
    if (!PathExists(absl::StrCat(mount, "/cgroup.procs"))) continue;
    char real[PATH_MAX];
    std::string key = ::realpath(mount.c_str(), real) != nullptr ? std::string(real) : mount;
    auto it = std::find_if(by_mount.begin(), by_mount.end(),
                           [&](const auto& p) { return p.first == key; });
    if (it == by_mount.end()) {
      Hierarchy h;
      h.dir = mount;
      if (!config.cgroup_parent.empty()) absl::StrAppend(&h.dir, "/", config.cgroup_parent);
      absl::StrAppend(&h.dir, "/paceline.", config.name);
      by_mount.push_back({key, h});
      it = by_mount.end() - 1;
    }
    it->second.controllers.insert(c);
  }
  bool has_memory = false;
  for (const auto& [mount, h] : by_mount) has_memory |= h.Has("memory");
  if (!has_memory) {
    return absl::FailedPreconditionError(absl::StrCat("no cgroup v1 memory hierarchy under ",
                                                      config.cgroup_root, " (expected ",
                                                      config.cgroup_root, "/memory/cgroup.procs)"));
  }
  std::sort(by_mount.begin(), by_mount.end(), [](const auto& a, const auto& b) {
    return a.second.Has("memory") > b.second.Has("memory");
  });
  std::vector<Hierarchy> hierarchies;
  for (auto& [mount, h] : by_mount) {
    RETURN_IF_ERROR(MakeDirs(h.dir, 0755));
    if (h.Has("memory")) {
      WriteExisting(absl::StrCat(h.dir, "/memory.use_hierarchy"), "1").IgnoreError();
    }
    hierarchies.push_back(std::move(h));
  }
  return std::unique_ptr<CgroupDriver>(new CgroupV1Driver(std::move(hierarchies)));
}

}  // namespace paceline::agent
