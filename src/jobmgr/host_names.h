#pragma once
// HostNames: the job manager's table of host names — a task records its host as an index in it
// (TaskRuntime::host, ::volume_host, ::last_host) — and, per host, the tasks whose current run
// is there, so that a host's runs are found without scanning every task: a task is noted when a
// run is placed (or restored) there, and entries of tasks that moved on are dropped when the
// list is read or has doubled since it was last compacted (amortised O(1) per placement).
//
// Thread-safety: single-threaded (part of the JobManager).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/ids.h"
#include "jobmgr/job_table.h"

namespace paceline::jobmgr {

class HostNames {
 public:
  // `jobs`: where a noted task's current host is checked when a list is compacted.
  explicit HostNames(const JobTable& jobs) : jobs_(jobs) {}

  const std::string& Name(uint32_t index) const { return names_[index]; }
  // The index of `host`, added when new.
  uint32_t Intern(const std::string& host);
  // The index of `host`; nullopt when no task was ever there.
  std::optional<uint32_t> Find(const std::string& host) const;
  // The current run of `task` is on host `h`.
  void NoteOnHost(uint32_t h, TaskId task);
  // The tasks whose current run is on host `h` (compacts the list first).
  const std::vector<TaskId>& TasksOnHost(uint32_t h) const;

 private:
  void Compact(uint32_t h) const;

  const JobTable& jobs_;
  std::vector<std::string> names_;
  absl::flat_hash_map<std::string, uint32_t> index_;
  mutable std::vector<std::vector<TaskId>> on_host_;  // by host index
  mutable std::vector<uint32_t> on_host_compacted_;   // its size after the last compaction
};

}  // namespace paceline::jobmgr
