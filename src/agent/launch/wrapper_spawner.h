#pragma once
// WrapperSpawner: starts supervisors (paceline-task-wrapper --mode=supervise, waiting for their
// first run request; see wrapper_protocol.h) for the SupervisorPool, through the wrapper zygote
// when it can (paceline-task-wrapper --mode=zygote, see task_wrapper_zygote.cc: a fork of a
// small, initialized process instead of an exec), and with posix_spawn otherwise (a zygote that
// is not available). The zygote is started lazily, restarted after a failure (at most once per
// second), and told to go away (EOF) when the spawner is destroyed; supervisors it started keep
// running either way.
//
// The result is the same either way: a supervisor in its own session, in the supervisors'
// cgroups, with the control socket as fd 3. A zygote-made one is not the agent's child (the
// kernel reaps it: the zygote ignores SIGCHLD); the runtime watches it through its pidfd like
// any other.
//
// Thread-safety: runtime thread only.

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/launch/wrapper_launcher.h"

namespace paceline::agent {

class WrapperSpawner {
 public:
  // `self_cgroups`: the cgroup.procs files the zygote (and so its wrappers) join.
  WrapperSpawner(std::string wrapper, std::vector<std::string> self_cgroups, bool use_zygote);
  ~WrapperSpawner();
  WrapperSpawner(const WrapperSpawner&) = delete;
  WrapperSpawner& operator=(const WrapperSpawner&) = delete;

  absl::StatusOr<SpawnedWrapper> Spawn();

  bool zygote_running() const { return zygote_.valid(); }
  size_t spawned_by_zygote() const { return by_zygote_; }

 private:
  absl::Status StartZygote();
  void StopZygote();
  absl::StatusOr<SpawnedWrapper> SpawnViaZygote();

  std::string wrapper_;
  std::vector<std::string> argv_;  // a supervisor's
  bool use_zygote_;
  pid_t zygote_pid_ = 0;
  UniqueFd zygote_;
  absl::Time retry_after_ = absl::InfinitePast();
  size_t by_zygote_ = 0;
};

}  // namespace paceline::agent
