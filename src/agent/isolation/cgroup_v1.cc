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

#include "absl/container/flat_hash_map.h"
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
    while (!released_.empty()) {
      Released c = std::move(released_.back());
      released_.pop_back();
      if (Reuse(c, name, limits).ok()) {
        ++reused_since_trim_;
        live_[name] = limits;
        return absl::OkStatus();
      }
      Remove(c.name).IgnoreError();  // what is left of it, under either name
      Remove(name).IgnoreError();
    }
    for (const Hierarchy& h : hierarchies_) {
      std::string d = absl::StrCat(h.dir, "/", name);
      if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) {
        return ErrnoStatus(errno, absl::StrCat("mkdir ", d));
      }
      // A new cgroup starts with the kernel defaults (no limits, 1024 shares, no quota): only
      // what differs is written, which keeps a launch cheap.
      RETURN_IF_ERROR(ApplyLimits(h, d, CgroupLimits{}, limits));
    }
    live_[name] = limits;
    return absl::OkStatus();
  }

  // A finished run's cgroup is renamed "released.<n>" and kept for the next Create, which
  // renames it again and rewrites only the limits that differ: on cgroup v1 the mkdir and rmdir
  // in every hierarchy, and the kernel's work to free a cgroup, are a large part of what
  // isolation costs a short task. Kept only when it is empty, counted no OOM kill (the counter
  // cannot be reset) and holds at most kMaxReleasedCharge (kernel objects; page cache left
  // behind would count against the next task). Anything else is removed.
  absl::Status Release(const std::string& name) override {
    auto it = live_.find(name);
    if (it == live_.end() || released_.size() >= kMaxReleased || !Reusable(name)) {
      return Remove(name);
    }
    Released c{absl::StrCat("released.", next_released_++), it->second};
    live_.erase(it);
    if (!RenameEverywhere(name, c.name).ok()) {
      Remove(c.name).IgnoreError();
      return Remove(name);
    }
    released_.push_back(std::move(c));
    return absl::OkStatus();
  }

  void TrimReleased() override {
    size_t unused =
        released_.size() > reused_since_trim_ ? released_.size() - reused_since_trim_ : 0;
    for (size_t i = 0; i < unused; ++i) Remove(released_[i].name).IgnoreError();  // the oldest
    released_.erase(released_.begin(), released_.begin() + static_cast<ptrdiff_t>(unused));
    reused_since_trim_ = 0;
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
    live_.erase(name);
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
    for (const Released& c : released_) Remove(c.name).IgnoreError();
    released_.clear();
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
  struct Released {
    std::string name;     // "released.<n>"
    CgroupLimits limits;  // what its control files hold
  };
  static constexpr size_t kMaxReleased = 1024;
  static constexpr int64_t kMaxReleasedCharge = 4 << 20;

  // Writes the limits of `to` that differ from `from` (what the cgroup holds now).
  absl::Status ApplyLimits(const Hierarchy& h, const std::string& d, const CgroupLimits& from,
                           const CgroupLimits& to) {
    if (h.Has("memory") && to.memory_bytes != from.memory_bytes) {
      RETURN_IF_ERROR(SetMemoryLimit(d, from.memory_bytes, to.memory_bytes));
    }
    if (h.Has("cpu")) {
      int64_t shares = cgroup_internal::CpuSharesV1(to.cpu_milli);
      if (shares != cgroup_internal::CpuSharesV1(from.cpu_milli)) {
        RETURN_IF_ERROR(WriteExisting(absl::StrCat(d, "/cpu.shares"), absl::StrCat(shares)));
      }
      if (int64_t quota = QuotaUsec(to); quota != QuotaUsec(from)) {
        RETURN_IF_ERROR(WriteExisting(absl::StrCat(d, "/cpu.cfs_quota_us"), absl::StrCat(quota)));
      }
    }
    if (h.Has("pids") && to.pids_max != from.pids_max) {
      RETURN_IF_ERROR(WriteExisting(absl::StrCat(d, "/pids.max"),
                                    to.pids_max > 0 ? absl::StrCat(to.pids_max) : "max"));
    }
    return absl::OkStatus();
  }
  static int64_t QuotaUsec(const CgroupLimits& l) {
    return l.cpu_hard_limit && l.cpu_milli > 0 ? cgroup_internal::CpuQuotaUsec(l.cpu_milli) : -1;
  }
  // memory.limit_in_bytes, and memory+swap = memory (no swapping past the limit; the knob is
  // absent without swap accounting). memsw may never be below memory, so a raised limit goes to
  // memsw first and a lowered one last. 0 = unlimited (-1 to the kernel).
  absl::Status SetMemoryLimit(const std::string& d, int64_t from, int64_t to) {
    std::string limit = to > 0 ? absl::StrCat(to) : "-1";
    bool raise = to <= 0 || (from > 0 && to > from);
    auto memsw = [&] {
      if (!swap_accounting_) return;
      swap_accounting_ = WriteExisting(absl::StrCat(d, "/memory.memsw.limit_in_bytes"), limit).ok();
    };
    if (raise) memsw();
    RETURN_IF_ERROR(WriteExisting(absl::StrCat(d, "/memory.limit_in_bytes"), limit));
    if (!raise) memsw();
    return absl::OkStatus();
  }

  // Renames the released cgroup `c` to `name`, sets its limits and zeroes its CPU counter.
  absl::Status Reuse(const Released& c, const std::string& name, const CgroupLimits& limits) {
    RETURN_IF_ERROR(RenameEverywhere(c.name, name));
    for (const Hierarchy& h : hierarchies_) {
      std::string d = absl::StrCat(h.dir, "/", name);
      RETURN_IF_ERROR(ApplyLimits(h, d, c.limits, limits));
      if (h.Has("cpuacct")) {
        RETURN_IF_ERROR(WriteExisting(absl::StrCat(d, "/cpuacct.usage"), "0"));
      }
    }
    return absl::OkStatus();
  }
  bool Reusable(const std::string& name) const {
    absl::StatusOr<std::vector<pid_t>> pids = Pids(name);
    if (!pids.ok() || !pids->empty()) return false;
    std::string d = absl::StrCat(hierarchies_.front().dir, "/", name);
    absl::StatusOr<std::string> oc = ReadFile(absl::StrCat(d, "/memory.oom_control"));
    if (!oc.ok() || KeyedValue(*oc, "oom_kill", -1) != 0) return false;
    absl::StatusOr<std::string> usage = ReadFile(absl::StrCat(d, "/memory.usage_in_bytes"));
    return usage.ok() &&
           KeyedValue(absl::StrCat("v ", *usage), "v", INT64_MAX) <= kMaxReleasedCharge;
  }
  absl::Status RenameEverywhere(const std::string& from, const std::string& to) {
    for (const Hierarchy& h : hierarchies_) {
      std::string a = absl::StrCat(h.dir, "/", from);
      std::string b = absl::StrCat(h.dir, "/", to);
      if (::rename(a.c_str(), b.c_str()) != 0) {
        return ErrnoStatus(errno, absl::StrCat("rename ", a, " to ", to));
      }
    }
    return absl::OkStatus();
  }

  std::vector<Hierarchy> hierarchies_;                   // the memory hierarchy first
  bool swap_accounting_ = true;                          // memory.memsw.* exists
  absl::flat_hash_map<std::string, CgroupLimits> live_;  // the task cgroups Create made
  std::vector<Released> released_;                       // oldest first
  uint64_t next_released_ = 0;
  size_t reused_since_trim_ = 0;
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
