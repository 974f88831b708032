#pragma once
// SupervisorPool: the task supervisors (paceline-task-wrapper --mode=supervise) that are free for
// a run. A supervisor runs one task at a time and, once the agent acknowledged the run's exit
// record, waits for the next run request (wrapper_protocol.h): so a short task costs no fork and
// no exit of a supervisor, no new control socket and no pidfd (docs/agent.md, "Performance").
//
//   Take()  a free supervisor (checked to be alive and idle), preferring one whose last run had
//           the same cgroup (it kept that cgroup's files open), else a new one from the spawner
//   Send()  its run request — only after the run's checkpoint names the supervisor
//   Give()  back after the run: kept while fewer than `max_free` are free, else let go
//   Trim()  lets go of the free ones no Take used since the previous Trim (the agent's GC)
// Letting a supervisor go closes its control socket: it exits, and is reaped by `reap`.
//
// Thread-safety: runtime thread only.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/file_util.h"
#include "agent/launch/wrapper_launcher.h"
#include "agent/launch/wrapper_spawner.h"

namespace paceline::agent {

struct Supervisor {
  pid_t pid = 0;
  uint64_t start_ticks = 0;  // its start time (/proc/PID/stat), its identity with the pid
  UniqueFd pidfd;            // readable when it exits
  UniqueFd control;          // the agent's end of its control socket (non-blocking)
  std::string cgroup;        // its last run's cgroup (CgroupDriver name; empty: none)
};

class SupervisorPool {
 public:
  SupervisorPool(WrapperSpawner& spawner, std::function<void(UniqueFd pidfd)> reap,
                 size_t max_free);
  ~SupervisorPool();  // lets every free supervisor go
  SupervisorPool(const SupervisorPool&) = delete;
  SupervisorPool& operator=(const SupervisorPool&) = delete;

  // `cgroup`: the cgroup of the run to come. A kept cgroup is usually taken again together with
  // the supervisor that ran in it (both are taken most recently freed first), and the
  // supervisor then joins it through the files it kept open; among the few most recently freed,
  // the one whose last run had `cgroup` is preferred.
  absl::StatusOr<Supervisor> Take(const std::string& cgroup = "");
  // Sends the run request for `args` (BuildWrapperArgv) and its environment. The supervisor
  // starts the task as soon as it reads it. Unavailable when the supervisor is gone.
  static absl::Status Send(const Supervisor& s, const WrapperArgs& args);
  void Give(Supervisor s);
  void LetGo(Supervisor s);
  void Trim();

  size_t free_count() const { return free_.size(); }
  size_t started() const { return started_; }  // supervisors Take had to start
  size_t reused() const { return reused_; }    // runs given to a free supervisor

 private:
  WrapperSpawner& spawner_;
  std::function<void(UniqueFd)> reap_;
  size_t max_free_;
  std::vector<Supervisor> free_;  // the most recently freed last
  size_t taken_since_trim_ = 0;
  size_t started_ = 0;
  size_t reused_ = 0;
};

}  // namespace paceline::agent
