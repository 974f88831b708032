// cgroup v1 driver: the memory, cpu, cpuacct and pids controllers, and devices where its
// hierarchy is writable, each on its own mount (or co-mounted, e.g. "cpu,cpuacct"); the task
// cgroup is created in every hierarchy and the task joins all of them. See cgroup_driver.h for
// the layout.

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
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
  // Numbers new cgroups after the highest "task.<n>" there is (a restarted agent's runs keep
  // theirs).
  explicit CgroupV1Driver(std::vector<Hierarchy> h) : hierarchies_(std::move(h)), next_(0) {
    for (const std::string& n : List()) {
      uint64_t k = 0;
      if (absl::StartsWith(n, kPrefix) && absl::SimpleAtoi(n.substr(std::strlen(kPrefix)), &k)) {
        next_ = std::max(next_, k + 1);
      }
    }
  }

  CgroupMode mode() const override { return CgroupMode::kV1; }
  std::string Describe() const override {
    std::vector<std::string> parts;
    for (const Hierarchy& h : hierarchies_) {
      parts.push_back(absl::StrCat(h.dir, " (", absl::StrJoin(h.controllers, ","), ")"));
    }
    return absl::StrCat("cgroup v1 at ", absl::StrJoin(parts, ", "));
  }
  std::string AgentDir() const override { return hierarchies_.front().dir; }  // memory's

  // A task cgroup is named "task.<n>", not after its run: a finished run's cgroup is kept and
  // serves a later run under the same name, with only the limits that differ rewritten. On
  // cgroup v1 the mkdir and rmdir in every hierarchy, and the kernel's work to free a cgroup, are
  // a large part of what isolation costs a short task; so would be renaming it (four renames
  // when it is released and four when it is taken, each a lookup in a directory of thousands).
  absl::StatusOr<std::string> Create(const std::string& /*run*/,
                                     const CgroupLimits& limits) override {
    while (!released_.empty()) {
      Released c = std::move(released_.back());
      released_.pop_back();
      if (Reuse(c, limits).ok()) {
        ++reused_since_trim_;
        live_[c.name] = Live{limits};
        return c.name;
      }
      Remove(c.name).IgnoreError();
    }
    std::string name = absl::StrCat(kPrefix, next_++);
    for (const Hierarchy& h : hierarchies_) {
      std::string d = absl::StrCat(h.dir, "/", name);
      absl::Status s = absl::OkStatus();
      if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) {
        s = ErrnoStatus(errno, absl::StrCat("mkdir ", d));
      } else {
        // A new cgroup starts with the kernel defaults (no limits, 1024 shares, no quota): only
        // what differs is written, which keeps a launch cheap.
        s = ApplyLimits(h, d, CgroupLimits{}, limits);
      }
      if (!s.ok()) {
        Remove(name).IgnoreError();
        return s;
      }
    }
    live_[name] = Live{limits};
    return name;
  }

  // A finished run's cgroup is kept for the next Create only when it is empty, counted no OOM
  // kill (the counter cannot be reset) and holds at most kMaxReleasedCharge (kernel objects;
  // page cache left behind would count against the next task). Anything else is removed.
  absl::Status Release(const std::string& name) override {
    auto it = live_.find(name);
    if (it == live_.end() || released_.size() >= kMaxReleased || !Reusable(it->second, name)) {
      return Remove(name);
    }
    released_.push_back(Released{name, it->second.limits});
    live_.erase(it);
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
    std::vector<pid_t> pids = ParsePids(*text);
    if (auto it = live_.find(name); it != live_.end()) it->second.emptied = pids.empty();
    return pids;
  }

  absl::StatusOr<uint64_t> OomKills(const std::string& name) const override {
    for (const Hierarchy& h : hierarchies_) {
      if (!h.Has("memory")) continue;
      std::string d = absl::StrCat(h.dir, "/", name);
      ASSIGN_OR_RETURN(int64_t kills, OomKillCounter(d));
      if (kills < 0) return FailedChargeHint(d);
      if (auto it = live_.find(name); it != live_.end()) it->second.oom_kills = kills;
      return static_cast<uint64_t>(kills);
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
        if (absl::StatusOr<int64_t> kills = OomKillCounter(d); kills.ok()) {
          s.oom_kills = *kills >= 0 ? static_cast<uint64_t>(*kills) : FailedChargeHint(d);
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
    std::string name;     // "task.<n>"
    CgroupLimits limits;  // what its control files hold
  };
  // A task cgroup Create made. What Pids and OomKills saw last is kept with it (so live_ is
  // mutable): an empty cgroup stays empty (no process is left to fork, and only the run's own
  // task joins it), so Release need not read again what the run's end just read.
  struct Live {
    CgroupLimits limits;
    bool emptied = false;    // the last Pids() found no process
    int64_t oom_kills = -1;  // the last OomKills() counter (-1: not read)
  };
  static constexpr const char* kPrefix = "task.";
  static constexpr size_t kMaxReleased = 4096;
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
    if (h.Has("devices") && to.deny_devices != from.deny_devices) {
      // Denials are only added: taking one back would write devices.allow, which a parent
      // that allows less (a container's devices cgroup) refuses. A kept cgroup that denies
      // something else is not reused (Create makes a new one).
      if (!from.deny_devices.empty()) {
        return absl::FailedPreconditionError(absl::StrCat(d, " denies other devices"));
      }
      for (const DeviceRule& r : to.deny_devices) {
        RETURN_IF_ERROR(WriteExisting(
            absl::StrCat(d, "/devices.deny"),
            absl::StrCat(std::string(1, r.type), " ", r.major, ":", r.minor, " rwm")));
      }
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

  // Sets a kept cgroup's limits for its next run and zeroes its CPU counter.
  absl::Status Reuse(const Released& c, const CgroupLimits& limits) {
    for (const Hierarchy& h : hierarchies_) {
      std::string d = absl::StrCat(h.dir, "/", c.name);
      RETURN_IF_ERROR(ApplyLimits(h, d, c.limits, limits));
      if (h.Has("cpuacct")) {
        RETURN_IF_ERROR(WriteExisting(absl::StrCat(d, "/cpuacct.usage"), "0"));
      }
    }
    return absl::OkStatus();
  }
  // The memory cgroup `d`'s "oom_kill" counter; -1 when the kernel has none (before 4.13).
  static absl::StatusOr<int64_t> OomKillCounter(const std::string& d) {
    ASSIGN_OR_RETURN(std::string oc, ReadFile(absl::StrCat(d, "/memory.oom_control")));
    return KeyedValue(oc, "oom_kill", -1);
  }
  // Without the counter, a failed charge is the best hint of an OOM kill (1, else 0).
  static uint64_t FailedChargeHint(const std::string& d) {
    absl::StatusOr<std::string> fc = ReadFile(absl::StrCat(d, "/memory.failcnt"));
    return fc.ok() && KeyedValue(absl::StrCat("v ", *fc), "v", 0) > 0 ? 1u : 0u;
  }
  // What the run's end already read (Pids, OomKills) is not read again.
  bool Reusable(const Live& c, const std::string& name) const {
    if (!c.emptied) {
      absl::StatusOr<std::vector<pid_t>> pids = Pids(name);
      if (!pids.ok() || !pids->empty()) return false;
    }
    std::string d = absl::StrCat(hierarchies_.front().dir, "/", name);
    int64_t kills = c.oom_kills;
    if (kills < 0) {
      absl::StatusOr<int64_t> counter = OomKillCounter(d);
      if (!counter.ok()) return false;
      kills = *counter;  // -1 without a counter (Linux < 4.13): not kept
    }
    if (kills != 0) return false;
    absl::StatusOr<std::string> usage = ReadFile(absl::StrCat(d, "/memory.usage_in_bytes"));
    return usage.ok() &&
           KeyedValue(absl::StrCat("v ", *usage), "v", INT64_MAX) <= kMaxReleasedCharge;
  }
  std::vector<Hierarchy> hierarchies_;                   // the memory hierarchy first
  bool swap_accounting_ = true;                          // memory.memsw.* exists
  mutable absl::flat_hash_map<std::string, Live> live_;  // see Live
  std::vector<Released> released_;                       // oldest first
  uint64_t next_;                                        // the next new cgroup's number
  size_t reused_since_trim_ = 0;
};

}  // namespace

absl::StatusOr<std::unique_ptr<CgroupDriver>> CreateCgroupV1Driver(const AgentConfig& config) {
  // Each controller's mount: <root>/<controller> (co-mounted controllers resolve to one path).
  std::vector<std::pair<std::string, Hierarchy>> by_mount;  // real mount path -> hierarchy
  for (const char* c : {"memory", "cpu", "cpuacct", "pids", "devices"}) {
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
    // The devices hierarchy only fences GPUs: where it cannot be written (a container that
    // mounts it read-only), tasks run without it and Describe() does not list it.
    if (h.controllers == std::set<std::string>{"devices"} && !MakeDirs(h.dir, 0755).ok()) continue;
    RETURN_IF_ERROR(MakeDirs(h.dir, 0755));
    if (h.Has("memory")) {
      WriteExisting(absl::StrCat(h.dir, "/memory.use_hierarchy"), "1").IgnoreError();
    }
    hierarchies.push_back(std::move(h));
  }
  return std::unique_ptr<CgroupDriver>(new CgroupV1Driver(std::move(hierarchies)));
}

}  // namespace paceline::agent
